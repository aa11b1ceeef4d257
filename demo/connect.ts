/**
 * Connects a running Worker to the demo's forge, for driving the scenario step by step (demo/README.md):
 *   node demo/connect.ts --runner-dir /tmp/conveyor-demo/runner
 * Registers the project, creates its labels and webhook, writes `<runner-dir>/runner.json` with a fresh
 * registration token, and prints the backlog label's id. Flags fall back to the environment that
 * `node demo/forge.ts` prints (FORGE_API, CONVEYOR_FORGE_TOKEN, RUNNER_GIT_TOKEN).
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { connectProject, LABELS, registrationToken } from "./project.ts";
import { writeRunnerConfig } from "./runner-process.ts";
import { PEOPLE } from "./sample-forge.ts";
import { REPO } from "./scenario.ts";

const { values } = parseArgs({
  options: {
    worker: { type: "string", default: "http://127.0.0.1:8787" },
    "admin-token": { type: "string", default: process.env.CONVEYOR_ADMIN_TOKEN ?? "dev-admin-token" },
    "forge-api": { type: "string", default: process.env.FORGE_API },
    "forge-token": { type: "string", default: process.env.CONVEYOR_FORGE_TOKEN },
    "git-token": { type: "string", default: process.env.RUNNER_GIT_TOKEN },
    model: { type: "string", default: "http://127.0.0.1:3001" },
    "api-key": { type: "string", default: "sk-ant-demo-stand-in" },
    "runner-dir": { type: "string" },
  },
});
const parsed = z
  .object({
    worker: z.url(),
    "admin-token": z.string().min(1),
    "forge-api": z.url(),
    "forge-token": z.string().min(1),
    "git-token": z.string().min(1),
    model: z.url(),
    "api-key": z.string().min(1),
    "runner-dir": z.string().min(1),
  })
  .safeParse(values);
if (!parsed.success) {
  console.error(
    `node demo/connect.ts: ${parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; ")}`,
  );
  process.exit(2);
}
const args = parsed.data;

const operator = { workerUrl: args.worker, adminToken: args["admin-token"] };
await connectProject({ ...operator, forgeApiUrl: args["forge-api"], forgeToken: args["forge-token"] });
const configFile = await writeRunnerConfig(args["runner-dir"], {
  workerUrl: args.worker,
  registrationToken: await registrationToken(operator),
  git: { username: PEOPLE.runner.login, token: args["git-token"] },
  anthropic: { baseUrl: args.model, apiKey: args["api-key"] },
});

const labels = z.array(z.object({ id: z.number(), name: z.string() }));
const res = await fetch(`${args["forge-api"]}/repos/${REPO}/labels`, {
  headers: { authorization: `token ${args["forge-token"]}` },
});
const backlog = labels.parse(await res.json()).find((label) => label.name === LABELS.backlog);
console.log(`RUNNER_CONFIG=${configFile}`);
console.log(`BACKLOG_LABEL_ID=${backlog?.id}`);
