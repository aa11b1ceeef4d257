/**
 * The forge's side of the supervisor: one issue per finding, opened when it is found and closed (with a
 * comment) when it resolves. Each is delivered from the ProjectDO's outbox, so it may run again after a lost
 * answer: the issue carries a hidden marker of the finding's key and the moment it was found (Conveyor's
 * comment markers, src/crypto/markers.ts), by which a retry finds the issue it already opened instead of
 * opening a second one. A cause that resolves and comes back later is a new occurrence, with a new issue.
 */
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { hasStatus } from "../../../src/forge/client/index.ts";
import { commentOnce } from "../../../src/forge/comment-once.ts";
import { issueOpenedUnder, openIssueOnce } from "../../../src/forge/issue-once.ts";
import { composePost, postTitle } from "../../../src/forge/post/post.ts";
import { log } from "../../../src/log.ts";
import { posterFor } from "../agents/forge-outputs.ts";

export type SupervisorEffect =
  | {
      kind: "open";
      key: string;
      openedAt: number;
      issue: { title: string; body: string; labels: string[] };
      /** The label the supervisor's issues carry: where a retry looks for the one it opened. */
      label: string;
    }
  | { kind: "close"; key: string; openedAt: number; comment: string; label: string };

/** The marker key of one occurrence of a finding. */
const occurrence = (effect: { key: string; openedAt: number }) =>
  `supervisor:${effect.key}:${effect.openedAt}`;

/**
 * Applies one effect on the forge; the number of the finding's forge issue (null: there is none). A refusal
 * that trying again cannot change (the issue was deleted, the token may not open issues) is logged and the
 * effect dropped, rather than holding up the ones behind it; anything else throws, and the outbox retries.
 */
export async function deliverSupervisorEffect(
  env: Env,
  projectId: string,
  effect: SupervisorEffect,
  known: number | null,
): Promise<number | null> {
  try {
    return await apply(env, projectId, effect, known);
  } catch (error) {
    if (!hasStatus(error, 403, 404, 410, 422)) throw error;
    log.warn("supervisor issue refused", { key: effect.key, kind: effect.kind, error: errorMessage(error) });
    return null;
  }
}

async function apply(
  env: Env,
  projectId: string,
  effect: SupervisorEffect,
  known: number | null,
): Promise<number | null> {
  const poster = await posterFor(env, projectId);
  const key = occurrence(effect);
  switch (effect.kind) {
    case "open":
      if (known !== null) return known;
      // The supervisor's words may carry a runner's or the forge's (an error, a host name): defused whole.
      return openIssueOnce(poster, key, effect.label, {
        title: postTitle(poster.policy, effect.issue.title),
        body: composePost(poster.policy, [{ mixed: effect.issue.body }]),
        labels: effect.issue.labels,
      });
    case "close": {
      const number = known ?? (await issueOpenedUnder(poster, effect.label, key))?.number ?? null;
      if (number === null) return null;
      const comment = composePost(poster.policy, [{ mixed: effect.comment }]);
      await commentOnce(poster, number, `${occurrence(effect)}:resolved`, comment);
      await poster.forge.closeIssue(number);
      return number;
    }
  }
}
