import type { D1Migration } from "cloudflare:test";
import type { Env as WorkerEnv } from "../../src/env.ts";

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      /** `<forge>/<file>.json` → the fixture's text, from test/fixtures/webhooks. */
      WEBHOOK_FIXTURES: Record<string, string>;
    }
  }
}
