/**
 * The local forge with the demo's sample repository and issues, on its own:
 *   node demo/forge.ts --data /tmp/conveyor-demo/forge [--port 3000]
 * Prints `NAME=value` lines (URLs and the accounts' tokens); stops on SIGINT/SIGTERM. The data directory
 * keeps everything across restarts.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { startSampleForge } from "./sample-forge.ts";
import { REPO } from "./scenario.ts";

const args = z
  .object({ data: z.string().min(1), port: z.coerce.number().int().min(0).max(65_535) })
  .safeParse(
    parseArgs({ options: { data: { type: "string" }, port: { type: "string", default: "3000" } } }).values,
  );
if (!args.success) {
  console.error("usage: node demo/forge.ts --data <dir> [--port <n>]");
  process.exit(2);
}

const { forge, accounts } = await startSampleForge({ dataDir: args.data.data, port: args.data.port });
console.log(`FORGE_URL=${forge.url}`);
console.log(`FORGE_API=${forge.apiUrl}`);
console.log(`REPO=${REPO}`);
console.log(`CONVEYOR_FORGE_TOKEN=${accounts.conveyor.token}`);
console.log(`RUNNER_GIT_TOKEN=${accounts.runner.token}`);
console.log(`MAINTAINER_TOKEN=${accounts.maintainer.token}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void forge.close().then(() => process.exit(0));
  });
}
