/** The boundary schema of lifecycle events: whatever reaches an IssueDO is parsed with it first. */
import { z } from "zod";
import { proposalSchema } from "./agents/proposal-schema.ts";
import { MAX_POLL_MS } from "./domain/backoff.ts";
import { INFRA_CAUSES, MAX_CI_RERUNS } from "./domain/ci-rerun.ts";
import { MAX_CHECK_TEXT_CHARS, MAX_CI_EXCERPT_CHARS, MAX_FAILED_CHECKS } from "./domain/ci-verdict.ts";
import { MAX_FEEDBACK_CHARS } from "./domain/human-review.ts";
import {
  DEFAULT_LIMITS,
  EFFECT_RETRY_BASE_MAX_MS,
  EFFECT_RETRY_BASE_MIN_MS,
  type LifecycleEvent,
  PHASES,
  TIMERS,
} from "./domain/lifecycle.ts";
import { VAULT_ID } from "./domain/vault.ts";
import { projectIdSchema } from "./projects/config.ts";

const refs = z.array(z.string().min(1).max(200)).max(200);
const text = (max: number) => z.string().max(max);
const actor = z.string().min(1).max(100);
const vaultItemId = z.string().regex(VAULT_ID);
const id = z.number().int().positive();
const pullRef = { number: z.number().int().positive(), byConveyor: z.boolean() };
const gateFindings = {
  blockers: refs,
  cycle: refs.optional(),
  tooMany: z.number().int().positive().optional(),
};

export const lifecycleEventSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("triage"),
    ...gateFindings,
    // GitHub caps an issue's title at 256 characters and its body at 65 536.
    brief: z.object({ title: text(1_000), body: text(65_536), by: actor }).optional(),
    action: z.object({ formula: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/) }).optional(),
  }),
  z.object({ type: z.literal("dependencies"), ...gateFindings }),
  z.object({
    type: z.literal("dispatched"),
    jobId: z.string().min(1),
    runnerId: z.string().min(1),
    attempt: z.number().int().min(1).optional(),
  }),
  z.object({
    type: z.literal("lease_unconfirmed"),
    jobId: z.string().min(1),
    count: z.number().int().min(1),
    retryInMs: z.number().int().min(0).optional(),
    gaveUp: z.literal(true).optional(),
  }),
  z.object({
    type: z.literal("phase"),
    phase: z.enum(PHASES),
    jobId: z.string().min(1).optional(),
    attempt: z.number().int().min(1).optional(),
    reason: text(2_000).optional(),
    sessionId: z.string().min(1).optional(),
    branch: z.string().min(1).optional(),
    headSha: z
      .string()
      .regex(/^[0-9a-f]{7,64}$/)
      .optional(),
    summary: text(4_000).optional(),
    refused: text(2_000).optional(),
    step: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,39}$/)
      .optional(),
    lost: z.literal(true).optional(),
  }),
  z.object({
    type: z.literal("ci"),
    result: z.enum(["green", "red"]),
    headSha: z.string().min(1),
    excerpt: text(MAX_CI_EXCERPT_CHARS).optional(),
    checks: z
      .array(
        z.object({
          name: z.string().min(1).max(MAX_CHECK_TEXT_CHARS),
          outcome: z.string().max(100),
          description: text(MAX_CHECK_TEXT_CHARS).optional(),
          url: z
            .url({ protocol: /^https?$/ })
            .max(2_000)
            .optional(),
          cause: z.enum(INFRA_CAUSES).optional(),
        }),
      )
      .max(MAX_FAILED_CHECKS)
      .optional(),
    fingerprint: z.string().min(1).max(128).optional(),
    rerun: z
      .array(
        z.discriminatedUnion("ci", [
          z.object({ ci: z.literal("woodpecker"), repoId: id, pipeline: id }),
          z.object({ ci: z.literal("github-actions"), suiteId: id }),
        ]),
      )
      .min(1)
      .max(MAX_FAILED_CHECKS)
      .optional(),
    rerunRefused: text(2_000).optional(),
    infrastructure: z.literal(true).optional(),
  }),
  z.object({
    type: z.literal("head_mismatch"),
    branch: z.string().min(1).max(200),
    claimed: z.string().min(1).max(64),
    actual: z.string().min(1).max(64).nullable(),
    seenBy: z.literal("ci").optional(),
  }),
  z.object({
    type: z.literal("review"),
    verdict: z.enum(["APPROVE", "REQUEST_CHANGES", "BLOCK"]),
    summary: text(20_000),
    needsHumanApproval: text(2_000).min(1).optional(),
    headSha: z.string().min(1).max(64).optional(),
  }),
  z.object({
    type: z.literal("review_failed"),
    reason: text(2_000),
    headSha: z.string().min(1).max(64).optional(),
  }),
  z.object({ type: z.literal("branch_updated"), headSha: z.string().min(1).max(64) }),
  z.object({ type: z.literal("conflict"), files: z.array(z.string().min(1).max(1_000)).max(200) }),
  z.object({ type: z.literal("pr_opened"), ...pullRef }),
  z.object({ type: z.literal("merge_confirmed"), sha: z.string().min(1).optional(), ...pullRef }),
  z.object({ type: z.literal("merge_failed"), reason: text(2_000) }),
  z.object({ type: z.literal("merge_needs_approval"), reason: text(2_000) }),
  z.object({ type: z.literal("pr_closed"), ...pullRef }),
  z.object({ type: z.literal("issue_closed"), unmerged: z.literal(true).optional() }),
  z.object({ type: z.literal("human_reply"), author: actor, text: text(20_000) }),
  z.object({
    type: z.literal("pr_review"),
    by: actor,
    verdict: z.enum(["approved", "changes_requested", "commented", "dismissed"]),
    text: text(MAX_FEEDBACK_CHARS),
    writer: z.boolean(),
    round: z.boolean(),
    lines: z.number().int().min(0).max(10_000),
  }),
  z.object({
    type: z.literal("merge_command"),
    by: actor,
    overrides: z.array(id).max(100),
  }),
  z.object({
    type: z.literal("merge_held"),
    holds: z
      .array(z.object({ by: actor, reviewId: id }))
      .min(1)
      .max(100),
  }),
  z.object({ type: z.literal("human_approval"), by: actor, headSha: z.string().min(1).max(64).optional() }),
  z.object({ type: z.literal("vault_requested"), itemId: vaultItemId }),
  z.object({
    type: z.literal("vault_decision"),
    itemId: vaultItemId,
    decision: z.enum(["approved", "rejected", "expired"]),
    by: actor,
    reason: text(2_000).optional(),
  }),
  z.object({ type: z.literal("abandon"), by: actor }),
  z.object({ type: z.literal("retry"), by: actor }),
  z.object({ type: z.literal("timeout"), timer: z.enum(TIMERS) }),
  z.object({ type: z.literal("budget_exceeded"), reason: text(2_000) }),
  z.object({
    type: z.literal("reply"),
    thread: z.number().int().positive(),
    text: text(2_000),
    to: actor.optional(),
    quote: z.object({ by: text(200), text: text(2_000) }).optional(),
  }),
  z.object({
    type: z.literal("effect_failed"),
    effect: text(100),
    error: text(2_000),
    transient: z.literal(true).optional(),
    deadLetter: z.number().int().positive().optional(),
  }),
  z.object({ type: z.literal("forge_recovered"), answered: z.boolean() }),
  z.object({ type: z.literal("triage_proposal"), proposal: proposalSchema }),
  z.object({ type: z.literal("accept"), by: actor }),
]) satisfies z.ZodType<LifecycleEvent>;

export const CAUSE_KINDS = ["delivery", "job", "cron", "operator", "timer", "system"] as const;
export type CauseKind = (typeof CAUSE_KINDS)[number];

export const limitsSchema = z.object({
  maxCiFixes: z.number().int().min(0).max(20),
  ciReruns: z.number().int().min(0).max(MAX_CI_RERUNS).optional(),
  maxCriticIterations: z.number().int().min(1).max(20),
  maxHumanRounds: z.number().int().min(0).max(50).default(DEFAULT_LIMITS.maxHumanRounds),
  maxUpdates: z.number().int().min(0).max(20).default(DEFAULT_LIMITS.maxUpdates),
  maxEffectAttempts: z.number().int().min(1).max(100).optional(),
  pollMaxMs: z.number().int().min(1_000).max(MAX_POLL_MS).optional(),
  effectRetryBaseMs: z.number().int().min(EFFECT_RETRY_BASE_MIN_MS).max(EFFECT_RETRY_BASE_MAX_MS).optional(),
  retentionDays: z.number().int().min(1).max(3650).optional(),
});

/** Milliseconds per timer; a kind left out keeps what the DO has (its default at first). */
export const timeoutsSchema = z.partialRecord(z.enum(TIMERS), z.number().int().positive());

/** One event for one issue, with the id it is deduplicated by and what caused it. */
export const envelopeSchema = z.object({
  /** Dedupe key: the same id is applied once, however often it arrives. */
  id: z.string().min(1).max(300),
  project: projectIdSchema,
  number: z.number().int().positive(),
  cause: z.object({ kind: z.enum(CAUSE_KINDS), id: z.string().min(1).max(300) }),
  event: lifecycleEventSchema,
  /** The project's current caps and timeouts; the DO keeps the latest it was given. */
  limits: limitsSchema.optional(),
  timeouts: timeoutsSchema.optional(),
  /**
   * The webhook delivery this event finishes: the DO records it in D1 together with the event's edge, so
   * the Worker's answer waits for no write of its own after the apply.
   */
  delivery: z
    .object({
      id: z.string().min(1).max(400),
      contentKey: z.string().min(1).max(200),
      event: z.string().min(1).max(100),
      number: z.number().int().positive().nullable(),
    })
    .optional(),
});
export type EventEnvelope = z.infer<typeof envelopeSchema>;
