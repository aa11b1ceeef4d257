/**
 * D1 schema. The Durable Objects are the source of truth; D1 is the queryable record every DO flushes to
 * (idempotently, from its outbox), read by cron, the operator API and the dashboard.
 */
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { INFRA_CAUSES } from "../domain/ci-rerun.ts";
import type { SuspectRotation } from "../domain/runner-tokens.ts";
import { VAULT_STATES } from "../domain/vault.ts";
import type { Pressure } from "../runner-api/contract.ts";
import { SANDBOX_KINDS } from "../runner-api/sandbox.ts";
import { USAGE_SOURCES } from "../usage/sources.ts";

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  forge: text("forge", { enum: ["forgejo", "gitea", "github"] }).notNull(),
  apiUrl: text("api_url").notNull(),
  repo: text("repo").notNull(),
  /** Where runners fetch and push the repository. */
  cloneUrl: text("clone_url").notNull(),
  defaultBranch: text("default_branch").notNull().default("main"),
  /** Non-secret settings as JSON (labels, caps, CI); validated with zod when read. */
  settings: text("settings", { mode: "json" }).notNull(),
  /** AES-GCM ciphertext of the webhook secret and forge token; never returned by the API. */
  secrets: text("secrets").notNull(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  updatedAt: integer("updated_at", { mode: "number" }).notNull(),
});

/** Current-state index of each issue, one row per issue; `seq` orders writes from its DO. */
export const issues = sqliteTable(
  "issues",
  {
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    state: text("state").notNull(),
    iteration: integer("iteration").notNull(),
    branch: text("branch"),
    sessionId: text("session_id"),
    headSha: text("head_sha"),
    prNumber: integer("pr_number"),
    reason: text("reason"),
    seq: integer("seq").notNull(),
    updatedAt: integer("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.number] }),
    index("issues_by_state").on(t.projectId, t.state, t.updatedAt),
    index("issues_by_update").on(t.state, t.updatedAt),
    // CI results name a commit, not an issue.
    index("issues_by_head").on(t.projectId, t.headSha),
  ],
);

/** Every edge an issue took, and every event its table rejected (with the reason). */
export const transitions = sqliteTable(
  "transitions",
  {
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    seq: integer("seq").notNull(),
    fromState: text("from_state").notNull(),
    toState: text("to_state").notNull(),
    event: text("event").notNull(),
    eventId: text("event_id").notNull(),
    causeKind: text("cause_kind", {
      enum: ["delivery", "job", "cron", "operator", "timer", "system"],
    }).notNull(),
    causeId: text("cause_id").notNull(),
    outcome: text("outcome", { enum: ["applied", "rejected", "parked"] }).notNull(),
    reason: text("reason"),
    at: integer("at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.number, t.seq] }),
    index("transitions_by_time").on(t.at),
    // A project's history over a window, its outcomes (src/outcomes): covering what they read of each edge.
    index("transitions_by_project_time").on(
      t.projectId,
      t.at,
      t.outcome,
      t.fromState,
      t.toState,
      t.event,
      t.number,
    ),
  ],
);

export const workerSessions = sqliteTable(
  "worker_sessions",
  {
    sessionId: text("session_id").primaryKey(),
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    runnerId: text("runner_id").notNull(),
    iteration: integer("iteration").notNull(),
    worktree: text("worktree"),
    branch: text("branch"),
    startedAt: integer("started_at", { mode: "number" }).notNull(),
    updatedAt: integer("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("worker_sessions_by_issue").on(t.projectId, t.number)],
);

export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    kind: text("kind", { enum: ["implement", "revise", "resume", "update", "reap", "agent"] }).notNull(),
    status: text("status", { enum: ["queued", "leased", "done", "failed", "cancelled"] }).notNull(),
    attempt: integer("attempt").notNull(),
    runnerId: text("runner_id"),
    createdAt: integer("created_at", { mode: "number" }).notNull(),
    updatedAt: integer("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("jobs_by_status").on(t.projectId, t.status, t.createdAt),
    index("jobs_by_issue").on(t.projectId, t.number),
    // Who runs what: the runners list reads the leased jobs across projects.
    index("jobs_by_runner").on(t.status, t.runnerId),
  ],
);

/** Webhook deliveries, deduplicated by id and by content (a Gitea replay re-sends a body under a new id). */
export const deliveries = sqliteTable(
  "deliveries",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    contentKey: text("content_key").notNull(),
    event: text("event").notNull(),
    number: integer("number"),
    outcome: text("outcome").notNull(),
    receivedAt: integer("received_at", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("deliveries_by_content").on(t.projectId, t.contentKey),
    index("deliveries_by_time").on(t.projectId, t.receivedAt),
  ],
);

/**
 * Per session result, and per model call Conveyor makes itself (the critic, the vault's classifier): tokens
 * and cost, for budgets and the prompt-cache hit ratio.
 */
export const usage = sqliteTable(
  "usage",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    iteration: integer("iteration").notNull(),
    sessionId: text("session_id"),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    cacheReadTokens: integer("cache_read_tokens").notNull(),
    cacheWriteTokens: integer("cache_write_tokens").notNull(),
    usd: real("usd").notNull(),
    turns: integer("turns").notNull().default(0),
    at: integer("at", { mode: "number" }).notNull(),
    /** What spent it: a session, the Worker's critic, the vault's classifier, an agent run (a reviewer's). */
    source: text("source", { enum: USAGE_SOURCES }).notNull().default("session"),
  },
  (t) => [
    index("usage_by_issue").on(t.projectId, t.number, t.iteration),
    index("usage_by_day").on(t.projectId, t.at),
  ],
);

/**
 * What Conveyor knows of each forge issue and pull request (from the backfill, webhooks and reconciliation):
 * dependency gating reads it, and agents see the backlog in it.
 */
export const forgeIssues = sqliteTable(
  "forge_issues",
  {
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    kind: text("kind", { enum: ["issue", "pull"] })
      .notNull()
      .default("issue"),
    title: text("title").notNull(),
    body: text("body").notNull(),
    state: text("state", { enum: ["open", "closed"] }).notNull(),
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    /** Same-repository issue numbers this issue depends on, parsed from its body. */
    dependsOn: text("depends_on", { mode: "json" }).$type<number[]>().notNull(),
    /** A pull request's: the same-repository issues it closes by keyword (`Fixes #3`): its linked issues. */
    closes: text("closes", { mode: "json" }).$type<number[]>().notNull().default([]),
    author: text("author").notNull().default(""),
    comments: integer("comments").notNull().default(0),
    /** The forge's own times (epoch ms): opened, last changed, closed; null where no source said yet. */
    createdAt: integer("created_at", { mode: "number" }),
    forgeUpdatedAt: integer("forge_updated_at", { mode: "number" }),
    closedAt: integer("closed_at", { mode: "number" }),
    /** When Conveyor last wrote the row. */
    updatedAt: integer("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.number] }),
    index("forge_issues_by_state").on(t.projectId, t.state),
    // The backlog agents see: a project's open issues by their last change on the forge.
    index("forge_issues_by_activity").on(t.projectId, t.state, t.kind, t.forgeUpdatedAt),
  ],
);

/** Reverse dependency index: who waits for `dependency`. */
export const issueDependencies = sqliteTable(
  "issue_dependencies",
  {
    projectId: text("project_id").notNull(),
    dependency: integer("dependency").notNull(),
    dependent: integer("dependent").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.dependency, t.dependent] })],
);

export const runners = sqliteTable("runners", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** SHA-256 hex of the runner's token; the token itself is shown once, at registration or rotation. */
  tokenHash: text("token_hash").notNull().unique(),
  /** The token stops working then; the runner rotates it before. */
  tokenExpiresAt: integer("token_expires_at", { mode: "number" }).notNull().default(0),
  /** A rotated token not used yet: the first call with it makes it the token, and the old one dies. */
  nextTokenHash: text("next_token_hash").unique(),
  nextTokenExpiresAt: integer("next_token_expires_at", { mode: "number" }),
  /** Projects the registration token bound the runner to (JSON); null: any project. */
  projects: text("projects", { mode: "json" }).$type<string[]>(),
  /** As the runner reported it at registration and its last claim; null for a runner too old to say. */
  sandbox: text("sandbox", { enum: SANDBOX_KINDS }),
  version: text("version").notNull(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  lastSeenAt: integer("last_seen_at", { mode: "number" }).notNull(),
  /** When the runner said it stopped (`POST /runner/v1/offline`); its next call of any kind clears it. */
  offlineAt: integer("offline_at", { mode: "number" }),
  /** Disk used under the runner's work dir and its worktree count, as it last reported them with a claim. */
  diskBytes: integer("disk_bytes", { mode: "number" }),
  worktrees: integer("worktrees", { mode: "number" }),
  /** Free space and size of the work dir's file system, as last reported with a claim (the supervisor's). */
  diskFreeBytes: integer("disk_free_bytes", { mode: "number" }),
  diskTotalBytes: integer("disk_total_bytes", { mode: "number" }),
  /** The host's available and total memory, one-minute load and CPUs, recorded at most once a minute. */
  memAvailableBytes: integer("mem_available_bytes", { mode: "number" }),
  memTotalBytes: integer("mem_total_bytes", { mode: "number" }),
  load1: real("load1"),
  cpus: integer("cpus"),
  /** When memory and load were last recorded. */
  hostAt: integer("host_at", { mode: "number" }),
  /**
   * Why the runner claims no new job now (runner/backpressure.ts: memory, disk or load past its thresholds), as
   * its last claim or heartbeat said, and since when; null while it claims.
   */
  pressure: text("pressure", { mode: "json" }).$type<Pressure>(),
  pressureSince: integer("pressure_since", { mode: "number" }),
  /** The address (CF-Connecting-IP) the runner's last call came from: the operator's, never a forge's. */
  address: text("address"),
  /** The token a rotation replaced, and when: its holder's next call is told so, and when it came. */
  supersededTokenHash: text("superseded_token_hash").unique(),
  supersededAt: integer("superseded_at", { mode: "number" }),
  supersededSeenAt: integer("superseded_seen_at", { mode: "number" }),
  /**
   * The last rotation that came from another address than the runner was seen at (src/domain/runner-tokens.ts):
   * a stolen token rotating itself. The supervisor reports it; the dashboard shows it.
   */
  suspectRotation: text("suspect_rotation", { mode: "json" }).$type<SuspectRotation>(),
});

/** One-time registration tokens (hashed); `usedBy` is set when a runner registers with one. */
export const registrationTokens = sqliteTable("registration_tokens", {
  tokenHash: text("token_hash").primaryKey(),
  createdAt: integer("created_at", { mode: "number" }).notNull(),
  expiresAt: integer("expires_at", { mode: "number" }).notNull(),
  usedBy: text("used_by"),
  /** The projects the runner it registers may work on (JSON); null: any project. */
  projects: text("projects", { mode: "json" }).$type<string[]>(),
});

/** Every critic report, by round: the findings ledger the next round reads, and the dashboard's record. */
export const criticReports = sqliteTable(
  "critic_reports",
  {
    /** The request_review effect key: a retried delivery writes the same row. */
    id: text("id").primaryKey(),
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    round: integer("round").notNull(),
    headSha: text("head_sha"),
    verdict: text("verdict", { enum: ["APPROVE", "REQUEST_CHANGES", "BLOCK"] }).notNull(),
    summary: text("summary").notNull(),
    findings: text("findings", { mode: "json" }).notNull(),
    at: integer("at", { mode: "number" }).notNull(),
  },
  (t) => [index("critic_reports_by_issue").on(t.projectId, t.number, t.round)],
);

/**
 * Each check a CI re-run asked for (src/domain/ci-rerun.ts), by head and round, and how it did on the re-run
 * (`passed`: it flipped, as a flaky check does; null until the re-run's result): written by the issue's DO with
 * the edges, read by the supervisor (flaky checks) and the CI gate (checks known to pass on re-run).
 */
export const ciReruns = sqliteTable(
  "ci_reruns",
  {
    projectId: text("project_id").notNull(),
    number: integer("number").notNull(),
    headSha: text("head_sha").notNull(),
    round: integer("round").notNull(),
    checkName: text("check_name").notNull(),
    cause: text("cause", { enum: INFRA_CAUSES }),
    result: text("result", { enum: ["passed", "failed"] }),
    requestedAt: integer("requested_at", { mode: "number" }).notNull(),
    settledAt: integer("settled_at", { mode: "number" }),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.number, t.headSha, t.round, t.checkName] }),
    index("ci_reruns_by_time").on(t.projectId, t.requestedAt),
  ],
);

/**
 * The vault's items, as their ProjectDO last wrote them (durable-objects/project/vault.ts): a read model for the API,
 * the dashboard and the CLI; the ProjectDO decides.
 */
export const vaultItems = sqliteTable(
  "vault_items",
  // requester, payload, verdict and audit hold JSON text, written and read as such by the vault's sink.
  {
    projectId: text("project_id").notNull(),
    id: text("id").notNull(),
    kind: text("kind", { enum: ["action_step", "agent_output", "protected_merge"] }).notNull(),
    requester: text("requester").notNull(),
    title: text("title").notNull(),
    payload: text("payload").notNull(),
    state: text("state", { enum: VAULT_STATES }).notNull(),
    verdict: text("verdict"),
    audit: text("audit").notNull(),
    createdAt: integer("created_at", { mode: "number" }).notNull(),
    expiresAt: integer("expires_at", { mode: "number" }).notNull(),
    updatedAt: integer("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.id] }),
    // The pending queue across projects, oldest first.
    index("vault_items_by_state").on(t.state, t.createdAt),
    // Every project's items, newest first (the vault page).
    index("vault_items_by_time").on(t.createdAt),
  ],
);
