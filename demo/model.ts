/**
 * The Messages-API stand-in with the demo's script, on its own:
 *   node demo/model.ts [--port 3001]
 * Prints its URL (the runner's `anthropic.baseUrl`, the Worker's ANTHROPIC_BASE_URL); stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { startModelStandIn } from "../test/support/model/server.ts";
import { DEMO_SCRIPT } from "./model-script.ts";

const { values } = parseArgs({ options: { port: { type: "string", default: "0" } } });
const port = z.coerce.number().int().min(0).max(65_535).parse(values.port);

const model = await startModelStandIn({ script: DEMO_SCRIPT, port });
console.log(model.url);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void model.close().then(() => process.exit(0));
  });
}
