ALTER TABLE `runners` ADD `pressure` text;--> statement-breakpoint
ALTER TABLE `runners` ADD `pressure_since` integer;