CREATE TABLE `vault_items` (
	`project_id` text NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`requester` text NOT NULL,
	`title` text NOT NULL,
	`payload` text NOT NULL,
	`state` text NOT NULL,
	`verdict` text,
	`audit` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`project_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `vault_items_by_state` ON `vault_items` (`state`,`created_at`);