CREATE TABLE `ci_reruns` (
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`head_sha` text NOT NULL,
	`round` integer NOT NULL,
	`check_name` text NOT NULL,
	`cause` text,
	`result` text,
	`requested_at` integer NOT NULL,
	`settled_at` integer,
	PRIMARY KEY(`project_id`, `number`, `head_sha`, `round`, `check_name`)
);
--> statement-breakpoint
CREATE INDEX `ci_reruns_by_time` ON `ci_reruns` (`project_id`,`requested_at`);--> statement-breakpoint
ALTER TABLE `usage` ADD `source` text DEFAULT 'session' NOT NULL;