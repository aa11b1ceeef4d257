import { edges, STATES, TERMINAL_STATES } from "./lifecycle.ts";
import { FORGE_NOTES } from "./lifecycle-forge-notes.ts";

/**
 * A Mermaid state diagram of the lifecycle table, one arrow per (from, to) with its events. `kind: "action"`:
 * the edges where an action issue's rules differ from a code issue's (every other edge is shared).
 */
export function lifecycleMermaid(kind: "code" | "action" = "code"): string {
  const grouped = new Map<string, string[]>();
  for (const { from, event, to } of edges(kind)) {
    const key = `${from} --> ${to}`;
    const events = grouped.get(key) ?? [];
    if (!events.includes(event)) events.push(event);
    grouped.set(key, events);
  }
  const lines = ["stateDiagram-v2", ...(kind === "code" ? ["  [*] --> new"] : [])];
  for (const [arrow, events] of grouped) lines.push(`  ${arrow}: ${events.join(", ")}`);
  for (const state of STATES)
    if (TERMINAL_STATES.includes(state) && lines.some((l) => l.includes(`--> ${state}:`)))
      lines.push(`  ${state} --> [*]`);
  return `${lines.join("\n")}\n`;
}

export function lifecycleDoc(): string {
  return [
    "# Issue lifecycle",
    "",
    "Generated from `src/domain/lifecycle.ts` by `npm run docs:lifecycle`; a test fails when it is stale.",
    "Only `running` and `revising` hold a runner slot.",
    "",
    "Every waiting state has a timer (`src/domain/timers.ts`, durations in the project's `timeouts`), armed when",
    "the state is entered and kept across edges that stay in it: in `queued`, and in `running`/`revising` until",
    "the job is dispatched, `dispatch` (24 h) says on the issue that no runner has started its job, and again",
    "every period, the issue keeping its place; `timeout` leaves `running`/`revising` (session, from dispatch),",
    "`awaiting_ci` (ci), `awaiting_review` (review) and `escalated` (escalation); in `merging` (merge) it asks",
    "the forge whether the pull request got merged, and in `escalated` (renotify) it comments again. A held merge",
    "(`awaiting_approval`) waits on its vault item instead, whose expiry (`vault.expiryMs`, 48 h) answers it",
    "(docs/vault.md). `effect_failed`: an effect Conveyor gave up on (see the dead letter in docs/operating.md).",
    "",
    "```mermaid",
    lifecycleMermaid().trimEnd(),
    "```",
    "",
    ...PEOPLE,
    ...ACTIONS,
    "```mermaid",
    lifecycleMermaid("action").trimEnd(),
    "```",
    "",
    ...STAYING_CURRENT,
    ...FORGE_NOTES,
    ...GUARANTEES,
  ].join("\n");
}

/** People's reviews and commands on the pull request (src/domain/human-review.ts). */
const PEOPLE = [
  "## People on the pull request",
  "",
  "`pr_review` carries a person's review or plain comment on the issue's pull request (who, the verdict, the text",
  "the session reads with the lines it points at, whether they have write access, whether it asks for a round;",
  "[operating](operating.md#people-on-the-pull-request)). Anyone's is recorded; only a writer's is obeyed. While a",
  "session works (`blocked`, `queued`, `running`, `revising`) the words wait in the issue (`feedback`) and go with",
  "the next continuation, whatever queues it; one that asks for a round makes the session's push start it at once",
  "(`phase` → `revising`, the issue staying there for the next session). Anywhere else a round stops what waited",
  "— CI, the critic, a merge queued or held — and enters `revising` with a `revise` job (`resume` from",
  "`escalated`), counted in `humanRounds` against `maxHumanRounds`, never against the critic's cap. The merge",
  "effect lists the reviews before merging: writers' standing change requests answer `merge_held`",
  "(`merging` → `awaiting_approval`, `heldBy`), which the holder's approval (`human_approval`), a dismissal",
  "(`pr_review` `dismissed`) or a writer's `/conveyor merge` (`merge_command`, which records the reviews it",
  "overrides) sends back to `merging`, where the forge's reviews are read again.",
  "",
];

/** How an action issue's lifecycle differs; its own diagram follows. */
const ACTIONS = [
  "## Action issues",
  "",
  "An issue labelled `action` (its triage names a formula, see [actions.md](actions.md)) follows the same table",
  "where its rules are not its own; it never opens a pull request. Its session ends with `PHASE:done` (`done`: the",
  "issue is closed with the session's summary), `PHASE:vault` + `Step: <id>` (`awaiting_approval`: the step",
  "waits for the vault; approved resumes the same session with that step allowed, rejected or expired stops",
  "the action with a comment), or `PHASE:escalate` (`escalated`: a human's reply resumes the same session; the",
  "`idle` timer, 4 h, stops it). The edges that differ from a code issue's:",
  "",
];

/** The rules behind the `branch_updated` and `conflict` edges, which the diagram cannot say. */
const STAYING_CURRENT = [
  "## Staying current with the base",
  "",
  "Before the critic reviews (`request_review`) and again before merging (`merge`), Conveyor reads the pull",
  "request's mergeable state from the forge (GitHub: `mergeable` and `mergeable_state`; Gitea and Forgejo:",
  "`mergeable` and whether `merge_base` is still the base branch's head) and decides",
  "(`src/domain/stay-current.ts`):",
  "",
  "- **current**: the review or the merge goes ahead;",
  "- **behind, no conflict**: the forge merges the base into the head (GitHub `PUT .../update-branch`, Gitea",
  "  and Forgejo `POST .../pulls/{n}/update`): `branch_updated` with the new head, back to `awaiting_ci`;",
  "- **in conflict**: `conflict`, and an `update` job resumes the issue's session with the conflicting files",
  "  and what landed on the base meanwhile; the session merges the base, resolves, commits, and its push goes",
  "  through CI and the critic like any;",
  "- **unknown** (the forge is still computing): asked again with the outbox's backoff;",
  "- **not mergeable, no files named** (Gitea and Forgejo): their `mergeable` is also false while they re-check",
  "  a pull request in the background after its head or base moved (right after another pull request of the",
  "  project merged), so it is read again for about 3 s before it counts as a conflict; a head that contains the",
  "  base's head cannot conflict, and there false is only the re-check (asked again with the outbox's backoff).",
  "",
  "Every update counts against `maxUpdates` (default 3); the next one escalates, naming the conflicting files.",
  "",
  "A branch found elsewhere than the issue's head by a reader of CI's verdict (the CI webhook, reconciliation,",
  "the CI watch) escalates (`head_mismatch`) only while the issue waits for CI: those readers may take it from",
  "D1, which lags the issue's object, and once the issue waits for the critic or the merge its own update may",
  "have moved the branch before its `branch_updated` is recorded. The review and the merge check the head",
  "themselves.",
  "",
  "They tell the forge's update from someone's push by the forge's history, not by timing",
  "(`src/domain/head-move.ts`): an attempt that asked the forge to update and died before recording it (an",
  "alarm cancelled, the object evicted, the answer lost) leaves the next attempt a moved branch. A new head",
  "that is a merge commit whose first parent is the issue's head and whose other parent is on the base (the",
  "base's head or one of its last 10 first parents; GitHub `GET .../commits/{ref}`, Gitea and Forgejo",
  "`GET .../git/commits/{sha}`: `parents`) is the base merged in, by the forge or by a human by hand:",
  "`branch_updated` with the new head, CI and the critic again, counted against `maxUpdates`. Anything else",
  "is someone's push: before the review, `head_mismatch` escalates; at the merge, the forge refuses the",
  "pinned head (`merge_failed`).",
  "",
  "A project's merges take turns (`durable-objects/project/merge-turns.ts`): the forges' merge APIs pin the head, not",
  "the base, so two merges checked at once would each find the base current and the second would land on a",
  "base its head was never checked against. The turn lasts from the check to the forge's answer; a merge",
  "waiting for it is tried again with backoff, bounded by the `merge` timer. A merge by someone else between",
  "Conveyor's check and its merge is not covered.",
  "",
  "**The critic's approval is bound to the head sha it reviewed.** Every new head gets CI and a new verdict,",
  "a base-only update by the forge included: the change's own diff may be unchanged, but what it now runs",
  "against is not, and a branch that moved is never merged on a verdict about another commit. The cost is one",
  "more critic call per update. A review from a runner (`critic.runsOn: runner`,",
  "[agents](agents.md#the-reviewer-the-critic-on-a-runner)) names the sha it reviewed: its `review` or",
  "`review_failed` event is refused as stale when the issue's head is another, and the Worker drops it before",
  "posting anything when the pull request's head on the forge moved.",
  "",
  "**So is a human's approval of a held merge** (`awaiting_approval`: a change to a protected path, or branch",
  "protection asking for approvals Conveyor's own account cannot give, found when the critic approves or when",
  "the forge refuses the merge for them, `merge_needs_approval`): the",
  "approving review is for the commit it names, and an approval of another commit (a late or repeated webhook)",
  "is refused. Each held head is a `protected_merge` item of the vault (docs/vault.md): a review, the operator,",
  "`/conveyor approve <id>` all decide that item, and the vault's `vault_decision` moves the issue on.",
  "When the base moved on while the merge waited for the human, the merge finds the branch behind,",
  "the forge merges the base in, and the new head goes through CI and the critic and waits in",
  "`awaiting_approval` again: Conveyor comments that the earlier approval does not carry over and asks for",
  "another. A protected path's change is never merged in a combination no human approved; what the base",
  "brought in may touch the same paths. The updates count against `maxUpdates`, so a busy base escalates",
  "rather than asking forever.",
  "",
];

/** What holds however events and deliveries interleave: the guarantees the IssueDO keeps around the table. */
const GUARANTEES = [
  "## Guarantees around the table",
  "",
  "**Every effect acts on what it was decided on.** The IssueDO writes each effect to its outbox with the",
  "state, head sha and vault item of the edge that caused it (`src/domain/effect-basis.ts`), and its deliverer",
  "checks them again before acting: a `merge` merges only the head that was reviewed and approved, only while",
  "the issue is `merging` (so never once it is abandoned); `request_review`, `watch_ci` and `vault_request`",
  "act only in their state and at their head; `vault_approve` only for the item the issue still waits on. A",
  "merge checks again once it has the project's merge turn, since the issue may have moved on while it waited.",
  "An effect whose basis no longer holds (a retry, a late delivery, a dead letter sent again) is dropped, kept",
  "with why on the issue (its page and `conveyor issue show`: `dropped merge: it was decided in merging at …`).",
  "Labels and comments are not bound: each says what happened when it happened.",
  "",
  "**An event that came early waits; a rejection spends an id only when no later state can take it.** Senders",
  "send each event once, and an event's id is applied or rejected once. An event that only came before the",
  "state that accepts it (`src/domain/early-events.ts`) is parked on the issue instead: a held merge's or an",
  "action step's `vault_decision` before the issue recorded the item's id (`vault_requested`), a `ci` result",
  "for a head the running session has pushed but not reported yet. It is noted in the history (`parked`), kept",
  "under its own id (sent again, it is the same parked event), and applied once an edge brings the state that",
  "takes it; it is rejected, its id spent, when an edge leaves no later state that could (the session",
  "escalated instead), after 24 h on the issue's alarm, or when more than 20 wait (the oldest gives way).",
  "",
  "**A vault item lives only as long as the wait that asked for it.** An edge that leaves `awaiting_approval`",
  "other than by the item's own decision withdraws the item (`vault_withdraw`), and a `vault_requested` that",
  "reaches an issue already gone from that state withdraws its item at once: nobody can approve it any more,",
  "and an approval nothing acted on is never recorded as fired. A held merge's item fires when the issue acts",
  "on its approval (`vault_fired`, with the merge); an action step's when its job runs the step.",
  "",
  "**A lease nobody confirms is not free.** A new lease costs no attempt until its runner confirms it, but the",
  "ProjectDO counts such leases in a row (`src/domain/job-queue.ts`): from the third the job is offered to no",
  "runner until a backoff ends (30 s doubling to 15 min) and the issue hears `lease_unconfirmed` (its reason",
  "and a comment say why); after `jobs.maxUnconfirmed` (10) the job fails and the issue escalates with",
  "`cancel_jobs`. A confirmed lease ends the streak; a revoked runner's lease is not counted. An issue's reap",
  "runs before any job of that issue queued after it: left from an abandonment, it would otherwise delete a",
  "retried session's worktree and transcript.",
  "",
  "**Humans on the forge.** An issue closed while it has a pull request (`issue_closed`) waits for that pull",
  "request's merged state (`check_merged`): a held or reviewed change a human merged by hand ends `merged`, even",
  "when the issue's closing webhook came first. A pull request closed unmerged (`pr_closed`) abandons the issue",
  "and is let go: a retry's next push opens a new one.",
  "",
  "**Done once, even when asked twice.** A `request_review` delivered again (its first attempt failed after the",
  "critic answered) applies the report saved under its key instead of a second, paid, critic call. An action",
  "step's firing asked again by the same job attempt (its answer lost) is told it fired, so the step still",
  "runs, once; a later attempt is refused. A runner retries a job's `complete` for as long as its lease can",
  "still be valid, so a finished session is not run again for a lost report (`runner/reporter.ts`).",
  "",
];
