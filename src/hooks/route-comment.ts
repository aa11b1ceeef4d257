/**
 * Comments: `/conveyor retry|abandon|merge|accept` (`accept`: the triage's proposed step) and the vault's
 * `/conveyor approve|reject <id> [reason]` from users with write access, a reply to an escalated issue, which
 * resumes its session with the reply, and a writer's words on the pull request while Conveyor works, which its
 * session hears (route-review.ts has the reviews). Commands from anyone else are refused with a reply (posted
 * by the issue's outbox, like every effect).
 */
import { ABANDON_LABEL, type ParsedComment, parseComment } from "../domain/commands.ts";
import { commentText, MAX_FEEDBACK_CHARS, standingChangeRequests } from "../domain/human-review.ts";
import { type LifecycleEvent, TERMINAL_STATES } from "../domain/lifecycle.ts";
import { sameLogin } from "../domain/logins.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import type { CommentEvent } from "../forge/webhooks/events.ts";
import { issueStub } from "../issue-stub.ts";
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
  // On the pull request, a writer's words reach a session at work, or one about to be (human-review.ts).
  const heard = isPullRequest && !TERMINAL_STATES.some((s) => s === state);
  if (parsed.kind === "text" && state !== "escalated" && !heard) {
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
      "`/conveyor retry`, `/conveyor abandon`, `/conveyor merge`, `/conveyor accept`, `/conveyor approve <id>` or `/conveyor reject <id> [reason]`";
    await answer("unknown", `@${author} unknown command \`${parsed.verb}\`: use ${usage}.`);
    return { kind: "routed", events: 1 };
  }
  const lifecycle: LifecycleEvent =
    parsed.kind === "text"
      ? state === "escalated"
        ? { type: "human_reply", author, text: body }
        : prComment(author, body, project)
      : parsed.command === "merge"
        ? { type: "merge_command", by: author, overrides: await overrides(env, project, forge, number) }
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

/** A writer's plain comment on the pull request: for the session's next round, or one of its own. */
const prComment = (author: string, body: string, project: Project): LifecycleEvent => ({
  type: "pr_review",
  by: author,
  verdict: "commented",
  text: commentText(author, body).slice(0, MAX_FEEDBACK_CHARS),
  writer: true,
  round: project.settings.humanComments === "new_round",
  lines: 0,
});

/** What `/conveyor merge` overrides: the change requests standing on the issue's pull request now. */
async function overrides(env: Env, project: Project, forge: ForgeClient, number: number) {
  const pull = (await issueStub(env, project.id, number).summary())?.prNumber ?? null;
  if (pull === null) return [];
  const own = await conveyorAccount(env, project);
  const holds = standingChangeRequests(await forge.listReviews(pull), (login) => sameLogin(login, own));
  return holds.map((hold) => hold.reviewId);
}
