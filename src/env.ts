import type { IssueDO } from "../durable-objects/issue-do.ts";

export interface Env {
  DB: D1Database;
  ISSUES: DurableObjectNamespace<IssueDO>;
  /** Operator token for /api/v1 (Worker secret). */
  CONVEYOR_ADMIN_TOKEN?: string;
}
