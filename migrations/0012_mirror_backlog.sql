ALTER TABLE `forge_issues` ADD `kind` text DEFAULT 'issue' NOT NULL;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `closes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `author` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `comments` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `created_at` integer;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `forge_updated_at` integer;--> statement-breakpoint
ALTER TABLE `forge_issues` ADD `closed_at` integer;--> statement-breakpoint
CREATE INDEX `forge_issues_by_activity` ON `forge_issues` (`project_id`,`state`,`kind`,`forge_updated_at`);