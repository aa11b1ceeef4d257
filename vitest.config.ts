import { readdirSync, readFileSync } from "node:fs";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects in one `vitest run`: Worker code inside workerd, runner and pure code on Node.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  // workerd cannot read the file system: the shared webhook fixtures reach its tests as a binding.
  const fixtures = new URL("../shared/fixtures/webhooks/", import.meta.url);
  const webhookFixtures = Object.fromEntries(
    ["forgejo", "gitea", "github"].flatMap((forge) =>
      readdirSync(new URL(`${forge}/`, fixtures))
        .filter((file) => file.endsWith(".json"))
        .map((file) => [`${forge}/${file}`, readFileSync(new URL(`${forge}/${file}`, fixtures), "utf8")]),
    ),
  );
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  WEBHOOK_FIXTURES: webhookFixtures,
                  CONVEYOR_ADMIN_TOKEN: "test-admin-token",
                  CONVEYOR_SECRETS_KEY: "iTXhRXylyfEooJdlomoGr0kun+hzmNDYN/lst96dk+0=",
                },
              },
            }),
          ],
          test: {
            name: "worker",
            include: ["test/worker/**/*.test.ts"],
            setupFiles: ["test/worker/setup.ts"],
          },
        },
        {
          test: {
            name: "node",
            include: ["test/node/**/*.test.ts", "test/domain/**/*.test.ts"],
            environment: "node",
          },
        },
      ],
    },
  };
});
