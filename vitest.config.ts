import { readdirSync, readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects in one `vitest run`: Worker code inside workerd, runner and pure code on Node.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  // workerd cannot read the file system: the webhook fixtures (test/fixtures/webhooks) reach its tests as a binding.
  const fixtures = new URL("./test/fixtures/webhooks/", import.meta.url);
  const webhookFixtures = Object.fromEntries(
    ["forgejo", "gitea", "github"].flatMap((forge) =>
      readdirSync(new URL(`${forge}/`, fixtures))
        .filter((file) => file.endsWith(".json"))
        .map((file) => [`${forge}/${file}`, readFileSync(new URL(`${forge}/${file}`, fixtures), "utf8")]),
    ),
  );
  return {
    test: {
      // Most files wait on processes, sockets and timers rather than a core: two at once on CI's 2 cores.
      maxWorkers: 2,
      projects: [
        {
          plugins: [
            cloudflareTest(({ inject }) => ({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  // The critic talks to the Messages-API stand-in that test/worker/global-setup.ts starts.
                  ANTHROPIC_BASE_URL: inject("services").modelUrl,
                  ANTHROPIC_API_KEY: "test-key",
                  TEST_MIGRATIONS: migrations,
                  WEBHOOK_FIXTURES: webhookFixtures,
                  CONVEYOR_ADMIN_TOKEN: "test-admin-token",
                  CONVEYOR_SECRETS_KEY: "iTXhRXylyfEooJdlomoGr0kun+hzmNDYN/lst96dk+0=",
                  // The operator's alert channel: the control server keeps what it is sent.
                  ALERT_WEBHOOK_URL: `${inject("services").controlUrl}/alerts/hook`,
                  ALERT_EMAIL_FROM: "conveyor@example.com",
                  ALERT_EMAIL_TO: "ops@example.com",
                },
                // Email Routing's binding, as miniflare plays it: it refuses another sender or recipient.
                email: {
                  send_email: [
                    {
                      name: "ALERT_EMAIL",
                      destination_address: "ops@example.com",
                      allowed_sender_addresses: ["conveyor@example.com"],
                    },
                  ],
                },
              },
            })),
          ],
          test: {
            name: "worker",
            // Review-loop tests wait for real CI runs and the outbox's backoff.
            testTimeout: 30_000,
            globalSetup: ["test/worker/global-setup.ts"],
            // `npm run bench` adds the Worker-side benchmarks (test/bench/reconcile.ts sets CONVEYOR_BENCH).
            include: [
              "test/worker/**/*.test.ts",
              ...(process.env.CONVEYOR_BENCH ? ["test/worker/bench/*.bench-test.ts"] : []),
            ],
            setupFiles: ["test/worker/setup.ts"],
            // One workerd per vitest worker for all its files, not one per file (2 to 8 s each to start and load
            // the Worker's modules on these loaded cores). The files already share nothing by name: each makes
            // its own projects (freshProject), runners and keys, and looks only for its own in shared lists.
            isolate: false,
          },
        },
        {
          test: {
            name: "domain",
            // Pure functions and their tables: nothing global to leak from one file to the next, so the files
            // share a worker rather than each paying a fresh one's start.
            include: ["test/domain/**/*.test.ts"],
            // The property tests (test/domain/post) run thousands of inputs: the node project's limit, as before.
            testTimeout: 30_000,
            environment: "node",
            isolate: false,
          },
        },
        {
          test: {
            name: "node",
            // Many files start processes (the CLI, wrangler dev, git, the runner): under load one takes seconds.
            testTimeout: 30_000,
            include: ["test/node/**/*.test.ts"],
            // Kills what a file's harnesses left running, whatever step of a start failed (test/support/children.ts).
            setupFiles: ["test/node/setup.ts"],
            environment: "node",
            // The demo's tests read the local D1 file with node:sqlite, as npm run demo does with this flag.
            execArgv: ["--disable-warning=ExperimentalWarning"],
            // The one place the suite allows a root runner (this machine's tests run as root): the runners it
            // starts inherit it (runner/config.ts, `allowRoot`).
            env: {
              CONVEYOR_ALLOW_ROOT: "1",
              // This shared 2-core machine runs many test files at once: a load that would hold a build host's
              // runner back (runner/backpressure.ts) is the suite's normal here. Memory and disk stay checked.
              CONVEYOR_MAX_LOAD_PER_CPU: "0",
            },
          },
        },
      ],
    },
  };
});
