ALTER TABLE `runners` ADD `address` text;--> statement-breakpoint
ALTER TABLE `runners` ADD `superseded_token_hash` text;--> statement-breakpoint
ALTER TABLE `runners` ADD `superseded_at` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `superseded_seen_at` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `suspect_rotation` text;--> statement-breakpoint
CREATE UNIQUE INDEX `runners_superseded_token_hash_unique` ON `runners` (`superseded_token_hash`);