/**
 * The Worker's side of agent runs: the project's catalog (built-ins, as its repository changes them) and
 * queueing a run on the project's Durable Object with the prompt composed here.
 */
import type { AgentRunRequest } from "../contracts/project-object.ts";
import { randomToken, sha256Hex } from "../crypto/tokens.ts";
import type { Env } from "../env.ts";
import { errorMessage } from "../error-message.ts";
import { projectStub } from "../project-stub.ts";
import { budgetLimits } from "../projects/config.ts";
import { openBacklog } from "../projects/mirror.ts";
import { type FileReader, fileReaderOf, type Project, type Registered } from "../projects/store.ts";
import { recentActivity } from "./activity.ts";
import { backlogTokens, chooseBacklog, focusOf } from "./backlog.ts";
import { BUILTIN_AGENTS } from "./builtin.generated.ts";
import { AGENTS_DIR, agentCatalog, type Catalog, MAX_REPOSITORY_AGENTS } from "./catalog.ts";
import { agentPrompt } from "./context.ts";
import type { AgentDefinition, OutputType } from "./definition.ts";
import { lifecycleLabels } from "./lifecycle-labels.ts";
import type { ReviewRun } from "./review-run.ts";
import type { TriageRun } from "./triage-run.ts";
import type { EventSubject } from "./triggers.ts";

/** `files`: the repository's `.conveyor/agents/` files at the default branch (path → text). */
export const projectCatalog = (project: Project, files: ReadonlyMap<string, string>): Catalog =>
  agentCatalog(BUILTIN_AGENTS, files, lifecycleLabels(project.settings.labels));

/** The project's catalog as its default branch has it now. */
export async function loadCatalog(registered: Registered): Promise<Catalog> {
  return catalogOf(fileReaderOf(registered.project, await registered.secrets()), registered.project);
}

export async function catalogOf(forge: FileReader, project: Project): Promise<Catalog> {
  const files = await forge.readDirectory(AGENTS_DIR, project.settings.defaultBranch, MAX_REPOSITORY_AGENTS);
  return projectCatalog(project, files);
}

/** The catalog, or why the repository could not be read (the forge is down, the token lacks access). */
export function readCatalog(registered: Registered): Promise<Catalog | { error: string }> {
  return loadCatalog(registered).catch((error: unknown) => ({
    error: `cannot read the agents from the repository: ${errorMessage(error)}`,
  }));
}

export const newRunId = () => randomToken("run_", 12);

/**
 * A forge event's run of `agent`: its id derives from the delivery's content key (a hash of its signed body,
 * src/forge/webhooks/parse.ts), so a redelivery, or a captured delivery replayed under a new delivery id (a
 * header the signature does not cover), names the same run and queues nothing new.
 */
export async function eventRunId(project: string, contentKey: string, agent: string): Promise<string> {
  return `run_${(await sha256Hex(`${project}\n${contentKey}\n${agent}`)).slice(0, 24)}`;
}

/** A run triggered by a forge event (or a review request): its id, and what the event is about. */
export type EventRun = { runId: string; subject?: EventSubject };

/**
 * What queues one run of `definition` for `project`: its job, with the prompt composed now. `review`: the pull
 * request a review run is about; `triage`: the escalation a triage run answers.
 */
export async function agentRunRequest(
  env: Env,
  project: Project,
  definition: AgentDefinition,
  trigger: string,
  event?: EventRun,
  review?: ReviewRun,
  triage?: TriageRun,
): Promise<AgentRunRequest> {
  const { settings } = project;
  // A review is of one pull request: the open issues and the project's activity are not its business.
  const now = Date.now();
  const [rows, activity] = review
    ? [[], undefined]
    : await Promise.all([openBacklog(env, project.id), recentActivity(env, project.id, now)]);
  const focus = focusOf(definition.outputs, event?.subject);
  const backlog = chooseBacklog(rows, now, focus, backlogTokens(definition.budgetUsd));
  const context = {
    project: project.id,
    repo: project.repo,
    trigger,
    issues: backlog.entries,
    omitted: backlog.omitted,
    today: new Date(now).toISOString().slice(0, 10),
    ...(activity && { activity }),
    ...(event?.subject && { subject: event.subject }),
    ...(review && { checkout: `pull request #${review.checkout.pr} at ${review.checkout.headSha}` }),
    ...(triage && { escalation: triage.escalation }),
  };
  const prompt = agentPrompt(definition, context);
  const runId = event?.runId ?? newRunId();
  return {
    runId,
    trigger,
    outputs: definition.outputs,
    spec: {
      kind: "agent",
      project: project.id,
      issue: { number: 0, title: `agent ${definition.name}`, body: "" },
      repo: { fullName: project.repo, cloneUrl: project.cloneUrl, defaultBranch: settings.defaultBranch },
      branch: settings.defaultBranch,
      headSha: null,
      iteration: 0,
      sessionId: null,
      instructions: null,
      budget: { maxTurns: definition.maxTurns, usdRemaining: definition.budgetUsd },
      sandbox: settings.sandbox,
      // One session, no later round to read its transcript back.
      promptCacheTtl: "5m",
      agent: {
        runId,
        name: definition.name,
        prompt,
        tools: definition.tools,
        outputs: Object.keys(definition.outputs) as OutputType[],
        ...(definition.model && { model: definition.model }),
        ...(review && { review: review.checkout }),
      },
    },
    ...(review && { review: review.binding }),
    ...(triage && { triage: triage.binding }),
    policy: { parallel: settings.parallel, ...settings.jobs, budget: budgetLimits(settings) },
  };
}

/** Queues one run of `definition` for `project` on its Durable Object; returns the run's id. */
export async function queueAgentRun(
  env: Env,
  project: Project,
  definition: AgentDefinition,
  trigger: string,
): Promise<string> {
  const request = await agentRunRequest(env, project, definition, trigger);
  await projectStub(env, project.id).startAgentRun(request);
  return request.runId;
}
