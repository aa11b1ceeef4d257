CREATE TABLE `deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`content_key` text NOT NULL,
	`event` text NOT NULL,
	`number` integer,
	`outcome` text NOT NULL,
	`received_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_by_content` ON `deliveries` (`project_id`,`content_key`);--> statement-breakpoint
CREATE INDEX `deliveries_by_time` ON `deliveries` (`project_id`,`received_at`);--> statement-breakpoint
CREATE TABLE `issues` (
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`state` text NOT NULL,
	`iteration` integer NOT NULL,
	`branch` text,
	`session_id` text,
	`head_sha` text,
	`reason` text,
	`seq` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`project_id`, `number`)
);
--> statement-breakpoint
CREATE INDEX `issues_by_state` ON `issues` (`project_id`,`state`,`updated_at`);--> statement-breakpoint
CREATE INDEX `issues_by_update` ON `issues` (`state`,`updated_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`attempt` integer NOT NULL,
	`runner_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_by_status` ON `jobs` (`project_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_by_issue` ON `jobs` (`project_id`,`number`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`forge` text NOT NULL,
	`api_url` text NOT NULL,
	`repo` text NOT NULL,
	`default_branch` text DEFAULT 'main' NOT NULL,
	`settings` text NOT NULL,
	`secrets` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `transitions` (
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`seq` integer NOT NULL,
	`from_state` text NOT NULL,
	`to_state` text NOT NULL,
	`event` text NOT NULL,
	`event_id` text NOT NULL,
	`cause_kind` text NOT NULL,
	`cause_id` text NOT NULL,
	`outcome` text NOT NULL,
	`reason` text,
	`at` integer NOT NULL,
	PRIMARY KEY(`project_id`, `number`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `transitions_by_time` ON `transitions` (`at`);--> statement-breakpoint
CREATE TABLE `usage` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`iteration` integer NOT NULL,
	`session_id` text,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cache_read_tokens` integer NOT NULL,
	`cache_write_tokens` integer NOT NULL,
	`usd` real NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `usage_by_issue` ON `usage` (`project_id`,`number`,`iteration`);--> statement-breakpoint
CREATE INDEX `usage_by_day` ON `usage` (`project_id`,`at`);--> statement-breakpoint
CREATE TABLE `worker_sessions` (
	`session_id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`runner_id` text NOT NULL,
	`iteration` integer NOT NULL,
	`worktree` text,
	`branch` text,
	`started_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `worker_sessions_by_issue` ON `worker_sessions` (`project_id`,`number`);