CREATE TABLE `critic_reports` (
	`id` text PRIMARY KEY NOT NULL,
	`project_id` text NOT NULL,
	`number` integer NOT NULL,
	`round` integer NOT NULL,
	`head_sha` text,
	`verdict` text NOT NULL,
	`summary` text NOT NULL,
	`findings` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `critic_reports_by_issue` ON `critic_reports` (`project_id`,`number`,`round`);--> statement-breakpoint
ALTER TABLE `issues` ADD `pr_number` integer;--> statement-breakpoint
CREATE INDEX `issues_by_head` ON `issues` (`project_id`,`head_sha`);--> statement-breakpoint
ALTER TABLE `usage` ADD `turns` integer DEFAULT 0 NOT NULL;