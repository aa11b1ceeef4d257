/**
 * Safe outputs: what an agent run asks the forge to do, and the check that decides, from the agent's
 * definition alone, which requests are applied. The agent never writes to the forge; the Worker applies the
 * accepted outputs exactly once and records each rejected one with its reason.
 */
import { z } from "zod";
import { reportSchema } from "../critic/report.ts";
import type { AgentDefinition, OutputType } from "./definition.ts";
import { diagnosisSchema, proposedStepSchema } from "./proposal-schema.ts";

const issueNumber = z.number().int().positive();
const labelList = z.array(z.string().min(1).max(50)).min(1).max(10);
// GitHub caps an issue's title at 256 characters and a body or comment at 65 536.
const body = z.string().min(1).max(65_536);

export const requestedOutputSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("create_issue"),
    title: z.string().trim().min(1).max(200),
    body,
    labels: z.array(z.string().min(1).max(50)).max(10).default([]),
  }),
  z.object({ type: z.literal("comment"), issue: issueNumber, body }),
  z.object({ type: z.literal("add_labels"), issue: issueNumber, labels: labelList }),
  z.object({ type: z.literal("remove_labels"), issue: issueNumber, labels: labelList }),
  z.object({ type: z.literal("close_issue"), issue: issueNumber, reason: z.string().min(1).max(2_000) }),
  z.object({ type: z.literal("link_dependency"), issue: issueNumber, dependsOn: issueNumber }),
  // The Worker critic's report, as the same schema: both reviews are applied by one piece (src/critic/apply.ts).
  reportSchema.extend({ type: z.literal("submit_review"), pr: issueNumber }),
  // A triage's answer to the escalation its run is about (src/domain/escalation.ts).
  z.object({
    type: z.literal("propose_step"),
    issue: issueNumber,
    diagnosis: diagnosisSchema,
    step: proposedStepSchema,
  }),
  z.object({ type: z.literal("noop"), reason: z.string().min(1).max(2_000) }),
]);
export type RequestedOutput = z.output<typeof requestedOutputSchema>;

/** At most this many requests are read from one run; the caps are far lower. */
export const MAX_REQUESTS_PER_RUN = 200;

/** What the check knows of the forge: the labels of the issues a run targets (absent: not an open issue). */
export type Targets = ReadonlyMap<number, { labels: readonly string[] }>;

/** The run's context: the pull request a review run is about, the escalated issue a triage run is about. */
export type RunContext = { pullRequest?: number; escalated?: number };

export type OutputDecision =
  | { status: "accepted"; output: RequestedOutput }
  | { status: "rejected"; output: RequestedOutput; reason: string };

/**
 * Decides each request in order: declared by the definition, under its per-run cap, within its allowed
 * labels, aimed at an open issue carrying the required labels, not a repeat. Accepted outputs come back as
 * they will be applied (a created issue's title prefix and fixed labels added).
 */
export function checkOutputs(
  definition: Pick<AgentDefinition, "outputs">,
  requests: readonly RequestedOutput[],
  targets: Targets,
  context: RunContext = {},
): OutputDecision[] {
  const used = new Map<OutputType, number>();
  const seen = new Set<string>();
  return requests.map((output) => {
    const reason = refusal(definition, output, targets, context, used.get(output.type) ?? 0, seen);
    if (reason) return { status: "rejected", output, reason };
    used.set(output.type, (used.get(output.type) ?? 0) + 1);
    seen.add(identity(output));
    return { status: "accepted", output: applied(definition, output) };
  });
}

function refusal(
  { outputs }: Pick<AgentDefinition, "outputs">,
  output: RequestedOutput,
  targets: Targets,
  context: RunContext,
  used: number,
  seen: ReadonlySet<string>,
): string | undefined {
  if (output.type === "noop") return undefined;
  const config = outputs[output.type];
  if (!config) return `${output.type} is not among this agent's outputs`;
  if (used >= config.max) return `over the cap: at most ${config.max} ${output.type} per run`;
  if (seen.has(identity(output))) return "the same output was already asked for in this run";
  switch (output.type) {
    case "create_issue": {
      const allowed = (config as NonNullable<typeof outputs.create_issue>).allowedLabels;
      return outsideOf(output.labels, allowed);
    }
    case "add_labels":
    case "remove_labels": {
      const allowed = (config as NonNullable<typeof outputs.add_labels>).allowedLabels;
      return notOpen(output.issue, targets) ?? outsideOf(output.labels, allowed);
    }
    case "comment":
    case "close_issue": {
      const required = (config as NonNullable<typeof outputs.comment>).requiredLabels;
      return notOpen(output.issue, targets) ?? missingLabels(output.issue, required, targets);
    }
    case "link_dependency":
      if (output.issue === output.dependsOn) return "an issue cannot depend on itself";
      return notOpen(output.issue, targets);
    case "submit_review":
      return output.pr === context.pullRequest
        ? undefined
        : `a review only of the pull request the run is about (#${context.pullRequest ?? "none"})`;
    case "propose_step":
      return output.issue === context.escalated
        ? undefined
        : `a proposal only for the escalated issue the run is about (#${context.escalated ?? "none"})`;
  }
}

function outsideOf(labels: readonly string[], allowed: readonly string[]): string | undefined {
  const refused = labels.filter((l) => !allowed.includes(l));
  return refused.length === 0 ? undefined : `labels not allowed for this agent: ${refused.join(", ")}`;
}

function notOpen(issue: number, targets: Targets): string | undefined {
  return targets.has(issue) ? undefined : `#${issue} is not an open issue of this project`;
}

function missingLabels(issue: number, required: readonly string[], targets: Targets): string | undefined {
  const carried = targets.get(issue)?.labels ?? [];
  const missing = required.filter((l) => !carried.includes(l));
  return missing.length === 0 ? undefined : `#${issue} lacks the required labels: ${missing.join(", ")}`;
}

/** Two requests that would do the same thing twice. */
function identity(output: RequestedOutput): string {
  switch (output.type) {
    case "create_issue":
      return `create_issue:${output.title.toLowerCase()}`;
    case "add_labels":
    case "remove_labels":
      return `${output.type}:${output.issue}:${[...output.labels].sort().join(",")}`;
    default:
      return JSON.stringify(output);
  }
}

function applied({ outputs }: Pick<AgentDefinition, "outputs">, output: RequestedOutput): RequestedOutput {
  if (output.type !== "create_issue" || !outputs.create_issue) return output;
  const { titlePrefix, labels } = outputs.create_issue;
  const title = output.title.startsWith(titlePrefix) ? output.title : `${titlePrefix}${output.title}`;
  return { ...output, title, labels: [...new Set([...labels, ...output.labels])] };
}
