import { applyD1Migrations, env } from "cloudflare:test";
import { captureLog } from "./support/log.ts";

// Storage is shared between test files in this plugin version; applying is idempotent.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
captureLog();
