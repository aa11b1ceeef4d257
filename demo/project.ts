/**
 * Connects the sample repository to a running Worker, as an operator would: registers the project (operator
 * API), creates its labels and the webhook to `/hooks/<project>` with Conveyor's own forge account (the
 * production forge client), and issues a one-time registration token for a runner.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { AGENT_LABELS } from "../src/agents/labels.ts";
import { createForgeClient } from "../src/forge/client/index.ts";
import { settingsSchema } from "../src/projects/config.ts";
import { ANNOUNCE_TOKEN, PROJECT, PROTECTED_PATHS, REPO } from "./scenario.ts";

/** The project's label names: the registration keeps the defaults. */
export const LABELS = settingsSchema.parse({}).labels;

/** What the webhook parser acts on for the demo: label changes, comments (human replies), merges. */
const WEBHOOK_EVENTS = ["issues", "issue_comment", "pull_request"];

export type Operator = { workerUrl: string; adminToken: string };

export type ProjectLink = Operator & {
  forgeApiUrl: string;
  /** Conveyor's account on the forge: it labels, comments, opens and merges pull requests. */
  forgeToken: string;
  /** Project settings beyond the demo's (e.g. `jobs`, `reconcile`), as the operator API takes them. */
  settings?: Record<string, unknown>;
};

async function operator<S extends z.ZodType>(
  op: Operator,
  method: string,
  path: string,
  body: unknown,
  schema: S,
) {
  const res = await fetch(`${op.workerUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${op.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return schema.parse(await res.json()) as z.output<S>;
}

export async function connectProject(link: ProjectLink): Promise<void> {
  const webhookSecret = randomBytes(24).toString("hex");
  await operator(
    link,
    "PUT",
    `/api/v1/projects/${PROJECT}`,
    {
      forge: "forgejo",
      apiUrl: link.forgeApiUrl,
      repo: REPO,
      webhookSecret,
      forgeToken: link.forgeToken,
      ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*" },
      protectedPaths: PROTECTED_PATHS,
      // Every issue starts at once and each merge moves the base under the rest: the held #5 can fall behind
      // more often than the default cap of 3 updates allows before a human is asked.
      maxUpdates: 8,
      // The action formula's secret: sealed with the project's, given to its step's command only.
      actionSecrets: { ANNOUNCE_TOKEN },
      ...link.settings,
    },
    z.object({ id: z.literal(PROJECT) }),
  );
  const forge = createForgeClient({
    forge: "forgejo",
    apiUrl: link.forgeApiUrl,
    repo: REPO,
    token: link.forgeToken,
  });
  await forge.ensureLabels([...Object.values(LABELS), ...AGENT_LABELS]);
  await forge.createWebhook({
    url: `${link.workerUrl}/hooks/${PROJECT}`,
    secret: webhookSecret,
    events: WEBHOOK_EVENTS,
  });
}

export async function registrationToken(op: Operator): Promise<string> {
  const { token } = await operator(op, "POST", "/api/v1/runners/tokens", {}, z.object({ token: z.string() }));
  return token;
}
