CREATE TABLE `forge_issues` (
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`state` text NOT NULL,
	`labels` text NOT NULL,
	`depends_on` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`project_id`, `number`)
);
--> statement-breakpoint
CREATE INDEX `forge_issues_by_state` ON `forge_issues` (`project_id`,`state`);--> statement-breakpoint
CREATE TABLE `issue_dependencies` (
	`project_id` text NOT NULL,
	`dependency` integer NOT NULL,
	`dependent` integer NOT NULL,
	PRIMARY KEY(`project_id`, `dependency`, `dependent`)
);
--> statement-breakpoint
CREATE TABLE `registration_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_by` text
);
--> statement-breakpoint
CREATE TABLE `runners` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`version` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `runners_token_hash_unique` ON `runners` (`token_hash`);--> statement-breakpoint
ALTER TABLE `projects` ADD `clone_url` text NOT NULL;