/**
 * `POST /api/v1/projects/:project/setup`: creates the project's webhook and labels on its forge with the
 * Worker's own forge client, so the forge token never leaves the Worker. Each call creates a new webhook.
 */
import { Hono } from "hono";
import { z } from "zod";
import { AGENT_LABELS } from "../agents/labels.ts";
import type { Env } from "../env.ts";
import { ForgeError, type LabelSpec } from "../forge/client/index.ts";
import { projectIdSchema } from "../projects/config.ts";
import { forgeClientFor, loadProject, loadSecrets, type Project } from "../projects/store.ts";
import { zodMessage } from "../validation.ts";
import { jsonError } from "./errors.ts";
import { jsonBody } from "./json-body.ts";

/**
 * What the webhook parser reads; Gitea's `issues` and `pull_request` also cover their sub-events. `push`
 * only tells when the agent definitions changed (src/hooks/route-push.ts).
 */
export const WEBHOOK_EVENTS = {
  forgejo: ["issues", "issue_comment", "pull_request", "pull_request_review", "status", "push"],
  gitea: ["issues", "issue_comment", "pull_request", "pull_request_review", "status", "push"],
  github: [
    "issues",
    "issue_comment",
    "pull_request",
    "pull_request_review",
    "status",
    "check_run",
    "check_suite",
    "workflow_run",
    "push",
  ],
} as const satisfies Record<Project["forge"], readonly string[]>;

const setupRequest = z.object({
  /** Where the forge delivers: `<the Worker's public URL>/hooks/<project>`. */
  webhookUrl: z.url({ protocol: /^https?$/ }),
});

function labelSpecs(project: Project): LabelSpec[] {
  const { labels } = project.settings;
  return [
    { name: labels.backlog, color: "0e8a16", description: "Conveyor: ready to be implemented" },
    { name: labels.inProgress, color: "fbca04", description: "Conveyor: a session is working on it" },
    { name: labels.blocked, color: "b60205", description: "Conveyor: waiting for its dependencies" },
    { name: labels.needsHuman, color: "d93f0b", description: "Conveyor: a human has to look" },
    { name: labels.underspecified, color: "c5def5", description: "Not clear enough to implement" },
    { name: labels.techDebt, color: "5319e7", description: "Found by the critic, outside an issue's scope" },
    // The built-in agents' (src/agents/builtin): predictions, their triage, the gaps the planner files.
    ...AGENT_LABELS,
    // The supervisor's findings (docs/supervisor.md), each labelled with its priority too.
    {
      name: labels.supervisor,
      color: "e99695",
      description: "Conveyor's supervisor: a finding about the factory",
    },
    ...PRIORITY_LABELS,
  ];
}

const PRIORITY_LABELS: LabelSpec[] = [
  { name: "P0", color: "b60205", description: "Supervisor: a crisis (memory), now" },
  { name: "P1", color: "d93f0b", description: "Supervisor: work is stopped or about to fail" },
  { name: "P2", color: "fbca04", description: "Supervisor: work is waiting" },
  { name: "P3", color: "c5def5", description: "Supervisor: worth a look" },
  { name: "P4", color: "ededed", description: "Supervisor: housekeeping" },
];

export const projectSetupRoutes = new Hono<{ Bindings: Env }>();

projectSetupRoutes.post("/:project/setup", async (c) => {
  const id = projectIdSchema.safeParse(c.req.param("project"));
  if (!id.success) return jsonError(c, 400, zodMessage(id.error));
  const body = await jsonBody(c, setupRequest);
  if (!body.ok) return body.response;
  const [project, secrets] = await Promise.all([loadProject(c.env, id.data), loadSecrets(c.env, id.data)]);
  if (!project || !secrets) return jsonError(c, 404, `project ${id.data} is not registered`);
  const labels = labelSpecs(project);
  const events = [...WEBHOOK_EVENTS[project.forge]];
  try {
    const forge = await forgeClientFor(c.env, project);
    await forge.ensureLabels(labels);
    const hook = await forge.createWebhook({
      url: body.data.webhookUrl,
      secret: secrets.webhookSecret,
      events,
    });
    return c.json({
      webhook: { id: hook.id, url: body.data.webhookUrl, events },
      labels: labels.map((l) => l.name),
    });
  } catch (error) {
    if (error instanceof ForgeError) return jsonError(c, 502, error.message);
    throw error;
  }
});
