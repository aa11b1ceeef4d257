import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Two projects in one `vitest run`: Worker code inside workerd, runner and pure code on Node.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: { TEST_MIGRATIONS: migrations, CONVEYOR_ADMIN_TOKEN: "test-admin-token" },
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
