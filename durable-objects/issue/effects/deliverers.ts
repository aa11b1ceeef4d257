/**
 * Deliverers of lifecycle effects, by kind. The IssueDO hands each effect from its outbox to the deliverer
 * of its kind, in order; a deliverer that throws is retried with backoff, so it must be idempotent under
 * `key` (the same key is sent on every attempt of the same effect). What a deliverer learns that the lifecycle
 * must know (a pull request's number) it returns as an event, recorded together with the acknowledgement.
 */
import type { DeadLetter, HistoryEntry, IssueSummary } from "../../../src/contracts/issue-object.ts";
import type { Effect, LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import type { Env } from "../../../src/env.ts";
import { CI_RERUN_DELIVERERS } from "./ci-rerun.ts";
import { FORGE_DELIVERERS } from "./forge.ts";
import { JOB_DELIVERERS } from "./jobs.ts";
import { MERGE_QUEUE_DELIVERERS } from "./merge-queue.ts";
import { RECOVERY_DELIVERERS } from "./recovery.ts";
import { REVIEW_DELIVERERS } from "./review.ts";
import { SPLIT_DELIVERERS } from "./split.ts";
import { TRIAGE_DELIVERERS } from "./triage.ts";
import { VAULT_DELIVERERS } from "./vault.ts";
import { VAULT_STEP_DELIVERERS } from "./vault-step.ts";

export type EffectContext = {
  env: Env;
  /** Stable per effect: `<project>#<number>:<seq>:<index>`. */
  key: string;
  /** The issue as it was when this attempt began; the effect was checked against it (effect-basis.ts). */
  issue: IssueSummary;
  /**
   * Checks the effect against the issue as it is now, after an await during which the issue may have moved
   * on: why it must not act any more, or null.
   */
  recheck(): string | null;
  /** When the effect was decided (its outbox row was written); absent for an effect delivered outside the outbox. */
  decidedAt?: number;
  /** Puts the issue's dead letters `ids` back in the outbox, each in its lane where it was (the IssueDO's). */
  resend?(ids: readonly number[]): void;
  /** The issue's recent history and dead letters, as its object holds them (the IssueDO's). */
  record?(history: number, deadLetters: number): { history: HistoryEntry[]; deadLetters: DeadLetter[] };
};

/**
 * Thrown by a deliverer that found, after an await, that the issue moved on from what the effect was decided
 * on: the effect is dropped, with this reason recorded, and never retried.
 */
export class EffectDropped extends Error {}

export type Deliverer<K extends Effect["kind"]> = (
  effect: Extract<Effect, { kind: K }>,
  ctx: EffectContext,
) => Promise<LifecycleEvent | undefined>;

export type Deliverers = { [K in Effect["kind"]]?: Deliverer<K> };

/** Kinds without a deliverer yet wait in the outbox, durably, until one is deployed. */
export const DELIVERERS: Deliverers = {
  ...FORGE_DELIVERERS,
  ...JOB_DELIVERERS,
  ...REVIEW_DELIVERERS,
  ...MERGE_QUEUE_DELIVERERS,
  ...CI_RERUN_DELIVERERS,
  ...RECOVERY_DELIVERERS,
  ...SPLIT_DELIVERERS,
  ...TRIAGE_DELIVERERS,
  ...VAULT_DELIVERERS,
  ...VAULT_STEP_DELIVERERS,
};

/**
 * Effects go out in order within a lane (a cancel never overtakes the enqueue it cancels, the parts of a split
 * are filed before the close); lanes do not wait for each other, so a forge outage never holds back the job
 * queue, nor a merge waiting for its turn the issue's other forge writes.
 */
export const LANES = {
  jobs: ["enqueue_job", "cancel_jobs"],
  forge: [
    "labels",
    "comment",
    // Before the notice that names its item, after the label; an approval follows the request it decides.
    "vault_request",
    "vault_approve",
    "notify_human",
    "open_pull_request",
    "describe_pull_request",
    "request_review",
    // The parts are filed, and named on the issue, before it is closed.
    "split_issue",
    "close_issue",
    "delete_branch",
  ],
  dependents: ["notify_dependents"],
  // A merge may wait for the project's merge turn behind the whole queue: the replies, labels and notices
  // decided meanwhile never wait with it. check_merged reads the answer of the merge ahead of it (and waits
  // for the number of a pull request still being opened in the forge lane). What follows a merge (close_issue,
  // delete_branch) is decided on merge_confirmed: the merge's own answer, or the forge's word that it is
  // merged, which leaves a merge still waiting here stale (dropped, never sent).
  merge: ["merge", "check_merged"],
  // The merge timer's check must not wait behind the merge it asks about, stuck on a forge that does not answer.
  merge_check: ["check_merge"],
  // The turn passes on at once: never behind a merge that waits for it, nor a slow forge.
  merge_queue: ["leave_merge_queue"],
  // A re-run is asked for before the watch that reads its result.
  ci: ["rerun_ci", "watch_ci"],
  // An action's dangerous step for the vault, and an item fired or withdrawn: never behind a slow forge.
  vault: ["vault_step", "vault_fired", "vault_withdraw"],
  // The triage of an escalation reads the repository's agents: never behind a slow forge lane.
  triage: ["request_triage"],
  // Waiting for a forge that does not answer: never behind the effects that wait for it.
  recovery: ["probe_forge", "resend_dead_letters"],
} as const satisfies Record<string, readonly Effect["kind"][]>;

// Every effect kind sits in a lane: this line stops compiling when a new kind has none.
const everyKindHasALane: [Exclude<Effect["kind"], (typeof LANES)[keyof typeof LANES][number]>] extends [never]
  ? true
  : never = true;
void everyKindHasALane;

export const effectChannel = (kind: Effect["kind"]) => `effect:${kind}`;

/** The outbox channels of each lane whose kinds have a deliverer. */
export const laneChannels = (deliverers: Deliverers = DELIVERERS): string[][] =>
  Object.values(LANES).map((kinds) => kinds.filter((kind) => deliverers[kind]).map(effectChannel));
