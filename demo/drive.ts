/**
 * Plays the humans' part of the scenario and shows what Conveyor does: the maintainer labels the sample
 * issues `backlog`, every edge the Worker records (D1) becomes one line, and an escalation gets the
 * maintainer's reply as a forge comment. Ends once no issue can move on without someone else.
 */

import type { Transition } from "./local-d1.ts";
import type { Demo } from "./orchestrator.ts";
import { LABELS } from "./project.ts";
import { FALLBACK_REPLY, ISSUES, PROJECT } from "./scenario.ts";

const POLL_MS = 200;
/** Longer than an edge takes from its Durable Object to D1. */
const SETTLE_MS = 400;
/** Replies per issue: one is designed; a second covers a real model asking twice. */
const MAX_REPLIES = 2;
const TERMINAL = new Set(["merged", "abandoned"]);
/** States in which only a human moves the issue on. */
const WAITING_FOR_HUMAN = new Set(["escalated", "awaiting_approval"]);

export type Reply = { number: number; at: number; text: string };
export type ScenarioRun = { startedAt: number; transitions: Transition[]; replies: Reply[] };

export type DriveOptions = {
  print: (line: string) => void;
  timeoutMs: number;
  /** Answer escalations the scenario did not design (the real model may ask about anything). */
  replyToAny: boolean;
};

export class ScenarioTimeout extends Error {
  override name = "ScenarioTimeout";
}

export async function runScenario(demo: Demo, options: DriveOptions): Promise<ScenarioRun> {
  const { print } = options;
  const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
  const run: ScenarioRun = { startedAt: Date.now(), transitions: [], replies: [] };
  const state = new Map<number, string>();
  /** Issues whose reply was posted and has not moved them yet. */
  const answered = new Set<number>();
  const deadline = run.startedAt + options.timeoutMs;

  for (const issue of ISSUES) await maintainer.addLabels(issue.number, [LABELS.backlog]);
  print(
    `${stamp(run.startedAt, Date.now())}  maintainer labels ${ISSUES.map((i) => `#${i.number}`).join(" ")} ${LABELS.backlog}`,
  );

  let cursor = 0;
  const pending: Transition[] = [];
  for (;;) {
    const fresh = demo.d1.transitionsAfter(PROJECT, cursor);
    cursor = fresh.at(-1)?.rowid ?? cursor;
    pending.push(...fresh);
    // Issues flush their edges to D1 independently: an edge is shown once later ones cannot overtake it.
    pending.sort((a, b) => a.at - b.at);
    const settled = Date.now() - SETTLE_MS;
    while (pending[0] && pending[0].at <= settled) {
      const edge = pending.shift() as Transition;
      run.transitions.push(edge);
      state.set(edge.number, edge.to);
      answered.delete(edge.number);
      print(describe(edge, run.startedAt));
      const text =
        edge.to === "escalated" ? replyTo(edge.number, run.replies, options.replyToAny) : undefined;
      if (text) {
        await maintainer.comment(edge.number, text);
        run.replies.push({ number: edge.number, at: Date.now(), text });
        answered.add(edge.number);
        print(`${stamp(run.startedAt, Date.now())}  maintainer replies on #${edge.number}: "${text}"`);
      }
    }
    const open = ISSUES.filter((issue) => {
      const now = state.get(issue.number) ?? "new";
      return !TERMINAL.has(now) && !(WAITING_FOR_HUMAN.has(now) && !answered.has(issue.number));
    });
    if (open.length === 0) return run;
    if (Date.now() > deadline) {
      const where = open.map((i) => `#${i.number} ${state.get(i.number) ?? "new"}`).join(", ");
      throw new ScenarioTimeout(`timed out after ${options.timeoutMs / 1000} s; still moving: ${where}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function replyTo(number: number, replies: Reply[], replyToAny: boolean): string | undefined {
  if (replies.filter((r) => r.number === number).length >= MAX_REPLIES) return undefined;
  const designed = ISSUES.find((i) => i.number === number)?.reply;
  return designed ?? (replyToAny ? FALLBACK_REPLY : undefined);
}

/** What an edge means, by its event and where it led. */
const MEANING: Record<string, string> = {
  "triage>queued": "in the backlog; a job waits for a runner",
  "triage>blocked": "in the backlog, waiting for its dependencies",
  "dispatched>running": "a runner started a session",
  "dispatched>revising": "a runner resumed the session",
  "phase>awaiting_ci": "the session pushed its branch; CI runs",
  "ci>awaiting_review": "CI green; the critic reviews",
  "ci>revising": "CI red; the same session fixes it",
  "head_mismatch>escalated": "the forge's branch is not at the reported head",
  "review>merging": "the critic approved; merging",
  "review>revising": "the critic requested changes; the same session revises",
  "merge_confirmed>merged": "merged; the issue is closed",
  "human_reply>revising": "a human replied; the session resumes with the reply",
};

const titles = new Map(ISSUES.map((issue) => [issue.number, issue.title]));

function describe(edge: Transition, startedAt: number): string {
  const move = `${edge.from} → ${edge.to}`;
  return `${stamp(startedAt, edge.at)}  #${edge.number} ${(titles.get(edge.number) ?? "").padEnd(24)} ${move.padEnd(30)} ${meaningOf(edge)}`;
}

function meaningOf(edge: Transition): string {
  // The lifecycle's own reason (an escalation's question, why it was abandoned) says more than the event.
  if (edge.reason) return edge.reason;
  if (edge.event === "pr_opened") return "pull request opened";
  if (edge.from === "blocked" && edge.to === "queued")
    return "its dependencies are merged; a job waits for a runner";
  return MEANING[`${edge.event}>${edge.to}`] ?? edge.event;
}

function stamp(startedAt: number, at: number): string {
  return `${((at - startedAt) / 1000).toFixed(1)}s`.padStart(7);
}
