/**
 * `npm run demo` (`node demo/run.ts`): the whole factory on this machine, one line per lifecycle edge, then a
 * summary. `CI=true`: exits after the summary, 0 only if every issue went as designed. Otherwise the services
 * stay up until Ctrl-C. `ANTHROPIC_API_KEY` (and `ANTHROPIC_BASE_URL`) set: the real model instead of the
 * scripted stand-in. `DEMO_TIMEOUT_SECONDS` (240) bounds the scenario.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { agentDeviations } from "./agents.ts";
import { follow, runScenario, type ScenarioRun, ScenarioTimeout } from "./drive.ts";
import { factoryHealth, healthLines } from "./health.ts";
import { type Demo, type ModelChoice, startDemo } from "./orchestrator.ts";
import { GROOMING, ISSUES, PLANNED, PROJECT } from "./scenario.ts";
import { deviations, outcomes, summaryTable } from "./summary.ts";

const env = z
  .object({
    CI: z.string().optional(),
    ANTHROPIC_API_KEY: z.string().min(1).optional(),
    ANTHROPIC_BASE_URL: z.url().optional(),
    DEMO_TIMEOUT_SECONDS: z.coerce.number().positive().default(240),
  })
  .parse(process.env);
const ci = env.CI !== undefined && !["", "0", "false"].includes(env.CI);
const model: ModelChoice = env.ANTHROPIC_API_KEY
  ? {
      kind: "anthropic",
      apiKey: env.ANTHROPIC_API_KEY,
      ...(env.ANTHROPIC_BASE_URL && { baseUrl: env.ANTHROPIC_BASE_URL }),
    }
  : { kind: "stand-in" };

const began = Date.now();
const dataDir = await mkdtemp(join(tmpdir(), "conveyor-demo-"));
console.log(
  `Conveyor demo: ${ISSUES.length} issues, ${model.kind === "stand-in" ? "the scripted stand-in model" : "the real model"}.`,
);
for (const issue of ISSUES) console.log(`  #${issue.number} ${issue.title}: ${issue.story}`);
console.log(
  `  and beside them: the gardener grooms ${GROOMING.map((i) => `#${i.number}`).join(" ")}; the planner files "${PLANNED.title}" from VISION.md: ${PLANNED.story}`,
);
console.log("Starting the forge, the Worker, the model and a runner …");
const demo = await startDemo({ dataDir, model });
/** Until the scenario ends as designed, state and logs are kept for a look. */
let failed = true;
process.once("SIGINT", () => void shutdown(130));
const dashboard = (await fetch(`${demo.worker.url}/dashboard`, { redirect: "manual" })).status !== 404;
const sandbox = await demo.runner.sandbox();
console.log(`… ready in ${((Date.now() - began) / 1000).toFixed(1)} s.`);
printServices(demo);

/** Ends `follow` when the demo shuts down. */
const stopping = new AbortController();
let run: ScenarioRun | undefined;
try {
  run = await runScenario(demo, {
    print: (line) => console.log(line),
    timeoutMs: env.DEMO_TIMEOUT_SECONDS * 1000,
    replyToAny: model.kind === "anthropic",
    agents: true,
  });
  const results = await outcomes(demo, run);
  console.log(`\nEvery issue settled in ${((Date.now() - run.startedAt) / 1000).toFixed(1)} s.\n`);
  console.log(summaryTable(results));
  const health = await factoryHealth(demo);
  console.log(`\n${healthLines(health, `${demo.worker.url}/dashboard/health`).join("\n")}\n`);
  const exact = model.kind === "stand-in";
  const problems = [
    ...deviations(results, exact),
    ...(run.agents ? await agentDeviations(demo, run.agents, exact) : []),
    ...health.problems,
  ];
  for (const problem of problems) console.log(`NOT AS DESIGNED: ${problem}`);
  if (problems.length === 0) console.log("\nEvery issue ended as designed.");
  failed = problems.length > 0;
} catch (error) {
  // Whatever went wrong, the services are stopped (CI) or left up for a look, never orphaned.
  console.log(
    `\n${error instanceof ScenarioTimeout ? error.message : error instanceof Error ? error.stack : error}`,
  );
}
if (failed) await printLogTails(demo);

if (ci) {
  await shutdown(failed ? 1 : 0);
} else {
  printServices(demo);
  console.log("The services stay up; Ctrl-C stops them. What Conveyor does from here shows below.");
  if (run) void follow(run, stopping.signal);
}

async function shutdown(code: number): Promise<never> {
  stopping.abort();
  await demo.stop();
  if (failed) console.log(`State and logs are kept in ${dataDir}`);
  else await rm(dataDir, { recursive: true, force: true });
  process.exit(code);
}

function printServices({ sample, worker, adminToken, model: standIn }: Demo): void {
  console.log(`
  forge       ${sample.forge.url}  (API ${sample.forge.apiUrl}; maintainer token ${sample.accounts.maintainer.token})
  Worker      ${worker.url}  (operator token ${adminToken})
  dashboard   ${dashboard ? `${worker.url}/dashboard` : "not in this build"}
  issues      curl -H 'authorization: Bearer ${adminToken}' ${worker.url}/api/v1/projects/${PROJECT}/issues
  model       ${standIn ? `${standIn.url} (scripted stand-in)` : (env.ANTHROPIC_BASE_URL ?? "the Anthropic API")}, key held by the runner's model proxy
  sandbox     ${sandbox === "bubblewrap" ? "on: every session runs in bubblewrap (worktree, own home, no network but the model)" : `OFF (${sandbox})`}
  state, logs ${dataDir}
`);
}

async function printLogTails(demo: Demo): Promise<void> {
  const runnerLog = await readFile(demo.runner.logFile, "utf8").catch(() => "");
  console.log(`\nLast lines of the runner's log (${demo.runner.logFile}):`);
  console.log(runnerLog.trimEnd().split("\n").slice(-15).join("\n"));
  console.log("\nLast lines of the Worker's log:");
  console.log(demo.worker.logs().trimEnd().split("\n").slice(-15).join("\n"));
}
