import { applyD1Migrations, env } from "cloudflare:test";
import { captureLog } from "./support/log.ts";

// The files a vitest worker runs share one workerd and its storage (vitest.config.ts): applying is idempotent.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
captureLog();
