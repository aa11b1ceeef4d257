ALTER TABLE `registration_tokens` ADD `projects` text;--> statement-breakpoint
ALTER TABLE `runners` ADD `token_expires_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `runners` ADD `next_token_hash` text;--> statement-breakpoint
ALTER TABLE `runners` ADD `next_token_expires_at` integer;--> statement-breakpoint
ALTER TABLE `runners` ADD `projects` text;--> statement-breakpoint
CREATE UNIQUE INDEX `runners_next_token_hash_unique` ON `runners` (`next_token_hash`);--> statement-breakpoint
-- Hand-written: runners registered before tokens expired get the default 30 days from now, time to rotate.
UPDATE `runners` SET `token_expires_at` = (unixepoch() + 30 * 86400) * 1000;
