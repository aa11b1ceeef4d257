/**
 * Comments: `/conveyor retry|abandon|accept` (`accept`: the triage's proposed step) and the vault's `/conveyor approve|reject <id> [reason]` from users with
 * write access, and a reply to an escalated issue, which
 * resumes its session with the reply. Commands from anyone else are refused with a reply (posted by the issue's
 * outbox, like every effect). A writer's approving
 * review of a merge held for protected paths is the human approval it waits for; Conveyor's own is not.
 */
import { ABANDON_LABEL, type ParsedComment, parseComment } from "../domain/commands.ts";
import type { LifecycleEvent } from "../domain/lifecycle.ts";
import { sameLogin } from "../domain/logins.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { CommentEvent, ReviewEvent } from "../forge/webhooks/events.ts";
import { projectStub } from "../project-stub.ts";
import { conveyorAccount } from "../projects/account.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { issueOfPull, lifecycleStates } from "../projects/mirror.ts";
import { forgeClientFor, type Project } from "../projects/store.ts";
import type { Routed } from "./route-event.ts";

export async function canCommand(forge: ForgeClient, login: string): Promise<boolean> {
  // A permission the token may not read (it needs repository admin) counts as none.
  const permission = await forge.getPermission(login).catch(() => "none");
  return permission === "admin" || permission === "write";
}

/** `known`: the issue and its state as its own object said (reconciliation), rather than D1's copy. */
export async function routeComment(
  env: Env,
  project: Project,
  event: CommentEvent,
  key: string,
  cause: Cause,
  known?: { number: number; state: string },
): Promise<Routed> {
  const { body, author, issueNumber, isPullRequest } = event.comment;
  if (event.action !== "created")
    return { kind: "ignored", reason: `comment ${event.action} needs no action` };
  const number =
    known?.number ?? (isPullRequest ? await issueOfPull(env, project.id, issueNumber) : issueNumber);
  const state =
    known?.state ??
    (number === null ? undefined : (await lifecycleStates(env, project.id, [number])).get(number));
  if (number === null || state === undefined) {
    return { kind: "ignored", reason: `#${issueNumber} has no lifecycle` };
  }
  const parsed = parseComment(body);
  if (parsed.kind === "text" && state !== "escalated") {
    return { kind: "ignored", reason: `a comment on #${number} in state ${state} needs no action` };
  }
  // Conveyor's own comments (its escalation notices among them) are known by their author, never by a marker.
  if (sameLogin(author, await conveyorAccount(env, project))) {
    return { kind: "ignored", reason: "Conveyor's own comment" };
  }
  const forge = await forgeClientFor(env, project);
  // Answers go through the issue's outbox: two copies of a delivery in flight post one.
  const answer = (suffix: string, text: string) =>
    sendEvent(env, project, number, `${key}:${suffix}`, cause, {
      type: "reply",
      thread: issueNumber,
      text,
      to: author,
    });
  if (!(await canCommand(forge, author))) {
    if (parsed.kind === "text") return { kind: "ignored", reason: `${author} has no write access` };
    await answer("refused", `@${author} only users with write access can command Conveyor.`);
    return { kind: "routed", events: 1 };
  }
  if (parsed.kind === "vault") {
    const refusal = await decideVaultItem(env, project, parsed, author);
    if (refusal) await answer("vault", `@${author} ${refusal}`);
    return { kind: "routed", events: refusal ? 1 : 0 };
  }
  if (parsed.kind === "unknown_command") {
    const usage =
      "`/conveyor retry`, `/conveyor abandon`, `/conveyor accept`, `/conveyor approve <id>` or `/conveyor reject <id> [reason]`";
    await answer("unknown", `@${author} unknown command \`${parsed.verb}\`: use ${usage}.`);
    return { kind: "routed", events: 1 };
  }
  const lifecycle: LifecycleEvent =
    parsed.kind === "text"
      ? { type: "human_reply", author, text: body }
      : { type: parsed.command, by: author };
  const result = await sendEvent(env, project, number, `${key}:comment`, cause, lifecycle);
  // Nothing to accept (no proposal, or one for an escalation the issue has left): the writer is told why.
  if (lifecycle.type === "accept" && result.outcome === "rejected" && !result.duplicate) {
    await answer("accept", `@${author} nothing to accept: ${result.reason ?? "the lifecycle refused it"}.`);
    return { kind: "routed", events: 2 };
  }
  return { kind: "routed", events: 1 };
}

/** A writer's `/conveyor approve|reject <id>`: the vault decides; why it refused, if it did. */
async function decideVaultItem(
  env: Env,
  project: Project,
  parsed: Extract<ParsedComment, { kind: "vault" }>,
  author: string,
): Promise<string | null> {
  if (!parsed.id) return `name the vault item: \`/conveyor ${parsed.command} v<n>\`.`;
  const result = await projectStub(env, project.id).vaultDecide(parsed.id, {
    decision: parsed.command,
    by: author,
    ...(parsed.reason && { reason: parsed.reason }),
  });
  return result.ok ? null : `cannot ${parsed.command} ${parsed.id}: ${result.error}.`;
}

/** Labelling an issue `loop:abandon` abandons it; the forge lets only writers label. */
export const wantsAbandon = (labels: readonly string[]) => labels.includes(ABANDON_LABEL);

export async function routeReview(
  env: Env,
  project: Project,
  event: ReviewEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const { pullNumber, state: verdict, author, headSha } = event.review;
  if (verdict !== "approved") return { kind: "ignored", reason: `a ${verdict} review needs no action` };
  const number = await issueOfPull(env, project.id, pullNumber);
  const state = number === null ? undefined : (await lifecycleStates(env, project.id, [number])).get(number);
  if (number === null || state !== "awaiting_approval") {
    return { kind: "ignored", reason: `pull request #${pullNumber} waits for no approval` };
  }
  // A human's approval is what the held merge waits for: Conveyor's account (a writer) is never one, whatever
  // the forge lets it approve.
  if (sameLogin(author, await conveyorAccount(env, project))) {
    return { kind: "ignored", reason: "Conveyor's own review approves nothing" };
  }
  if (!(await canCommand(await forgeClientFor(env, project), author))) {
    return { kind: "ignored", reason: `${author} has no write access` };
  }
  await sendEvent(env, project, number, `${key}:approval`, cause, {
    type: "human_approval",
    by: author,
    headSha,
  });
  return { kind: "routed", events: 1 };
}
