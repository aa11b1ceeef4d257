/**
 * CI webhooks (GitHub check suites and runs, workflow runs and jobs, commit statuses; Gitea status) are a
 * trigger only: for the commit an issue waits on, the verdict is read back from the forge (every status,
 * check run and check suite of that sha), so one green check never passes for the whole of CI. For a person's
 * pull request's head, it may start the review that waited for CI (src/agents/people-reviews.ts).
 */
import { reviewPeoplesPulls } from "../agents/people-reviews.ts";
import { readCi } from "../ci/gate.ts";
import type { Env } from "../env.ts";
import type { CiEvent } from "../forge/webhooks/events.ts";
import { type Cause, sendEvent } from "../projects/lifecycle-client.ts";
import { issueAwaitingCi } from "../projects/mirror.ts";
import { forgeClientFor, type Project } from "../projects/store.ts";
import type { Routed } from "./route-event.ts";

export async function routeCi(
  env: Env,
  project: Project,
  event: CiEvent,
  key: string,
  cause: Cause,
): Promise<Routed> {
  const { sha, state } = event.ci;
  // A check starting changes no verdict; its completion, or the next poll, will be read.
  if (state === "pending") return { kind: "routed", events: 0 };
  const number = await issueAwaitingCi(env, project.id, sha);
  if (number === null) {
    const reviews = await reviewPeoplesPulls(env, project, await forgeClientFor(env, project), sha);
    if (reviews.length > 0) return { kind: "routed", events: 0 };
    return { kind: "ignored", reason: `no issue waits for CI on ${sha}` };
  }
  const result = await readCi(env, project, await forgeClientFor(env, project), number, sha);
  if (!result) return { kind: "routed", events: 0 };
  await sendEvent(env, project, number, `${key}:ci`, cause, result);
  return { kind: "routed", events: 1 };
}
