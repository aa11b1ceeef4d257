/**
 * Plays the humans' part of the scenario and shows what Conveyor does: the maintainer labels the sample
 * issues `backlog`, every edge the Worker records (D1) becomes one line (progress.ts), and an escalation gets
 * the maintainer's reply as a forge comment once its triage answered. Ends once no issue can move on without someone else.
 */

import { z } from "zod";
import { TRIAGE_HEADING } from "../src/domain/escalation.ts";
import { ACTION_LABEL } from "../src/formulas/formula.ts";
import { FactoryAgents } from "./agents.ts";
import type { Transition } from "./local-d1.ts";
import type { Demo } from "./orchestrator.ts";
import { Progress } from "./progress.ts";
import { LABELS } from "./project.ts";
import { FALLBACK_REPLY, ISSUES, PROJECT, type SampleIssue } from "./scenario.ts";

const POLL_MS = 200;
/** Replies per issue: one is designed; a second covers a real model asking twice. */
const MAX_REPLIES = 2;
/**
 * Approvals per issue: one is designed; an approval is for one head, and when the base moved on meanwhile the
 * forge's update of the branch asks for another (bounded by Conveyor's `maxUpdates`, 3 by default).
 */
const MAX_APPROVALS = 4;
/** How long the maintainer waits for an escalation's triage before replying anyway. */
const TRIAGE_WAIT_MS = 120_000;
const TERMINAL = new Set(["merged", "done", "abandoned"]);
/** States in which only a human moves the issue on. */
const WAITING_FOR_HUMAN = new Set(["escalated", "awaiting_approval"]);

export type Reply = { number: number; at: number; text: string };
export type ScenarioRun = {
  startedAt: number;
  /** The issues it followed: the scenario's, and the planner's once queued. */
  issues: SampleIssue[];
  /** The gardener's and the planner's runs (when asked for). */
  agents: FactoryAgents | null;
  transitions: Transition[];
  replies: Reply[];
  /** Pull requests a maintainer approved for a merge that waited for a human. */
  approvals: Reply[];
  /** Pull requests a maintainer requested changes on (`review`). */
  reviews: Reply[];
  /** The progress lines, in time order: `follow` goes on with them. */
  progress: Progress;
};

export type DriveOptions = {
  print: (line: string) => void;
  timeoutMs: number;
  /** Answer escalations the scenario did not design (the real model may ask about anything). */
  replyToAny: boolean;
  /** The issues to label (all of the scenario's by default). */
  issues?: readonly SampleIssue[];
  /** Run the gardener and the planner beside the assembly line, and queue the planner's issue. */
  agents?: boolean;
  /** Around posting a reply (`post`): e.g. with the Worker down, so that only reconciliation sees it. */
  aroundReply?: (number: number, post: () => Promise<void>) => Promise<void>;
};

export class ScenarioTimeout extends Error {
  override name = "ScenarioTimeout";
}

export async function runScenario(demo: Demo, options: DriveOptions): Promise<ScenarioRun> {
  const { print } = options;
  const issues = [...(options.issues ?? ISSUES)];
  const aroundReply = options.aroundReply ?? ((_: number, post: () => Promise<void>) => post());
  const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
  const startedAt = Date.now();
  const progress = new Progress(demo, startedAt, print);
  const run: ScenarioRun = {
    startedAt,
    issues,
    agents: options.agents ? new FactoryAgents(demo, (line) => progress.note(line)) : null,
    transitions: [],
    replies: [],
    approvals: [],
    reviews: [],
    progress,
  };
  const state = new Map<number, string>();
  /** Issues whose reply was posted and has not moved them yet. */
  const answered = new Set<number>();
  /** Escalated issues whose reply waits for the triage's answer (or its wait to end): the reply, and since when. */
  const toAnswer = new Map<number, { text: string; since: number }>();
  const deadline = run.startedAt + options.timeoutMs;

  const queue = async (batch: readonly SampleIssue[]) => {
    for (const issue of batch) {
      // An action is one before it is queued: its triage reads the label.
      if (issue.action) await maintainer.addLabels(issue.number, [ACTION_LABEL]);
      await maintainer.addLabels(issue.number, [LABELS.backlog]);
    }
    progress.note(`maintainer labels ${batch.map((i) => `#${i.number}`).join(" ")} ${LABELS.backlog}`);
  };
  /** Issues the maintainer queues later (`queueWhen`), and held pull requests not yet approved (`approveAfter`). */
  const later = new Set(issues.filter((issue) => issue.queueWhen));
  const held = new Set<SampleIssue>();
  const toReview = new Set(issues.filter((issue) => issue.review));
  /** Issues whose pull request the maintainer reviewed, until their session revised after it. */
  const unrevised = new Set<number>();
  await run.agents?.fileGroomable();
  await queue(issues.filter((issue) => !later.has(issue)));

  for (;;) {
    for (const edge of await progress.next()) {
      run.transitions.push(edge);
      state.set(edge.number, edge.to);
      // An edge that stays in its state (the vault naming a held merge's item, an approval the vault has yet
      // to decide) is no new question: the human's answer still stands.
      if (edge.from !== edge.to) answered.delete(edge.number);
      const text =
        edge.to === "escalated" && edge.from !== "escalated"
          ? replyTo(edge.number, run.replies, options.replyToAny)
          : undefined;
      if (text) toAnswer.set(edge.number, { text, since: Date.now() });
      const sample = issues.find((issue) => issue.number === edge.number);
      if (sample && edge.to === "awaiting_approval" && edge.from !== "awaiting_approval") held.add(sample);
      if (edge.to === "revising") unrevised.delete(edge.number);
    }
    // As its pull request opens, the maintainer reviews it, asking for changes on one line (`review`): the
    // forge is watched, not Conveyor's record, which may reach D1 after CI and the critic were done.
    for (const issue of toReview) {
      const pull = await maintainer.findOpenPullRequest(`conveyor/${issue.number}`, "main");
      if (!pull || !issue.review) continue;
      toReview.delete(issue);
      await requestChanges(pull.number, issue, maintainer, progress);
      run.reviews.push({ number: issue.number, at: Date.now(), text: issue.review.body });
      unrevised.add(issue.number);
    }
    // The maintainer reads the escalation's triage first: its diagnosis and proposed step, on the issue. The
    // issue's object records the proposal before its comment reaches the forge: the comment is what is read.
    for (const [number, { text, since }] of toAnswer) {
      const { proposal } = await issueOf(demo, number);
      const read = proposal && (await triagePosted(maintainer, number));
      if (!read && Date.now() - since < TRIAGE_WAIT_MS) continue;
      toAnswer.delete(number);
      if (proposal)
        progress.note(`triage of #${number} proposes: ${proposal.step.kind} (${proposal.diagnosis})`);
      await aroundReply(number, async () => {
        await maintainer.comment(number, text);
      });
      run.replies.push({ number, at: Date.now(), text });
      answered.add(number);
      progress.note(`maintainer replies on #${number}: "${text}"`);
    }
    const planned = await run.agents?.step();
    if (planned) issues.push(planned);
    for (const issue of later) {
      if (issue.queueWhen && state.get(issue.queueWhen.issue) === issue.queueWhen.state) {
        later.delete(issue);
        await queue([issue]);
      }
    }
    for (const issue of held) {
      if (issue.approveAfter !== undefined && state.get(issue.approveAfter) !== "merged") continue;
      // A merge held by the maintainer's own change request: approved once the session has revised.
      if (unrevised.has(issue.number)) continue;
      const approval = approvalOf(issue.number, run.approvals);
      if (!approval) {
        held.delete(issue);
        continue;
      }
      const { prNumber, vaultItem } = await issueOf(demo, issue.number);
      // An action's step waits in the vault: the maintainer approves the item its notice names, once named.
      if (issue.action && !vaultItem) continue;
      held.delete(issue);
      if (issue.action) {
        await maintainer.comment(issue.number, `/conveyor approve ${vaultItem}\n\n${approval}`);
        progress.note(
          `maintainer approves vault item ${vaultItem} of #${issue.number}: "/conveyor approve ${vaultItem}"`,
        );
      } else {
        if (prNumber === null)
          throw new Error(`#${issue.number} waits for an approval without a pull request`);
        await maintainer.createReview(prNumber, { event: "APPROVE", body: approval });
        progress.note(`maintainer approves pull request #${prNumber} of #${issue.number}: "${approval}"`);
      }
      run.approvals.push({ number: issue.number, at: Date.now(), text: approval });
      answered.add(issue.number);
    }
    const open = issues.filter((issue) => {
      const now = state.get(issue.number) ?? "new";
      const waits =
        WAITING_FOR_HUMAN.has(now) &&
        !answered.has(issue.number) &&
        !held.has(issue) &&
        !toAnswer.has(issue.number);
      return !TERMINAL.has(now) && !waits;
    });
    if (open.length === 0 && !run.agents?.busy) {
      run.transitions.push(...(await progress.flush()));
      return run;
    }
    if (Date.now() > deadline) {
      const where = [
        ...open.map((i) => `#${i.number} ${state.get(i.number) ?? "new"}`),
        ...(run.agents?.busy ? ["the gardener's and the planner's runs"] : []),
      ].join(", ");
      throw new ScenarioTimeout(`timed out after ${options.timeoutMs / 1000} s; still moving: ${where}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * After the scenario, while the services stay up: every further edge (an issue labelled by hand, a retry from
 * the dashboard) is shown as it happens, until `signal` ends it.
 */
export async function follow(run: ScenarioRun, signal: AbortSignal) {
  while (!signal.aborted) {
    await run.progress.next();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function requestChanges(
  prNumber: number,
  issue: SampleIssue,
  maintainer: ReturnType<Demo["sample"]["client"]>,
  progress: Progress,
) {
  if (!issue.review) return;
  const { body, path, line, comment } = issue.review;
  await maintainer.createReview(prNumber, {
    event: "REQUEST_CHANGES",
    body,
    comments: [{ path, line, body: comment }],
  });
  progress.note(
    `maintainer requests changes on pull request #${prNumber} of #${issue.number}: "${body}" and on ${path} line ${line}: "${comment}"`,
  );
}

function replyTo(number: number, replies: Reply[], replyToAny: boolean): string | undefined {
  if (replies.filter((r) => r.number === number).length >= MAX_REPLIES) return undefined;
  const designed = ISSUES.find((i) => i.number === number)?.reply;
  return designed ?? (replyToAny ? FALLBACK_REPLY : undefined);
}

/** The maintainer approves each head the merge waits on: Conveyor asks again when the branch moved since. */
function approvalOf(number: number, approvals: Reply[]): string | undefined {
  if (approvals.filter((a) => a.number === number).length >= MAX_APPROVALS) return undefined;
  return ISSUES.find((i) => i.number === number)?.approval;
}

/** Whether the triage's comment is on the issue. */
async function triagePosted(maintainer: ReturnType<Demo["sample"]["client"]>, number: number) {
  const comments = await maintainer.listComments(number);
  return comments.some((comment) => comment.body.startsWith(TRIAGE_HEADING));
}

const issueSchema = z.object({
  prNumber: z.number().int().positive().nullable(),
  vaultItem: z.string().nullish(),
  proposal: z.object({ diagnosis: z.string(), step: z.object({ kind: z.string() }) }).nullish(),
});

/**
 * The issue's pull request, the vault item it waits on and its triage's proposal, as its Durable Object knows
 * them (the operator API).
 */
async function issueOf(demo: Demo, number: number): Promise<z.infer<typeof issueSchema>> {
  const res = await fetch(`${demo.worker.url}/api/v1/projects/${PROJECT}/issues/${number}`, {
    headers: { authorization: `Bearer ${demo.adminToken}` },
  });
  return issueSchema.parse(await res.json());
}
