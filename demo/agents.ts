/**
 * The factory's other half in the demo: once the unqueued issues are in Conveyor's mirror, the operator runs
 * the gardener (it grooms them) and the planner (it files the gap between VISION.md and the code); when the
 * planner's issue is on the forge, the maintainer labels it `backlog` and it takes the assembly line.
 */
import { z } from "zod";
import { describeOutput } from "../src/agents/held-outputs.ts";
import { requestedOutputSchema } from "../src/agents/outputs.ts";
import type { Demo } from "./orchestrator.ts";
import { LABELS } from "./project.ts";
import { GROOMING, PLANNED, PROJECT, type SampleIssue } from "./scenario.ts";

export const FACTORY_AGENTS = ["gardener", "planner"] as const;
export type FactoryAgent = (typeof FACTORY_AGENTS)[number];

const decisionSchema = z.object({
  status: z.string(),
  reason: z.string().optional(),
  applied: z.boolean().optional(),
  output: requestedOutputSchema,
});
const runSchema = z.object({
  status: z.string(),
  costUsd: z.number(),
  decisions: z.array(decisionSchema).nullable(),
  error: z.string().nullable(),
});
export type AgentRun = z.infer<typeof runSchema> & { agent: FactoryAgent; id: string };

/** Settled: the runner completed it, and every output the Worker accepted is on the forge. */
const settled = (run: AgentRun) =>
  run.status === "failed" ||
  (run.status === "done" && (run.decisions ?? []).every((d) => d.status !== "accepted" || d.applied));

export class FactoryAgents {
  readonly runs = new Map<FactoryAgent, AgentRun>();
  #planned: SampleIssue | null = null;

  readonly #demo: Demo;
  readonly #say: (line: string) => void;

  constructor(demo: Demo, say: (line: string) => void) {
    this.#demo = demo;
    this.#say = say;
  }

  /** The planner's issue once looked for (number 0: not found). */
  get planned(): SampleIssue | null {
    return this.#planned;
  }

  /** Whether anything is still to happen: runs to settle, the planner's issue to find. */
  get busy(): boolean {
    return (
      this.runs.size < FACTORY_AGENTS.length ||
      [...this.runs.values()].some((r) => !settled(r)) ||
      !this.#planned
    );
  }

  /**
   * A teammate files the issues for the gardener (their webhooks put them in Conveyor's mirror). First thing in
   * the scenario: no pull request has taken a number yet.
   */
  async fileGroomable(): Promise<void> {
    const teammate = this.#demo.sample.client(this.#demo.sample.accounts.maintainer);
    for (const issue of GROOMING) {
      const { number } = await teammate.createIssue({ title: issue.title, body: issue.body, labels: [] });
      if (number !== issue.number) throw new Error(`the issue "${issue.title}" became #${number}`);
    }
  }

  /**
   * One look: starts the runs once the groomable issues are mirrored, follows them, and returns the planner's
   * issue the first time it is seen on the forge (for the maintainer to queue).
   */
  async step(): Promise<SampleIssue | null> {
    if (this.runs.size === 0) {
      const mirrored = new Set(this.#demo.d1.openMirrored(PROJECT));
      if (!GROOMING.every((issue) => mirrored.has(issue.number))) return null;
      for (const agent of FACTORY_AGENTS) {
        const { runId } = z.object({ runId: z.string() }).parse(await this.#api("POST", `${agent}/runs`));
        this.runs.set(agent, {
          agent,
          id: runId,
          status: "queued",
          costUsd: 0,
          decisions: null,
          error: null,
        });
      }
      this.#say(`operator runs the ${FACTORY_AGENTS.join(" and the ")}`);
      return null;
    }
    for (const [agent, run] of this.runs) {
      if (settled(run)) continue;
      const now = {
        agent,
        id: run.id,
        ...runSchema.parse(await this.#api("GET", `${agent}/runs/${run.id}`)),
      };
      this.runs.set(agent, now);
      if (settled(now)) this.#say(`${agent} run ${now.status}: ${describeDecisions(now)}`);
    }
    const planner = this.runs.get("planner");
    if (this.#planned || !planner || !settled(planner)) return null;
    const maintainer = this.#demo.sample.client(this.#demo.sample.accounts.maintainer);
    const filed = (await maintainer.listIssuesByLabel("vision")).find(
      (issue) => issue.title === PLANNED.title,
    );
    if (!filed) {
      // The planner filed something else (the real model) or nothing: there is nothing to queue.
      this.#planned = { number: 0, ...PLANNED };
      return null;
    }
    this.#planned = { number: filed.number, ...PLANNED };
    await maintainer.addLabels(filed.number, [LABELS.backlog]);
    this.#say(`maintainer labels the planner's #${filed.number} ${LABELS.backlog}`);
    return this.#planned;
  }

  async #api(method: string, path: string): Promise<unknown> {
    const url = `${this.#demo.worker.url}/api/v1/projects/${PROJECT}/agents/${path}`;
    const res = await fetch(url, { method, headers: { authorization: `Bearer ${this.#demo.adminToken}` } });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.json();
  }
}

function describeDecisions(run: AgentRun): string {
  if (run.error) return run.error;
  const decisions = run.decisions ?? [];
  const applied = decisions.filter((d) => d.applied).map((d) => describeOutput(d.output));
  const rejected = decisions.filter((d) => d.status === "rejected").length;
  return `${applied.join(", ") || "nothing applied"}${rejected ? `; ${rejected} rejected` : ""}`;
}

/**
 * Where the agents left the design: the gardener commented on and labelled each issue it was designed to
 * groom, and the planner filed its gap (whose path through the assembly line the issue table checks).
 */
export async function agentDeviations(demo: Demo, agents: FactoryAgents, exact: boolean): Promise<string[]> {
  const found: string[] = [];
  for (const agent of FACTORY_AGENTS) {
    const run = agents.runs.get(agent);
    if (run?.status !== "done") found.push(`the ${agent} run ended ${run?.status ?? "never started"}`);
  }
  // A real model grooms and plans as it sees fit: only the runs' ending is held to the design.
  if (!exact) return found;
  if (!agents.planned?.number) found.push(`the planner filed no issue "${PLANNED.title}"`);
  const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
  for (const issue of GROOMING) {
    if (!issue.gardener) continue;
    const [comments, { labels }] = await Promise.all([
      maintainer.listComments(issue.number),
      maintainer.getIssue(issue.number),
    ]);
    // Posted quoted under the agent's name: its first line is the agent's first line, behind `> `.
    const quoted = `> ${issue.gardener.comment.split("\n")[0]}`;
    const said = comments.filter((c) => c.body.split("\n").includes(quoted)).length;
    if (said !== 1) found.push(`#${issue.number}: the gardener's comment is there ${said} times, not once`);
    if (!labels.includes(issue.gardener.label))
      found.push(`#${issue.number}: not labelled ${issue.gardener.label}`);
  }
  return found;
}
