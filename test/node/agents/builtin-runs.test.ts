/**
 * Built-in agents' runs end to end (the gardener, the predictor; the planner runs in the demo's scenario): the operator asks for a run with the CLI, the Worker (wrangler dev) queues it as an agent
 * job, the real runner runs the real Agent SDK binary in its sandbox against the scripted model stand-in, and
 * the outputs the gardener asks for land on the local forge, checked and applied once by the Worker.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { PROJECT } from "../../../demo/scenario.ts";
import { SAFE_OUTPUTS_SERVER } from "../../../runner/agents/safe-outputs.ts";
import { text, use } from "../../support/model/script.ts";
import { until } from "../../support/until.ts";

const CLI = new URL("../../../cli/conveyor.ts", import.meta.url).pathname;
const tool = (name: string) => `mcp__${SAFE_OUTPUTS_SERVER}__${name}`;
const QUESTION = "What should slugify do with characters outside ASCII?";

const PREDICTIONS = [1, 2, 3, 4, 5, 6].map((n) => `Holdout regression ${n}`);

let dataDir = "";
let demo: Demo | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-gardener-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    script: [
      {
        // More predictions than the predictor's cap of five: the sixth is refused.
        when: /You are the predictor/,
        steps: [
          use("Glob", { pattern: "evidence/**/*.json" }),
          ...PREDICTIONS.map((title) =>
            use(tool("create_issue"), { title, body: "holdout 2026-11-25: failed 2 (2026-11-18: 0)." }),
          ),
          text("Filed the predictions."),
        ],
      },
      {
        when: /You are the gardener/,
        steps: [
          use(tool("comment"), { issue: 1, body: QUESTION }),
          use(tool("add_labels"), { issue: 1, labels: ["underspecified"] }),
          // Not the gardener's to set: rejected with the reason.
          use(tool("add_labels"), { issue: 1, labels: ["backlog"] }),
          text("Groomed."),
        ],
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The operator's CLI against the demo's Worker: its text output. */
function conveyorText(...args: string[]): Promise<string> {
  if (!demo) throw new Error("no demo");
  const env = { ...process.env, CONVEYOR_URL: demo.worker.url, CONVEYOR_TOKEN: demo.adminToken };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args, "--project", PROJECT], { env }, (error, stdout, stderr) =>
      error ? reject(new Error(`conveyor ${args.join(" ")}: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** The CLI's parsed answer (`--json`). */
const conveyor = async (...args: string[]): Promise<unknown> =>
  JSON.parse(await conveyorText(...args, "--json"));

/** Asks for a manual run with the CLI and waits until every output the Worker accepted is on the forge. */
async function runToTheEnd(agent: string): Promise<{ runId: string; run: Run }> {
  const { runId } = (await conveyor("agent", "run", agent)) as { runId: string };
  const run = await until(`the ${agent} run's outputs applied`, async () => {
    const current = (await conveyor("agent", "show", agent, runId)) as Run;
    if (current.status === "failed") throw new Error(`the run failed: ${JSON.stringify(current)}`);
    const applied = current.decisions?.filter((d) => d.status === "accepted").every((d) => d.applied);
    return current.status === "done" && applied ? current : null;
  });
  return { runId, run };
}

type Run = {
  status: string;
  decisions: { status: string; reason?: string; applied?: boolean; output: { type: string } }[] | null;
};

describe("built-in agents' runs", { timeout: 150_000 }, () => {
  it("asks through its safe outputs, and the accepted ones land on the forge once", async () => {
    if (!demo) throw new Error("no demo");
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    // A label change reaches the Worker as a webhook: issue #1 is then in Conveyor's mirror of the forge.
    await maintainer.addLabels(1, ["question"]);
    const d1 = demo.d1;
    await until("issue #1 mirrored", () => (d1.openMirrored(PROJECT).includes(1) ? true : null));

    const { runId, run } = await runToTheEnd("gardener");

    expect(run.decisions?.map((d) => [d.output.type, d.status, d.reason ?? null])).toEqual([
      ["comment", "accepted", null],
      ["add_labels", "accepted", null],
      ["add_labels", "rejected", "labels not allowed for this agent: backlog"],
    ]);
    const comments = await maintainer.listComments(1);
    expect(comments.filter((c) => c.body.startsWith(QUESTION))).toHaveLength(1);
    const labels = (await maintainer.getIssue(1)).labels;
    expect(labels).toContain("underspecified");
    expect(labels).not.toContain("backlog");

    const list = (await conveyor("agent", "list")) as {
      agents: { name: string; lastRun: { id: string } | null }[];
    };
    expect(list.agents.find((a) => a.name === "gardener")?.lastRun?.id).toBe(runId);
    const shown = await conveyorText("agent", "show", "gardener", runId);
    expect(shown).toMatch(new RegExp(`^gardener ${runId}  done  manual  cost \\$`));
    expect(shown).toMatch(/3\s+add_labels\s+rejected\s+labels not allowed for this agent: backlog/);
    expect(shown).toMatch(/1\s+comment\s+applied/);
  });

  it("the predictor files at most its five predictions, titled and labelled by its definition", async () => {
    if (!demo) throw new Error("no demo");
    const { run } = await runToTheEnd("predictor");
    expect(run.decisions?.map((d) => [d.status, d.reason ?? null])).toEqual([
      ...PREDICTIONS.slice(0, 5).map(() => ["accepted", null]),
      ["rejected", "over the cap: at most 5 create_issue per run"],
    ]);
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const filed = await maintainer.listIssuesByLabel("prediction/unreviewed");
    expect(filed.map((i) => i.title).sort()).toEqual(PREDICTIONS.slice(0, 5).map((t) => `Prediction: ${t}`));
  });
});
