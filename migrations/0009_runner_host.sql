ALTER TABLE `runners` ADD `disk_free_bytes` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `disk_total_bytes` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `mem_available_bytes` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `mem_total_bytes` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `load1` real;--> statement-breakpoint
ALTER TABLE `runners` ADD `cpus` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `host_at` integer;