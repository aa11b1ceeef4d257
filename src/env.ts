import type { IssueDO } from "../durable-objects/issue-do.ts";
import type { ProjectDO } from "../durable-objects/project-do.ts";

export interface Env {
  DB: D1Database;
  ISSUES: DurableObjectNamespace<IssueDO>;
  PROJECTS: DurableObjectNamespace<ProjectDO>;
  /** AES-256-GCM key for secrets at rest, base64 of 32 bytes (Worker secret). */
  CONVEYOR_SECRETS_KEY?: string;
  /** Operator token for /api/v1 (Worker secret). */
  CONVEYOR_ADMIN_TOKEN?: string;
}
