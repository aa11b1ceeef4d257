/** A project's registration: what the operator sends (`PUT /api/v1/projects/:project`) and its defaults. */
import { z } from "zod";
import { DEFAULT_POLL_MAX_MS, MAX_POLL_MS } from "../domain/backoff.ts";
import { type BudgetLimits, DEFAULT_EVENT_DAILY_USD } from "../domain/budget.ts";
import { DEFAULT_CI_RERUNS, MAX_CI_RERUNS } from "../domain/ci-rerun.ts";
import {
  DEFAULT_EFFECT_RETRY_BASE_MS,
  DEFAULT_LIMITS,
  DEFAULT_MAX_EFFECT_ATTEMPTS,
  DEFAULT_RETENTION_DAYS,
  DEFAULT_TIMEOUTS_MS,
  EFFECT_RETRY_BASE_MAX_MS,
  EFFECT_RETRY_BASE_MIN_MS,
  type TimerKind,
} from "../domain/lifecycle.ts";
import { MERGE_METHOD_SETTINGS } from "../domain/merge-rules.ts";
import { PROMPT_CACHE_SETTINGS } from "../domain/prompt-cache.ts";
import { DEFAULT_PROTECTED_PATHS } from "../domain/protected-paths.ts";
import { UP_TO_DATE_SETTINGS } from "../domain/up-to-date.ts";
import { DEFAULT_VAULT_EXPIRY_MS, VAULT_KINDS } from "../domain/vault.ts";

export const PROJECT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const projectIdSchema = z
  .string()
  .regex(PROJECT_ID, "project ids are lowercase letters, digits and dashes");

const labelName = z.string().min(1).max(50);
const usd = z.number().min(0).max(100_000);
/** A wait: one minute to thirty days, in milliseconds. */
const duration = z
  .number()
  .int()
  .min(60_000)
  .max(30 * 24 * 60 * 60_000);

/** A host name a session may reach (`registry.npmjs.org`), or all names under one (`*.pythonhosted.org`). */
const allowedDomain = z
  .string()
  .max(253)
  .regex(
    /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    "a lowercase host name, optionally starting with *.",
  );

/** A login (`alice`) or a team (`acme/reviewers`) that foreign text Conveyor posts may mention. */
const mentionName = z
  .string()
  .max(100)
  .regex(/^[A-Za-z0-9_](?:[\w.-]*\w)?(?:\/[A-Za-z0-9_](?:[\w.-]*\w)?)?$/, "a login, or a team as org/team");

/** What a session's sandbox allows beyond its worktree and the model; carried by every session job. */
export const sessionSandboxSchema = z.object({
  /** Hosts reachable on port 443 through the runner's egress proxy (package registries); default none. */
  allowedDomains: z.array(allowedDomain).max(50).default([]),
  /** Load the repository's own `.claude/settings.json` (hooks, env, permissions) into sessions. */
  projectSettings: z.boolean().default(false),
});
export type SessionSandbox = z.infer<typeof sessionSandboxSchema>;

/** A span for the supervisor: one second (tests) to thirty days. */
const span = z
  .number()
  .int()
  .min(1_000)
  .max(30 * 24 * 60 * 60_000);
const ratio = z.number().min(0).max(1);

/** How often the supervisor checks the project, and what it counts as trouble (src/domain/supervisor.ts). */
export const supervisorSettingsSchema = z.object({
  periodMs: span.default(10 * 60_000),
  /** Open (and close) one forge issue per finding; off: findings show on the health page only. */
  forgeIssues: z.boolean().default(true),
  runnerSilentMs: span.default(10 * 60_000),
  memoryCrisisRatio: ratio.default(0.05),
  memoryLowRatio: ratio.default(0.15),
  diskCriticalRatio: ratio.default(0.05),
  diskLowRatio: ratio.default(0.15),
  loadPerCpu: z.number().min(0).max(1_000).default(2),
  maxWorktrees: z.number().int().min(0).max(100_000).default(25),
  stuckGraceMs: span.default(10 * 60_000),
  queuedMs: span.default(2 * 60 * 60_000),
  approvalWaitMs: span.default(24 * 60 * 60_000),
  deadLetterWindowMs: span.default(24 * 60 * 60_000),
  budgetWarnRatio: ratio.default(0.8),
});
export type SupervisorSettings = z.infer<typeof supervisorSettingsSchema>;

/** Non-secret settings with their defaults; stored as JSON in `projects.settings`. */
export const settingsSchema = z.object({
  defaultBranch: z.string().min(1).max(200).default("main"),
  labels: z
    .object({
      backlog: labelName.default("backlog"),
      inProgress: labelName.default("in-progress"),
      blocked: labelName.default("blocked"),
      needsHuman: labelName.default("needs-human"),
      underspecified: labelName.default("underspecified"),
      techDebt: labelName.default("tech-debt"),
      /** The supervisor's issues (docs/supervisor.md), beside their priority label `P0`..`P4`. */
      supervisor: labelName.default("supervisor"),
    })
    .prefault({}),
  /** Sessions at work at once (running + revising). */
  parallel: z.number().int().min(1).max(1_000).default(2),
  maxCiFixes: z.number().int().min(0).max(20).default(3),
  maxCriticIterations: z.number().int().min(1).max(20).default(3),
  /**
   * Rounds people's reviews on the pull request may start (docs/operating.md#people-on-the-pull-request),
   * apart from the critic's; one more escalates the issue.
   */
  maxHumanRounds: z.number().int().min(0).max(50).default(DEFAULT_LIMITS.maxHumanRounds),
  /**
   * A writer's plain comment on the pull request while Conveyor works: `next_round` gives it to the session
   * at its next round; `new_round` starts one, as a review asking for changes does.
   */
  humanComments: z.enum(["next_round", "new_round"]).default("next_round"),
  /** Updates from the base (the forge's, or a session resolving a conflict) before escalating. */
  maxUpdates: z.number().int().min(0).max(20).default(3),
  /** Per-issue budgets, carried across iterations, never reset. */
  issueBudgetUsd: usd.default(10),
  issueTurnBudget: z.number().int().min(1).max(100_000).default(500),
  maxTurnsPerSession: z.number().int().min(1).max(1_000).default(100),
  /** Per-project daily cap; dispatch pauses when today's spend reaches it. */
  dailyBudgetUsd: usd.default(100),
  /**
   * Agent runs forge events start (docs/agents.md#forge-events): anyone who can open an issue, comment or push
   * to a pull request causes them. Their own daily cap (their spend never pauses sessions) and how many one
   * sender may start per hour (a writer is not held to it).
   */
  eventRuns: z
    .object({
      dailyBudgetUsd: usd.default(DEFAULT_EVENT_DAILY_USD),
      perSenderPerHour: z.number().int().min(0).max(1_000).default(5),
    })
    .prefault({}),
  /** Runner jobs: lease length, how soon a new lease must be confirmed, how long a job waits for the runner holding its worktree, attempts, unconfirmed leases. */
  jobs: z
    .object({
      leaseMs: z
        .number()
        .int()
        .min(10_000)
        .max(15 * 60_000)
        .default(60_000),
      /**
       * A new lease lasts this long until its runner's first heartbeat confirms it; one nobody confirmed
       * (the runner died while its claim was answered) goes back to the queue and costs no attempt.
       */
      confirmMs: z.number().int().min(1_000).max(120_000).default(15_000),
      affinityGraceMs: z
        .number()
        .int()
        .min(0)
        .max(60 * 60_000)
        .default(60_000),
      /** Leases a job may lose (expiry or a retryable failure) before it fails and the issue escalates. */
      maxAttempts: z.number().int().min(1).max(20).default(5),
      /**
       * Leases in a row that no runner confirms before the job fails and its issue escalates; from the third
       * on, the job waits with backoff (30 s doubling to 15 min) and its issue says why.
       */
      maxUnconfirmed: z.number().int().min(1).max(100).default(10),
    })
    .prefault({}),
  /** How often the project's Durable Object compares the forge with what Conveyor knows (lost webhooks). */
  reconcile: z
    .object({
      periodMs: z
        .number()
        .int()
        .min(10_000)
        .max(60 * 60_000)
        .default(60_000),
    })
    .prefault({}),
  /**
   * How writes to the forge are paced, per token (every project with the same token shares the count): at
   * most `count` content-creating requests (POSTs) in any `windowMs`, and `writeSpacingMs` between any two
   * writes. Unset: GitHub's documented secondary limits on GitHub (80 a minute, 500 an hour, a second apart),
   * none on Gitea and Forgejo. A forge that refuses for its rate limit is waited for either way.
   */
  forgePacing: z
    .object({
      creates: z
        .array(
          z.object({
            count: z.number().int().min(1).max(100_000),
            windowMs: z
              .number()
              .int()
              .min(1_000)
              .max(24 * 60 * 60_000),
          }),
        )
        .max(4),
      writeSpacingMs: z.number().int().min(0).max(60_000),
    })
    .optional(),
  /**
   * Lifecycle effects (forge calls, jobs): attempts before one goes to the dead letter and the issue escalates;
   * the first retry's wait, doubling to 5 minutes (also the first wait before a request the forge failed is
   * sent again); the longest interval between the polls of one that waits (CI on Forgejo, which sends no
   * status webhook; a merge's turn), so a verdict is seen at most that long after CI settled.
   */
  effects: z
    .object({
      maxAttempts: z.number().int().min(1).max(100).default(DEFAULT_MAX_EFFECT_ATTEMPTS),
      pollMaxMs: z.number().int().min(1_000).max(MAX_POLL_MS).default(DEFAULT_POLL_MAX_MS),
      retryBaseMs: z
        .number()
        .int()
        .min(EFFECT_RETRY_BASE_MIN_MS)
        .max(EFFECT_RETRY_BASE_MAX_MS)
        .default(DEFAULT_EFFECT_RETRY_BASE_MS),
    })
    .prefault({}),
  /**
   * How long each wait may last, in milliseconds (see src/domain/timers.ts): a session's wall clock, CI, the
   * critic's review, the merge's answer, an escalation before it expires (the issue is abandoned, saying
   * so), the interval at which an escalation reminds its humans, how long an action's session waits for a
   * human's reply (`idle`), and how long an issue waits for a runner to start its job before it says so
   * (`dispatch`, again every period). A merge held for a human waits on its vault item (`vault.expiryMs`).
   */
  timeouts: z
    .object({
      session: duration.default(DEFAULT_TIMEOUTS_MS.session),
      ci: duration.default(DEFAULT_TIMEOUTS_MS.ci),
      review: duration.default(DEFAULT_TIMEOUTS_MS.review),
      merge: duration.default(DEFAULT_TIMEOUTS_MS.merge),
      escalation: duration.default(DEFAULT_TIMEOUTS_MS.escalation),
      renotify: duration.default(DEFAULT_TIMEOUTS_MS.renotify),
      idle: duration.default(DEFAULT_TIMEOUTS_MS.idle),
      dispatch: duration.default(DEFAULT_TIMEOUTS_MS.dispatch),
      // A second and up: a kept worktree may go as soon as the operator likes.
      retention: z
        .number()
        .int()
        .min(1_000)
        .max(365 * 24 * 60 * 60_000)
        .default(DEFAULT_TIMEOUTS_MS.retention),
    } satisfies { [K in TimerKind]: z.ZodType })
    .prefault({}),
  /** Deliveries, transitions and issue history older than this many days are pruned. */
  retentionDays: z.number().int().min(1).max(3650).default(DEFAULT_RETENTION_DAYS),
  /**
   * How Conveyor merges (docs/operating.md#merge-methods): `auto` takes what the repository allows, preferring
   * squash, then a merge commit, then rebase; a method the repository does not allow escalates the merge.
   * `upToDate`: a pull request only behind its base is updated before its review and merge `always`, or
   * `when_required` by the base's branch protection (src/domain/up-to-date.ts).
   */
  merge: z
    .object({
      method: z.enum(MERGE_METHOD_SETTINGS).default("auto"),
      upToDate: z.enum(UP_TO_DATE_SETTINGS).default("always"),
    })
    .prefault({}),
  /** Keep `conveyor/<n>` on the forge after its pull request merged (deleted by default). */
  keepBranches: z.boolean().default(false),
  /** Changes to these paths (globs) wait for a human's approval instead of merging. */
  protectedPaths: z
    .array(z.string().min(1).max(200))
    .max(100)
    .default([...DEFAULT_PROTECTED_PATHS]),
  /** The vault (docs/vault.md): how long an item waits for a decision, what the classifier may approve. */
  vault: z
    .object({
      // A second and up, like the retention: short waits are for tests and drills.
      expiryMs: z
        .number()
        .int()
        .min(1_000)
        .max(30 * 24 * 60 * 60_000)
        .default(DEFAULT_VAULT_EXPIRY_MS),
      /** Kinds the classifier may approve without a human; a protected merge never is, listed or not. */
      autoApprove: z.array(z.enum(VAULT_KINDS)).max(VAULT_KINDS.length).default([]),
    })
    .prefault({}),
  sandbox: sessionSandboxSchema.prefault({}),
  /**
   * The prompt cache's lifetime sessions ask for: `5m` (the API's default), `1h` (writes cost 2 instead of 1.25
   * times the input price, and a round that starts after five minutes still reads its transcript from the
   * cache), or `auto`: an hour when at least half of the project's recent CI waits took 4 minutes or more.
   */
  promptCache: z.enum(PROMPT_CACHE_SETTINGS).default("auto"),
  critic: z
    .object({
      /**
       * Where the critic reviews Conveyor's pull requests: `worker`, through the Messages API with the
       * Worker's ANTHROPIC_API_KEY; or `runner`, as the built-in `reviewer` agent in a runner's sandbox with
       * the runner's model access (a Claude subscription on the build host is enough).
       */
      runsOn: z.enum(["worker", "runner"]).default("worker"),
      /** The reviewer also reviews pull requests people open (a forge review only; it moves no issue). */
      reviewHumanPullRequests: z.boolean().default(false),
    })
    .prefault({}),
  /** When the reviewer reviews people's pull requests (with `critic.reviewHumanPullRequests`). */
  reviews: z
    .object({
      /** `after_ci`: once CI has a verdict on the head (the newest push's); `on_push`: at each push. */
      people: z.enum(["after_ci", "on_push"]).default("after_ci"),
    })
    .prefault({}),
  ci: z
    .object({
      kind: z.enum(["woodpecker", "github-actions", "none"]).default("woodpecker"),
      /**
       * The checks that count: status contexts, check run names and check suite apps matching this glob (`*`
       * matches any run of characters). Every one reported must pass, and at least one must be reported.
       */
      contextPattern: z.string().min(1).max(200).default("*"),
      /** Named checks that must all be reported and pass; when given, `contextPattern` is not used. */
      requiredChecks: z.array(z.string().min(1).max(200)).max(50).default([]),
      /**
       * A Woodpecker server whose API gives red CI's step logs and restarts pipelines the infrastructure
       * failed (with `woodpeckerToken`).
       */
      woodpeckerUrl: z.url({ protocol: /^https?$/ }).optional(),
      /**
       * Times a head's red CI is re-run before a fix session is spent, when every failing check failed for
       * the infrastructure's sake (cancelled, timed out, the CI's own error, known to pass on re-run) and its
       * CI can re-run it (src/domain/ci-rerun.ts). 0: never.
       */
      reruns: z.number().int().min(0).max(MAX_CI_RERUNS).default(DEFAULT_CI_RERUNS),
    })
    .prefault({}),
  /** The supervisor's period and thresholds (docs/supervisor.md). */
  supervisor: supervisorSettingsSchema.prefault({}),
  /**
   * Links and images in text Conveyor posts but did not write (docs/agents.md#what-conveyor-defuses): live
   * only to the forge itself and to these hosts (`https`); others are shown as text, images left out.
   */
  links: z.object({ allow: z.array(allowedDomain).max(50).default([]) }).prefault({}),
  /** Mentions in text Conveyor posts but did not write: every one not allowed here is shown as code. */
  mentions: z
    .object({
      allow: z.array(mentionName).max(100).default([]),
      /** A post on an issue may also mention the issue's author (who is notified of it anyway). */
      issueAuthor: z.boolean().default(false),
    })
    .prefault({}),
});
export type ProjectSettings = z.infer<typeof settingsSchema>;

export const actionSecretsSchema = z
  .record(
    z
      .string()
      .regex(
        /^[A-Z][A-Z0-9_]{0,63}$/,
        "an action secret's name is an environment variable name such as DEPLOY_TOKEN",
      ),
    z.string().min(1).max(10_000),
  )
  .refine((secrets) => Object.keys(secrets).length <= 50, "at most 50 action secrets");

export const registrationSchema = settingsSchema.extend({
  forge: z.enum(["forgejo", "gitea", "github"]),
  /** API base: `https://codeberg.org/api/v1`, `https://api.github.com`. */
  apiUrl: z.url({ protocol: /^https?$/ }),
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "repo is owner/name"),
  /** Where runners fetch and push; derived from apiUrl and repo when absent. */
  cloneUrl: z.url({ protocol: /^https?$/ }).optional(),
  webhookSecret: z.string().min(16).max(200),
  forgeToken: z.string().min(1).max(500),
  /** Woodpecker API token (read access) for `ci.woodpeckerUrl`; sealed like the forge token. */
  woodpeckerToken: z.string().min(1).max(500).optional(),
  /**
   * Secrets for action formulas (docs/actions.md), by the environment variable name a formula's steps use;
   * sealed like the forge token and given to a runner only for the steps that declare them.
   */
  actionSecrets: actionSecretsSchema.optional(),
});
export type ProjectRegistration = z.infer<typeof registrationSchema>;

/** `https://host/api/v1` + `owner/name` → `https://host/owner/name`; GitHub's API host maps to github.com. */
export function repoWebUrl(forge: ProjectRegistration["forge"], apiUrl: string, repo: string): string {
  const api = new URL(apiUrl);
  if (forge === "github") {
    const host = api.hostname === "api.github.com" ? "github.com" : api.host;
    return `${api.protocol}//${host}/${repo}`;
  }
  const base = api.pathname.replace(/\/api\/v1\/?$/, "").replace(/\/$/, "");
  return `${api.protocol}//${api.host}${base}/${repo}`;
}

export const defaultCloneUrl = (forge: ProjectRegistration["forge"], apiUrl: string, repo: string): string =>
  `${repoWebUrl(forge, apiUrl, repo)}.git`;

export const budgetLimits = (settings: ProjectSettings): BudgetLimits => ({
  issueUsd: settings.issueBudgetUsd,
  issueTurns: settings.issueTurnBudget,
  sessionTurns: settings.maxTurnsPerSession,
  dailyUsd: settings.dailyBudgetUsd,
  eventDailyUsd: settings.eventRuns.dailyBudgetUsd,
});
