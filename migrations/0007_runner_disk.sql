ALTER TABLE `runners` ADD `disk_bytes` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `worktrees` integer;