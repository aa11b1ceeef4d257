/**
 * Reviews of people's pull requests (issue 30; with `critic.reviewHumanPullRequests`): with `reviews.people:
 * after_ci` (the default) the reviewer runs once CI has a verdict on the pull request's head, not at each push:
 * CI's findings come first, and a push before the verdict supersedes the head waiting for it. A head is
 * reviewed once, whatever asks for it first — its push's webhook (CI done already), a CI webhook, or
 * reconciliation, which looks at every person's open pull request each cycle and so recovers a lost webhook.
 * The project's object decides each (durable-objects/project/agents/triggers.ts).
 */
import { ciVerdict } from "../domain/ci-verdict.ts";
import { sameLogin } from "../domain/logins.ts";
import type { Env } from "../env.ts";
import type { ForgeClient, OpenPullRequest } from "../forge/client/index.ts";
import { projectStub } from "../project-stub.ts";
import { conveyorAccount } from "../projects/account.ts";
import type { ProjectSettings } from "../projects/config.ts";
import type { Project } from "../projects/store.ts";
import type { AgentTrigger } from "./triggers.ts";

export type PeopleReviews = "off" | "on_push" | "after_ci";

export const peopleReviews = (settings: ProjectSettings): PeopleReviews =>
  settings.critic.reviewHumanPullRequests ? settings.reviews.people : "off";

/** The key a person's pull request's review at one head runs under: one run per head, whoever asks. */
export const peopleReviewKey = (pr: number, headSha: string) => `people-review\n${pr}\n${headSha}`;

/** Whether CI has a verdict on `sha`, green or red, read as the CI gate reads it (src/ci/gate.ts). */
export async function ciDecided(
  forge: ForgeClient,
  settings: ProjectSettings,
  sha: string,
): Promise<boolean> {
  const { ci } = settings;
  if (ci.kind === "none") return true;
  const verdict = ciVerdict(await forge.getCiReport(sha), {
    pattern: ci.contextPattern,
    names: ci.requiredChecks,
  });
  return verdict.kind !== "pending";
}

/** A person's open pull request as the trigger of its review after CI, at its head. */
export const afterCiTrigger = (pull: OpenPullRequest): AgentTrigger => ({
  event: "pull_request.synchronize",
  number: pull.number,
  sender: pull.author,
  subject: {
    kind: "pull_request",
    number: pull.number,
    title: pull.title,
    body: pull.body,
    labels: pull.labels,
    author: pull.author,
  },
  afterCi: { headSha: pull.headSha },
});

/** At most this many people's pull requests are looked at per call (the newest): a cycle's forge reads stay few. */
const MAX_PULLS = 20;

/**
 * Asks the project's object to review people's open pull requests once CI has a verdict: the one whose head is
 * `sha` (a CI webhook), or every one (reconciliation). Returns the runs it queued.
 */
export async function reviewPeoplesPulls(
  env: Env,
  project: Project,
  forge: ForgeClient,
  sha: string | null,
): Promise<string[]> {
  if (peopleReviews(project.settings) !== "after_ci") return [];
  const account = await conveyorAccount(env, project);
  const pulls = (await forge.listOpenPullRequests())
    .filter((pull) => !sameLogin(pull.author, account) && (sha === null || pull.headSha === sha))
    .slice(0, MAX_PULLS);
  const queued: string[] = [];
  for (const pull of pulls) {
    const key = peopleReviewKey(pull.number, pull.headSha);
    const outcome = await projectStub(env, project.id).triggerAgents(project, afterCiTrigger(pull), key);
    if ("error" in outcome) throw new Error(outcome.error);
    queued.push(...outcome.queued);
  }
  return queued;
}
