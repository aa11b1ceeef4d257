/**
 * `POST /hooks/:project`: verify, parse, dedupe, route. Answers 2xx only once the delivery's effects are
 * durably recorded (in D1 and the issues' Durable Objects); bad input changes nothing.
 */
import { Hono } from "hono";
import { jsonError } from "../api/errors.ts";
import type { Env } from "../env.ts";
import type { ForgeEvent } from "../forge/webhooks/events.ts";
import { contentKey, parseDelivery, WebhookError } from "../forge/webhooks/parse.ts";
import { verifySignature } from "../forge/webhooks/signature.ts";
import { cachedProject } from "../projects/cache.ts";
import { PROJECT_ID } from "../projects/config.ts";
import { readLimited } from "./body.ts";
import { type DeliveryRecord, findFinished, recordDelivery } from "./deliveries.ts";
import { routeAgents } from "./route-agents.ts";
import { routeEvent } from "./route-event.ts";
import { routePush } from "./route-push.ts";

export const hookRoutes = new Hono<{ Bindings: Env }>();

hookRoutes.post("/:project", async (c) => {
  const id = c.req.param("project");
  const registered = PROJECT_ID.test(id) ? await cachedProject(c.env, id) : null;
  if (!registered) return jsonError(c, 404, `project ${id} is not registered`);
  const { project } = registered;
  const body = await readLimited(c.req.raw);
  if (!body) return jsonError(c, 413, "body exceeds 1 MiB");

  const { webhookSecret } = await registered.secrets();
  const signature = await verifySignature(project.forge, c.req.raw.headers, body, webhookSecret);
  if (!signature.ok) {
    return jsonError(
      c,
      401,
      signature.reason === "missing" ? "signature missing" : "signature does not match",
    );
  }
  let parsed: ReturnType<typeof parseDelivery>;
  try {
    parsed = parseDelivery(project.forge, c.req.raw.headers, body);
  } catch (error) {
    if (error instanceof WebhookError) return jsonError(c, 400, error.message);
    throw error;
  }
  const { result } = parsed;
  // An organisation's webhook sends every repository's events to each project: not an error, not ours.
  if (result.kind === "event" && result.event.repository.toLowerCase() !== project.repo.toLowerCase()) {
    return c.json(
      { ignored: `delivery is for ${result.event.repository}, project ${id} is ${project.repo}` },
      202,
    );
  }

  const record: DeliveryRecord = {
    projectId: project.id,
    deliveryId: parsed.deliveryId,
    contentKey: await contentKey(project.forge, parsed.eventName, body),
    event: parsed.eventName,
    number: result.kind === "event" ? issueNumber(result.event) : null,
  };
  if (result.kind === "ignored") {
    if (parsed.eventName === "push") await routePush(c.env, project, body);
    const finished = await findFinished(c.env, record);
    if (finished) return c.json({ duplicate: true, outcome: finished.outcome }, 200);
    await recordDelivery(c.env, record, "ignored");
    return c.json({ ignored: result.reason }, 202);
  }

  // Recorded once its effects are: a crash before that lets a redelivery redo it, and every step dedupes.
  const cause = { kind: "delivery" as const, id: parsed.deliveryId };
  // Agent runs cost money: a delivery whose content was seen (under any delivery id) starts none.
  const agents = await routeAgents(c.env, project, result.event, record);
  if ("duplicate" in agents) return c.json({ duplicate: true, outcome: agents.duplicate }, 200);
  const routed = await routeEvent(
    c.env,
    project,
    result.event,
    record.contentKey,
    cause,
    record,
    agents.deduped,
  );
  if (routed.kind === "duplicate") return c.json({ duplicate: true, outcome: routed.outcome }, 200);
  if (routed.kind === "ignored" || !routed.recorded) {
    await recordDelivery(c.env, record, routed.kind === "routed" ? "processed" : "ignored");
  }
  return routed.kind === "routed"
    ? c.json({ accepted: true, events: routed.events }, 202)
    : c.json({ ignored: routed.reason }, 202);
});

function issueNumber(event: ForgeEvent): number | null {
  switch (event.type) {
    case "issue":
      return event.issue.number;
    case "comment":
      return event.comment.issueNumber;
    case "pull_request":
      return event.pullRequest.number;
    case "review":
      return event.review.pullNumber;
    case "ci":
      return event.ci.pullNumbers[0] ?? null;
  }
}
