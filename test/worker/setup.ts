import { applyD1Migrations, env } from "cloudflare:test";

// Storage is shared between test files in this plugin version; applying is idempotent.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
