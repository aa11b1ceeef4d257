/**
 * The demo's scenario end to end, through the demo's own orchestrator: the local forge and its CI, the Worker
 * under wrangler dev, the real Claude Agent SDK binary against the scripted stand-in, one runner process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from "vitest";
import { z } from "zod";
import { agentDeviations, type FactoryAgents } from "../../../demo/agents.ts";
import { TRIAGE_OF_4 } from "../../../demo/agents-script.ts";
import { runScenario, type ScenarioRun } from "../../../demo/drive.ts";
import { type FactoryHealth, factoryHealth } from "../../../demo/health.ts";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import {
  ANNOUNCE_TOKEN,
  GROOMING,
  ISSUES,
  PLANNED,
  PROJECT,
  REPO,
  type SampleIssue,
  STALE_ISSUE,
} from "../../../demo/scenario.ts";
import {
  asDesigned,
  deviations,
  type IssueOutcome,
  outcomes,
  pullRequests,
  squashShown,
  summaryTable,
} from "../../../demo/summary.ts";
import { forgeLinks } from "../../../src/forge/web-links.ts";
import type { RecordedRequest } from "../../support/model/server.ts";

let dataDir = "";
let demo: Demo | undefined;
let run: ScenarioRun;
let results: IssueOutcome[];
let health: FactoryHealth;
/** What the demo printed while it ran. */
const lines: string[] = [];
/** A failed test keeps the forge's, the Worker's and the runner's state and logs for a look. */
let keep = false;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-e2e-"));
  demo = await startDemo({ dataDir, model: { kind: "stand-in" } });
  run = await runScenario(demo, {
    print: (line) => lines.push(line),
    timeoutMs: 150_000,
    replyToAny: false,
    agents: true,
  });
  results = await outcomes(demo, run);
  health = await factoryHealth(demo);
}, 180_000);

beforeEach(() => {
  onTestFailed(() => {
    keep = true;
  });
});

afterAll(async () => {
  await demo?.stop();
  if (keep) console.log(`the demo's state and logs are kept in ${dataDir}`);
  else await rm(dataDir, { recursive: true, force: true });
});

const outcome = (number: number) => {
  const found = results.find((r) => r.issue.number === number);
  if (!found) throw new Error(`no outcome for #${number}`);
  return found;
};

/** The sessions' requests (not the critic's) per issue, as the stand-in recorded them. */
function sessionRequests(requests: readonly RecordedRequest[]) {
  const byIssue = new Map<number, { sessionId: string | undefined; continuation: boolean }[]>();
  for (const { body, headers } of requests) {
    if (!body || body.tool_choice) continue;
    const transcript = JSON.stringify(body.messages);
    // A code issue's session, or an action's.
    const number = Number(/(?:Implement|Carry out) issue #(\d+) of/.exec(transcript)?.[1]);
    if (!number) continue;
    const continued = [
      `Conveyor continues issue #${number}.`,
      `Conveyor resumes the action of issue #${number}.`,
    ];
    byIssue.set(number, [
      ...(byIssue.get(number) ?? []),
      {
        sessionId: headers["x-claude-code-session-id"],
        continuation: continued.some((prompt) => transcript.includes(prompt)),
      },
    ]);
  }
  return byIssue;
}

describe("the demo scenario", () => {
  it("ends with the supervisor finding the factory healthy", () => {
    expect(health.problems).toEqual([]);
  });

  it("ends every issue on its designed path", () => {
    expect(deviations(results, true), summaryTable(results)).toEqual([]);
    // Where timing decides (a maintainer's review as the pull request opens), within the design's bounds.
    const keys = ["iterations", "ciAttempts", "criticRounds", "escalations"] as const;
    expect(
      results.map((r) => ({
        number: r.issue.number,
        state: r.state,
        ...Object.fromEntries(keys.map((key) => [key, asDesigned(r, key) ? r.issue.design[key] : r[key]])),
      })),
    ).toEqual(run.issues.map(({ number, design }) => ({ number, ...design })));
    // The scenario's issues, and the one the planner filed.
    expect(run.issues.slice(0, ISSUES.length)).toEqual(ISSUES);
    expect(run.issues.slice(ISSUES.length).map((i) => i.title)).toEqual([PLANNED.title]);
    expect(run.replies.map((r) => r.number)).toEqual([4]);
    // Once per head the merge waited on: again when the base moved on while it waited (see the next test).
    const held = run.transitions.filter(
      (t) => t.number === 5 && t.event === "review" && t.to === "awaiting_approval",
    );
    // And once for the action's dangerous step.
    expect(run.approvals.map((r) => r.number).filter((n) => n === 5)).toEqual(held.map(() => 5));
    expect(run.approvals.filter((r) => r.number === 7)).toHaveLength(1);
    // #2: the maintainer requested changes as its pull request opened, and approved once it was revised.
    expect(run.reviews.map((r) => r.number)).toEqual([2]);
    expect(run.approvals.filter((r) => r.number === 2)).toHaveLength(1);
  });

  it("squashes each merge onto the squash-only sample, with Conveyor's message", () => {
    // deviations() above holds every merged issue to this; here the one squash the demo prints.
    expect(squashShown(results)).toMatch(
      /^#1's pull request #(\d+), squashed onto main as one commit:\n {4}Add slugify\(text\) \(#\1\)\n\n {4}Closes #1$/,
    );
  });

  it("answers #4's escalation with its triage before the maintainer replies", async () => {
    const maintainer = (demo as Demo).sample.client((demo as Demo).sample.accounts.maintainer);
    const bodies = (await maintainer.listComments(4)).map((c) => c.body);
    const triage = bodies.findIndex((b) => b.startsWith("**Triage of this escalation.**"));
    expect(bodies[triage]).toContain("Proposed next step: **ask the issue's author**");
    expect(bodies[triage]).toContain(`> **Question:** ${TRIAGE_OF_4.question}`);
    const reply = bodies.indexOf(ISSUES[3]?.reply ?? "");
    expect(triage).toBeGreaterThanOrEqual(0);
    expect(reply).toBeGreaterThan(triage);
    expect(lines.join("\n")).toContain(`triage of #4 proposes: clarify (${TRIAGE_OF_4.diagnosis})`);
  });

  it("runs the gardener and the planner beside the assembly line, each output applied once", async () => {
    expect(await agentDeviations(demo as Demo, run.agents as FactoryAgents, true)).toEqual([]);
    const decisions = (agent: "gardener" | "planner") =>
      run.agents?.runs.get(agent)?.decisions?.map((d) => [d.output.type, d.status, d.applied]);
    expect(decisions("gardener")).toEqual(
      [STALE_ISSUE, ...GROOMING].flatMap((issue) =>
        issue.gardener
          ? [
              ["comment", "accepted", true],
              ["add_labels", "accepted", true],
            ]
          : [],
      ),
    );
    expect(decisions("planner")).toEqual([["create_issue", "accepted", true]]);
    // The planner's issue carries the label its definition adds, and the maintainer's `backlog`.
    const planned = run.issues.at(-1) as SampleIssue;
    const maintainer = (demo as Demo).sample.client((demo as Demo).sample.accounts.maintainer);
    expect((await maintainer.listIssuesByLabel("vision", "all")).map((i) => i.number)).toEqual([
      planned.number,
    ]);
  });

  it("runs the action's formula: progress notes, the dangerous step only after the vault's approval, a summary", async () => {
    const action = ISSUES.find((issue) => issue.action) as SampleIssue;
    const edges = run.transitions.filter((t) => t.number === action.number).map((t) => `${t.event}>${t.to}`);
    const held = edges.indexOf("phase>awaiting_approval");
    expect(held).toBeGreaterThan(0);
    expect(edges.slice(held)).toContain("vault_decision>running");
    expect(edges.at(-1)).toBe("phase>done");
    const maintainer = (demo as Demo).sample.client((demo as Demo).sample.accounts.maintainer);
    const bodies = (await maintainer.listComments(action.number)).map((c) => c.body);
    const notes = bodies.filter((b) => b.startsWith("**Progress:**"));
    // The session's words, quoted apart under its name.
    expect(notes[0]).toMatch(/^\*\*Progress:\*\*\n\nIts session wrote:\n\n> Collecting the changes/);
    // The announce step ran once, after the approval, with its secret (seen only as its length).
    expect(notes.filter((b) => b.includes("> announce: step announce exited with code 0"))).toHaveLength(1);
    expect(notes.join("\n")).toContain(`signed with a ${ANNOUNCE_TOKEN.length}-character token`);
    expect(bodies.join("\n")).not.toContain(ANNOUNCE_TOKEN);
    expect(bodies.filter((b) => b.startsWith("**The action is done.**"))).toHaveLength(1);
    expect((await maintainer.getIssue(action.number)).state).toBe("closed");
    expect(outcome(action.number).pr).toBeNull();
  });

  it("a session's commit message closes no other issue when Conveyor's pull request merges", async () => {
    // #1's session committed "fixes #2": collected as "refs #2", its merge left #2 open for its own session.
    // Its own merge closes it, and the forge may say so before the merge's answer: only from `merging`.
    const closed = run.transitions.filter((t) => t.number === 2 && t.event === "issue_closed");
    expect(closed.map((t) => t.from)).toEqual(closed.map(() => "merging"));
    expect(outcome(2).state).toBe("merged");
  });

  it("holds a change to a protected path until a maintainer approves its pull request", () => {
    // The held merge's vault item (named, then approved by the review) stays in awaiting_approval; the vault's
    // decision merges. An approval that comes before the vault named the item merges at once.
    const approval = /^(human_approval|vault_decision)>merging$/;
    const edges = run.transitions
      .filter((t) => t.number === 5)
      .map((t) => `${t.event}>${t.to}`)
      // Its own merge's close may reach Conveyor before the merge's answer does (issue_closed in merging).
      .filter(
        (e) =>
          e !== "vault_requested>awaiting_approval" &&
          e !== "human_approval>awaiting_approval" &&
          e !== "issue_closed>merging",
      );
    expect(edges.slice(-3)).toEqual([
      "review>awaiting_approval",
      expect.stringMatching(approval),
      "merge_confirmed>merged",
    ]);
    // The base moves on while the merge waits for the maintainer: #6 changed the same README line, so the
    // first approved merge finds a conflict that #5's own session resolves; a base that merely moved on is
    // merged in by the forge. Either way the new head goes through CI, the critic and an approval again.
    const approved = edges.flatMap((e, i) => (approval.test(e) ? [edges[i + 1]] : []));
    expect(approved[0]).toBe("conflict>revising");
    expect(approved.slice(1)).toEqual([
      ...approved.slice(2).map(() => "branch_updated>awaiting_ci"),
      "merge_confirmed>merged",
    ]);
    expect(run.transitions.find((t) => t.number === 5 && t.to === "awaiting_approval")?.reason).toContain(
      "ci.sh",
    );
  });

  it("keeps both sides of the conflict #5's session resolved on the default branch", async () => {
    const { forge, accounts } = (demo as Demo).sample;
    const res = await fetch(`${forge.apiUrl}/repos/${REPO}/contents/README.md?ref=main`, {
      headers: { authorization: `token ${accounts.conveyor.token}` },
    });
    const { content } = z.object({ content: z.string() }).parse(await res.json());
    const readme = Buffer.from(content, "base64").toString("utf8");
    expect(readme).toContain("--test-reporter=spec");
    expect(readme).toContain("runs one file");
  });

  it("leaves exactly one merged pull request per merged issue on the forge", async () => {
    const merged = (await pullRequests(demo as Demo)).filter((pull) => pull.merged);
    const byNumber = (a: number | null, b: number | null) => (a ?? 0) - (b ?? 0);
    const code = results.filter((r) => r.issue.design.state === "merged");
    expect(merged.map((pull) => pull.number).sort(byNumber)).toEqual(code.map((r) => r.pr).sort(byNumber));
    for (const r of code) expect(r.mergedPulls).toEqual([r.pr]);
  });

  it("runs every revision in the issue's first session, resumed by its id", () => {
    const sessions = sessionRequests(demo?.model?.requests ?? []);
    for (const r of results) {
      const requests = sessions.get(r.issue.number) ?? [];
      expect(r.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(requests.map((q) => q.sessionId))).toEqual(new Set([r.sessionId]));
      // A revision or resumption shows as requests carrying the continuation prompt in the same session.
      expect(requests.some((q) => q.continuation)).toBe(r.issue.design.iterations > 1);
    }
  });

  it("prints its progress in time order, each issue's edges with its title, none twice in a row", () => {
    const stamps = lines.map((line) => Number(/^ *(\d+\.\d)s {2}\S/.exec(line)?.[1]));
    expect(stamps.filter(Number.isNaN), lines.join("\n")).toEqual([]);
    expect(stamps, lines.join("\n")).toEqual([...stamps].sort((a, b) => a - b));
    const titles = new Map(run.issues.map((issue) => [issue.number, issue.title]));
    const last = new Map<number, string>();
    for (const line of lines) {
      const edge = /^ *\S+ {2}#(\d+) (.*?) +(\S+ → \S+) +(.*)$/.exec(line);
      if (!edge) continue;
      const number = Number(edge[1]);
      expect(edge[2], line).toBe(titles.get(number));
      const said = `${edge[3]} ${edge[4]}`;
      expect(said, line).not.toBe(last.get(number));
      last.set(number, said);
    }
    expect(last.size).toBe(run.issues.length);
  });

  // Not the branches: merged, each was deleted (a forge's branch page of a deleted branch is a 404 too).
  it("gives forge links that open pages: the forge, each issue, its pull request and head", async () => {
    const { forge } = (demo as Demo).sample;
    const links = forgeLinks({ forge: "forgejo", apiUrl: forge.apiUrl, repo: REPO });
    const pulls = await pullRequests(demo as Demo);
    const urls = [
      forge.url,
      ...results.map((r) => links.issue(r.issue.number)),
      ...pulls.map((pull) => links.pullRequest(pull.number)),
    ];
    const heads = (demo as Demo).d1
      .issues(PROJECT)
      .flatMap((i) => (i.headSha ? [links.commit(i.headSha)] : []));
    expect(heads.length).toBeGreaterThan(0);
    for (const url of [...urls, ...heads]) {
      const res = await fetch(url);
      expect(res.status, url).toBe(200);
      expect(res.headers.get("content-type"), url).toMatch(/^text\/html/);
    }
  });

  it("starts the dependent issue only after its dependency merged", () => {
    const dependent = run.transitions.filter((t) => t.number === 2).map((t) => t.to);
    expect(dependent.slice(0, 3)).toEqual(["blocked", "queued", "running"]);
    const { mergedAt } = outcome(1);
    expect(mergedAt).not.toBeNull();
    expect(outcome(2).startedAt).toBeGreaterThanOrEqual(mergedAt ?? Number.POSITIVE_INFINITY);
  });
});
