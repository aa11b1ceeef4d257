import type { AlertObject } from "./contracts/alert-object.ts";
import type { IssueObject } from "./contracts/issue-object.ts";
import type { PacerObject } from "./contracts/pacer-object.ts";
import type { ProjectObject } from "./contracts/project-object.ts";

export interface Env {
  DB: D1Database;
  ISSUES: DurableObjectNamespace<IssueObject>;
  PROJECTS: DurableObjectNamespace<ProjectObject>;
  /** One pacer per forge token: writes to the forge, paced within its limits (src/domain/forge-pacing.ts). */
  PACERS: DurableObjectNamespace<PacerObject>;
  /** The factory's one AlertDO: alerts to the operator's channel, deduplicated (docs/supervisor.md). */
  ALERTS: DurableObjectNamespace<AlertObject>;
  /** The operator's channel: a webhook taking JSON (Slack's and Discord's incoming webhooks do) (Worker secret). */
  ALERT_WEBHOOK_URL?: string;
  /**
   * Email through Cloudflare Email Routing, where configured: a `send_email` binding, the sender (an address
   * of the zone's) and the recipient (a verified destination address).
   */
  ALERT_EMAIL?: SendEmail;
  ALERT_EMAIL_FROM?: string;
  ALERT_EMAIL_TO?: string;
  /** AES-256-GCM key for secrets at rest, base64 of 32 bytes (Worker secret). */
  CONVEYOR_SECRETS_KEY?: string;
  /** The critic's Messages API key (Worker secret) and, for a stand-in or gateway, its base URL. */
  ANTHROPIC_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  /** The critic's model; see README for the default. */
  CRITIC_MODEL?: string;
  /** The vault classifier's model (same key and base URL as the critic); see docs/vault.md for the default. */
  VAULT_MODEL?: string;
  /** Operator token for /api/v1 and the dashboard's login (Worker secret). */
  CONVEYOR_ADMIN_TOKEN?: string;
  /** Cloudflare Access in front of /dashboard: the team domain (`<team>.cloudflareaccess.com`) and the
   * application's AUD tag. With both set the dashboard accepts verified Access identities; otherwise it
   * ignores Access headers. */
  CF_ACCESS_TEAM_DOMAIN?: string;
  CF_ACCESS_AUD?: string;
  /** How long a runner token lasts, in seconds (default 30 days); runners rotate at half of it. */
  RUNNER_TOKEN_TTL_SECONDS?: string;
}
