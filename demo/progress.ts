/**
 * The demo's progress lines: every edge the Worker records (D1) and every step of the humans and agents the
 * scenario plays, in time order, each edge with its issue's title. Issues flush their edges to D1 on their own
 * and a little late (seconds on a busy machine), so a line waits for the record's watermark (`RecordMark`):
 * the moment before which every edge of every issue is known to be in D1. An edge is shown once however often
 * it is read, and a lifecycle reason is quoted when it is new, not again on each edge that keeps it.
 */
import type { Transition } from "./local-d1.ts";
import type { Demo } from "./orchestrator.ts";
import { RecordMark } from "./record-mark.ts";
import { ISSUES, PLANNED, PROJECT } from "./scenario.ts";

/** How often at most the watermark is asked for (a call per issue), while lines wait for it. */
const MARK_EVERY_MS = 500;

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
  "branch_updated>awaiting_ci": "behind its base: the forge merged the base in; CI and the critic again",
  "conflict>revising": "in conflict with its base: the same session merges it and resolves",
  "human_approval>merging": "a maintainer approved the pull request; merging",
  "vault_requested>awaiting_approval": "held in the vault until a maintainer decides",
  "human_approval>awaiting_approval": "a maintainer approved the pull request; the vault decides",
  "vault_decision>merging": "the vault approved the merge; merging",
  "triage_proposal>escalated": "the triage agent answered: what went wrong, and a step to accept",
  "human_reply>revising": "a human replied; the session resumes with the reply",
  "pr_review>revising": "a maintainer requested changes; the same session revises with their words",
  "merge_held>awaiting_approval": "the merge waits for the maintainer who requested changes",
  "phase>awaiting_approval": "the session stopped at a dangerous step: the vault holds it",
  "vault_decision>running": "the vault approved the step; the same session resumes and runs it",
  "phase>done": "the action is done; the issue is closed with its summary",
};

const TITLE_WIDTH = Math.max(...[...ISSUES, PLANNED].map((issue) => issue.title.length));

type Line = { at: number; edge: Transition } | { at: number; text: string };

export class Progress {
  readonly #demo: Demo;
  readonly startedAt: number;
  readonly #print: (line: string) => void;
  #cursor = 0;
  readonly #seen = new Set<string>();
  #pending: Line[] = [];
  readonly #mark: RecordMark;
  #markedAt = 0;
  readonly #titles = new Map<number, string>(ISSUES.map((issue) => [issue.number, issue.title]));
  readonly #reasons = new Map<number, string | null>();
  readonly #notes = new Map<number, number>();

  constructor(demo: Demo, startedAt: number, print: (line: string) => void) {
    this.#demo = demo;
    this.startedAt = startedAt;
    this.#print = print;
    this.#mark = new RecordMark(demo);
  }

  /** Something a human or an agent did at `at`: shown among the edges, in its place. */
  note(text: string, at = Date.now()): void {
    this.#pending.push({ at, text });
  }

  /**
   * The edges D1 recorded since the last call, each once and at once (the driver acts on them); prints the
   * lines no earlier edge can still come before. The watermark is taken before D1 is read: an edge older than
   * it was in D1 by then.
   */
  async next(): Promise<Transition[]> {
    let until = this.#mark.value;
    if (this.#pending.length > 0 && Date.now() - this.#markedAt >= MARK_EVERY_MS) {
      this.#markedAt = Date.now();
      until = await this.#mark.advance();
    }
    const fresh = this.#read();
    await this.#show(until);
    return fresh;
  }

  /** Prints every line there is: the scenario is over, its summary follows. */
  async flush(): Promise<Transition[]> {
    const fresh = this.#read();
    await this.#show(Number.POSITIVE_INFINITY);
    return fresh;
  }

  #read(): Transition[] {
    const fresh: Transition[] = [];
    for (const edge of this.#demo.d1.transitionsAfter(PROJECT, this.#cursor)) {
      this.#cursor = Math.max(this.#cursor, edge.rowid);
      const key = `${edge.number}:${edge.seq}`;
      if (this.#seen.has(key)) continue;
      this.#seen.add(key);
      this.#pending.push({ at: edge.at, edge });
      fresh.push(edge);
    }
    return fresh;
  }

  async #show(until: number): Promise<void> {
    this.#pending.sort((a, b) => a.at - b.at);
    const settled = this.#pending.filter((line) => line.at < until);
    this.#pending = this.#pending.slice(settled.length);
    for (const line of settled) {
      this.#print("text" in line ? `${this.#stamp(line.at)}  ${line.text}` : await this.#describe(line.edge));
    }
  }

  /** The issue's title: the scenario's, else Conveyor's mirror of the forge, else the forge's own. */
  async #title(number: number): Promise<string> {
    let title = this.#titles.get(number) ?? this.#demo.d1.title(PROJECT, number);
    if (title === undefined) {
      const { sample } = this.#demo;
      title = (await sample.client(sample.accounts.maintainer).getIssue(number)).title;
    }
    this.#titles.set(number, title);
    return title.length > TITLE_WIDTH ? `${title.slice(0, TITLE_WIDTH - 1)}…` : title.padEnd(TITLE_WIDTH);
  }

  async #describe(edge: Transition): Promise<string> {
    const move = `${edge.from} → ${edge.to}`;
    const title = await this.#title(edge.number);
    return `${this.#stamp(edge.at)}  #${edge.number} ${title} ${move.padEnd(30)} ${this.#meaning(edge)}`;
  }

  #meaning(edge: Transition): string {
    const before = this.#reasons.get(edge.number);
    this.#reasons.set(edge.number, edge.reason);
    // The lifecycle's own reason (an escalation's question, why it was held) says more than the event.
    if (edge.reason && edge.reason !== before) return edge.reason;
    if (edge.event === "pr_opened") return "pull request opened";
    if (edge.event === "reply") {
      const n = (this.#notes.get(edge.number) ?? 0) + 1;
      this.#notes.set(edge.number, n);
      return `the session posted progress note ${n} on the issue`;
    }
    if (edge.from === "blocked" && edge.to === "queued")
      return "its dependencies are merged; a job waits for a runner";
    return MEANING[`${edge.event}>${edge.to}`] ?? edge.event;
  }

  #stamp(at: number): string {
    return `${((at - this.startedAt) / 1000).toFixed(1)}s`.padStart(7);
  }
}
