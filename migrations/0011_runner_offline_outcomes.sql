ALTER TABLE `runners` ADD `offline_at` integer;--> statement-breakpoint
CREATE INDEX `transitions_by_project_time` ON `transitions` (`project_id`,`at`,`outcome`,`from_state`,`to_state`,`event`,`number`);--> statement-breakpoint
CREATE INDEX `vault_items_by_time` ON `vault_items` (`created_at`);