/** The operator API's answers, as far as the CLI reads them; unknown fields pass through to `--json`. */
import { z } from "zod";
import { pressureSchema } from "../src/runner-api/contract.ts";
import { SANDBOX_KINDS } from "../src/runner-api/sandbox.ts";

export const errorSchema = z.object({ error: z.string() });

export const projectSchema = z.looseObject({
  id: z.string(),
  forge: z.string(),
  apiUrl: z.string(),
  repo: z.string(),
  cloneUrl: z.string(),
  settings: z.record(z.string(), z.unknown()),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type ProjectAnswer = z.infer<typeof projectSchema>;

export const projectListSchema = z.object({ projects: z.array(projectSchema) });

/** `GET /projects/:id/formulas`: the action formulas, each with the secrets the project lacks. */
export const formulasSchema = z.object({
  formulas: z.array(z.looseObject({ name: z.string(), missingSecrets: z.array(z.string()) })),
  problems: z.array(z.object({ name: z.string(), error: z.string() })),
});

export const setupSchema = z.object({
  webhook: z.object({ id: z.number(), url: z.string(), events: z.array(z.string()) }),
  labels: z.array(z.string()),
});

const runnerSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  version: z.string(),
  /** Absent from a Worker older than the field, null for a runner older than it. */
  sandbox: z.enum(SANDBOX_KINDS).nullish(),
  lastSeenAt: z.number(),
  /** Whether it is there (src/runner-api/presence.ts); absent from a Worker older than the field. */
  presence: z.looseObject({ status: z.string() }).optional(),
  /** Why it claims nothing now (src/runner-api/contract.ts); absent from an older Worker, null while it claims. */
  pressure: pressureSchema.nullish(),
  jobs: z.array(
    z.looseObject({ project: z.string(), number: z.number(), kind: z.string(), attempt: z.number() }),
  ),
});

export const statusSchema = z.object({
  projects: z.array(
    z.object({
      id: z.string(),
      repo: z.string().nullable(),
      forge: z.string().nullable(),
      states: z.record(z.string(), z.number()),
      total: z.number(),
      /** Absent from a Worker older than the fields. */
      costUsd: z.number().optional(),
      todayUsd: z.number().optional(),
    }),
  ),
  runners: z.array(runnerSchema),
});

export const registrationTokenSchema = z.object({
  token: z.string(),
  expiresAt: z.number(),
  projects: z.array(z.string()).nullable(),
});

export const issueViewSchema = z.looseObject({
  project: z.string(),
  number: z.number(),
  state: z.string(),
  iteration: z.number(),
  branch: z.string().nullable(),
  sessionId: z.string().nullable(),
  headSha: z.string().nullable(),
  prNumber: z.number().nullable(),
  ciFixes: z.number(),
  criticRounds: z.number(),
  blockers: z.array(z.string()),
  reason: z.string().nullable(),
  /** What the issue's sessions cost in all; absent from a Worker older than the field. */
  costUsd: z.number().optional(),
  /** The critic's rounds in all (`criticRounds` counts changes requested in a row); absent from older Workers. */
  reviewRounds: z.number().optional(),
  timers: z.array(z.looseObject({ kind: z.string(), dueAt: z.number() })),
  /** Effects Conveyor gave up on; absent from a Worker older than the field. */
  deadLetters: z
    .array(z.looseObject({ id: z.number(), kind: z.string(), error: z.string(), at: z.number() }))
    .optional(),
  /** The latest escalation, its cause and the triage's proposal for it; absent from older Workers. */
  escalation: z.looseObject({ n: z.number(), cause: z.string(), from: z.string() }).nullish(),
  recovering: z.boolean().optional(),
  proposal: z
    .looseObject({ diagnosis: z.string(), agent: z.string(), step: z.looseObject({ kind: z.string() }) })
    .nullish(),
  /** Effects dropped because the issue had moved on; absent from a Worker older than the field. */
  droppedEffects: z.array(z.looseObject({ kind: z.string(), reason: z.string(), at: z.number() })).optional(),
  history: z.array(
    z.looseObject({
      seq: z.number(),
      event: z.string(),
      from: z.string(),
      to: z.string(),
      outcome: z.enum(["applied", "rejected", "parked"]),
      reason: z.string().nullable(),
      cause: z.object({ kind: z.string(), id: z.string() }),
      at: z.number(),
    }),
  ),
});

/** `POST /projects/:project/issues/:number/dead-letters/:id/redeliver`. */
export const redeliveredSchema = z.looseObject({ redelivered: z.number(), kind: z.string() });

/** One page of `GET /projects/:project/issues`: the D1 index, by number. */
export const issueListSchema = z.object({
  issues: z.array(
    z.looseObject({
      number: z.number(),
      state: z.string(),
      iteration: z.number(),
      branch: z.string().nullable(),
      prNumber: z.number().nullable(),
      reason: z.string().nullable(),
      updatedAt: z.number(),
    }),
  ),
  next: z.number().nullable(),
});

/** 200 from the events route: applied now, or earlier under the same id (a 409 is an error). */
export const applyResultSchema = z.object({
  duplicate: z.boolean(),
  seq: z.number(),
  outcome: z.literal("applied"),
  state: z.string(),
  reason: z.string().nullable(),
});

/** One agent run as `GET /projects/:project/agents/:name/runs/:id` answers it. */
export const agentRunSchema = z.looseObject({
  id: z.string(),
  agent: z.string(),
  trigger: z.string(),
  status: z.string(),
  costUsd: z.number(),
  decisions: z
    .array(
      z.looseObject({
        status: z.enum(["accepted", "rejected"]),
        reason: z.string().optional(),
        applied: z.boolean().optional(),
        /** The forge refused the accepted output for good. */
        failed: z.string().optional(),
        /** The vault item a dangerous output waits in (or waited in). */
        vault: z.string().optional(),
        output: z.looseObject({ type: z.string() }),
      }),
    )
    .nullable(),
  error: z.string().nullable(),
  createdAt: z.number(),
});

/** `GET /projects/:project/agents`: the catalog, each agent's last run, the definitions that do not parse. */
export const agentListSchema = z.object({
  agents: z.array(
    z.looseObject({
      name: z.string(),
      source: z.string(),
      schedule: z.string().nullable(),
      enabled: z.boolean(),
      lastRun: agentRunSchema.nullable(),
    }),
  ),
  problems: z.array(z.object({ name: z.string(), source: z.string(), error: z.string() })),
});

export const agentRunStartedSchema = z.object({ runId: z.string() });

/** A vault item as the API lists it (src/vault/queries.ts). */
export const vaultItemSchema = z.looseObject({
  project: z.string().optional(),
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  state: z.string(),
  verdict: z.looseObject({ verdict: z.string(), reason: z.string() }).nullable(),
  audit: z.array(
    z.looseObject({ action: z.string(), by: z.string(), at: z.number(), reason: z.string().optional() }),
  ),
  createdAt: z.number(),
  expiresAt: z.number(),
});
export const vaultListSchema = z.object({ items: z.array(vaultItemSchema) });

/** `GET /projects/:project/health`: the supervisor's findings that stand, and when it checked. */
export const healthSchema = z.object({
  project: z.string(),
  checkedAt: z.number().nullable(),
  nextAt: z.number().nullable(),
  error: z.string().nullable(),
  findings: z.array(
    z.looseObject({
      key: z.string(),
      priority: z.string(),
      check: z.string(),
      subject: z.string(),
      summary: z.string(),
      /** The operator's alone (a runner's host figures): never on a forge issue. */
      detail: z.string().optional(),
      openedAt: z.number(),
      forgeIssue: z.number().nullable(),
    }),
  ),
});

const figures = {
  merged: z.number(),
  finished: z.number(),
  leadTimeP50Ms: z.number().nullable(),
  leadTimeP90Ms: z.number().nullable(),
  firstPassCiRate: z.number().nullable(),
  criticRoundsPerIssue: z.number().nullable(),
  humanRoundsPerIssue: z.number().nullable(),
  escalations: z.number(),
  escalationRate: z.number().nullable(),
  costUsd: z.number(),
  costPerMergedUsd: z.number().nullable(),
  cacheHitRatio: z.number().nullable(),
};

/** `GET /outcomes`, `GET /projects/:id/outcomes` (src/outcomes/outcomes.ts). */
export const outcomesSchema = z.object({
  project: z.string().nullable(),
  from: z.string(),
  to: z.string(),
  days: z.array(z.object({ day: z.string(), ...figures })),
  totals: z.object(figures),
  escalationCauses: z.array(z.object({ cause: z.string(), label: z.string(), count: z.number() })),
  waiting: z.array(z.object({ state: z.string(), ms: z.number() })),
});

/** `GET`/`POST /projects/:project/backfill`: where the mirror's backfill stands. */
export const backfillSchema = z.object({
  project: z.string(),
  phase: z.enum(["idle", "running", "waiting", "done", "refused"]),
  pass: z.number(),
  page: z.number(),
  listed: z.number(),
  startedAt: z.number().nullable(),
  finishedAt: z.number().nullable(),
  nextAt: z.number().nullable(),
  reason: z.string().nullable(),
});
