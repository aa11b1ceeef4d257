/**
 * The forge's side of agent runs: what the checks know of the targets (open issues and their labels, from
 * Conveyor's mirror of the forge), and applying one accepted output. Each apply is idempotent under its key,
 * since the outbox retries: comments carry Conveyor's marker, labels and closing are idempotent on the forge,
 * and a dependency line already in the body is not added again.
 */
import { withDependency } from "../../../src/agents/link-dependency.ts";
import type { RequestedOutput, Targets } from "../../../src/agents/outputs.ts";
import type { ReviewBinding } from "../../../src/agents/review-run.ts";
import type { TriageBinding } from "../../../src/agents/triage-run.ts";
import type { Env } from "../../../src/env.ts";
import { errorMessage } from "../../../src/error-message.ts";
import { hasStatus } from "../../../src/forge/client/index.ts";
import { commentOnce, type Poster, policyOn } from "../../../src/forge/comment-once.ts";
import { appended, composePost, postTitle, quotedPost } from "../../../src/forge/post/post.ts";
import { conveyorPoster } from "../../../src/projects/account.ts";
import { sendEvent } from "../../../src/projects/lifecycle-client.ts";
import { mirroredIssues } from "../../../src/projects/mirror.ts";
import { clientOf, loadRegistered, type Project } from "../../../src/projects/store.ts";
import { applyReviewRun } from "./review-run-apply.ts";

export async function agentTargets(env: Env, projectId: string, numbers: number[]): Promise<Targets> {
  const issues = await mirroredIssues(env, projectId, numbers);
  return new Map(
    issues.filter((issue) => issue.state === "open").map((issue) => [issue.number, { labels: issue.labels }]),
  );
}

/** The project's forge client, Conveyor's account on it and the secret its markers are made with. */
export async function posterFor(env: Env, projectId: string): Promise<Poster> {
  return (await projectPoster(env, projectId)).poster;
}

/** The project with its poster: a review applies the project's settings (protected paths, labels). */
async function projectPoster(env: Env, projectId: string): Promise<{ poster: Poster; project: Project }> {
  const registered = await loadRegistered(env, projectId);
  if (!registered) throw new Error(`project ${projectId} is not registered`);
  const { project } = registered;
  const forge = clientOf(env, project, await registered.secrets());
  return { poster: await conveyorPoster(env, project, forge), project };
}

/**
 * Which output of which run is applied, and the agent whose run it is (named on what it posts); `review`:
 * the pull request a review run is about; `triage`: the escalation a triage run answers.
 */
export type OutputRef = {
  key: string;
  runId: string;
  agent: string;
  review: ReviewBinding | null;
  triage?: TriageBinding | null;
};

/** Conveyor's line over an agent's words: which agent, which run. */
export const agentWrote = (agent: string, runId: string) =>
  `The agent \`${agent}\` (run \`${runId}\`) wrote:`;

/**
 * Applies one accepted output on the forge; `key` names it for the retries. A refusal that trying again
 * cannot change (the issue is gone, the forge rejects the request) comes back as its reason instead of
 * holding up the outputs after it; anything else throws, and the outbox retries.
 */
export async function applyAgentOutput(
  env: Env,
  projectId: string,
  ref: OutputRef,
  output: RequestedOutput,
): Promise<string | null> {
  try {
    return await apply(env, projectId, ref, output);
  } catch (error) {
    if (hasStatus(error, 403, 404, 410, 422)) return `the forge refused it: ${errorMessage(error)}`;
    throw error;
  }
}

/** Null once applied; the reason when the output cannot be applied as asked. */
async function apply(
  env: Env,
  projectId: string,
  { key, runId, agent, review, triage }: OutputRef,
  output: RequestedOutput,
): Promise<string | null> {
  const { poster, project } = await projectPoster(env, projectId);
  const { forge, policy } = poster;
  const by = agentWrote(agent, runId);
  switch (output.type) {
    case "create_issue":
      // A retry after a lost answer could file it twice; the check's one-per-title rule bounds it to the run.
      await forge.createIssue({
        title: postTitle(policy, output.title),
        body: quotedPost(policy, by, output.body),
        labels: output.labels,
      });
      return null;
    case "comment":
      await commentOnce(
        poster,
        output.issue,
        key,
        quotedPost(await policyOn(poster, output.issue), by, output.body),
      );
      return null;
    case "add_labels":
      await forge.addLabels(output.issue, output.labels);
      return null;
    case "remove_labels":
      for (const label of output.labels) await forge.removeLabel(output.issue, label);
      return null;
    case "close_issue": {
      const closing = composePost(await policyOn(poster, output.issue), [
        { conveyor: `Closed by the agent \`${agent}\` (run \`${runId}\`).` },
        { quote: output.reason, by: "Its reason:" },
      ]);
      await commentOnce(poster, output.issue, key, closing);
      await forge.closeIssue(output.issue);
      return null;
    }
    case "link_dependency": {
      // Read again on every try: a retry after a lost answer finds the line and edits nothing.
      const { body } = await forge.getIssue(output.issue);
      const linked = withDependency(body, output.dependsOn);
      if (linked === null)
        return "the issue's body ends inside a code block: no line added there would be read";
      if (linked !== body) await forge.editIssueBody(output.issue, appended(body, linked));
      return null;
    }
    case "submit_review":
      // Accepted only for the pull request a review run is about (src/agents/outputs.ts).
      if (!review) return "not a review run: there is no pull request to review";
      return applyReviewRun(env, poster, project, runId, review, output);
    case "propose_step": {
      // Accepted only for the issue a triage run is about (src/agents/outputs.ts); the issue posts it, once.
      if (!triage) return "not a triage run: there is no escalation to answer";
      const { issue: _issue, type: _type, ...proposed } = output;
      const proposal = { ...proposed, escalation: triage.escalation, runId, agent };
      const result = await sendEvent(
        env,
        project,
        triage.number,
        `triage-run:${runId}`,
        { kind: "job", id: runId },
        {
          type: "triage_proposal",
          proposal,
        },
      );
      return result.outcome === "rejected" ? `the issue refused it: ${result.reason ?? "no reason"}` : null;
    }
    case "noop":
      // Never queued: a noop asks for nothing.
      return null;
  }
}
