/**
 * An agent definition: a markdown file whose YAML frontmatter says when the agent runs, with what model,
 * budget and tools, and which safe outputs it may ask for (each with a per-run cap); the body is its prompt.
 * Built-ins ship with Conveyor; a repository overrides or adds its own in `.conveyor/agents/<name>.md`.
 */
import { Cron } from "croner";
import { parseDocument } from "yaml";
import { z } from "zod";
import { zodMessage } from "../validation.ts";
import { LIFECYCLE_LABELS, lifecycleLabelUses } from "./lifecycle-labels.ts";

export const AGENT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Forge events an agent can run on: `<event>.<action>` as the webhook routes name them. */
export const AGENT_EVENTS = [
  "issues.opened",
  "issues.labeled",
  "pull_request.opened",
  "pull_request.synchronize",
  "issue_comment.created",
  /** Not a forge event: an issue Conveyor works on escalated to a human (the triage's, docs/agents.md). */
  "issues.escalated",
] as const;

/** Claude Code tools an agent may be given. Bash runs in the sandbox, with the worktree and no push rights. */
export const AGENT_TOOLS = ["Read", "Grep", "Glob", "Bash"] as const;
const READ_ONLY_TOOLS = ["Read", "Grep", "Glob"] as const;

const label = z.string().min(1).max(50);
const labels = z.array(label).max(20);
const max = z.number().int().min(1).max(50).default(1);

/**
 * A safe output's config: its per-run cap, whether it is dangerous (each accepted one waits in the vault for a
 * decision before it is applied, docs/vault.md), and its own constraints. `strict`: a misspelt key is an
 * error, not a silently ignored constraint.
 */
const outputConfig = <T extends z.ZodRawShape>(constraints: T) =>
  z.object({ max, dangerous: z.boolean().default(false), ...constraints }).strict();

export const outputConfigSchemas = {
  create_issue: outputConfig({
    /** Added to every issue the agent creates. */
    labels: labels.default([]),
    /** The labels the agent may ask for besides; none when absent. */
    allowedLabels: labels.default([]),
    /** Put before every title. */
    titlePrefix: z.string().max(50).default(""),
  }),
  comment: outputConfig({ requiredLabels: labels.default([]) }),
  /** Labels drive the lifecycle (`backlog` queues work): an agent may touch only the labels listed. */
  add_labels: outputConfig({ allowedLabels: labels.min(1) }),
  remove_labels: outputConfig({ allowedLabels: labels.min(1) }),
  close_issue: outputConfig({ requiredLabels: labels.default([]) }),
  link_dependency: outputConfig({}),
  submit_review: outputConfig({}),
  /** The next step for an escalated issue, which a writer accepts with `/conveyor accept`. */
  propose_step: outputConfig({}),
} as const;

export type OutputType = keyof typeof outputConfigSchemas | "noop";
export const OUTPUT_TYPES = [...(Object.keys(outputConfigSchemas) as OutputType[]), "noop"] as const;

/** Five fields (minute hour day month weekday) or a nickname such as `@daily`, read in UTC. */
export function cronOf(expression: string): Cron {
  return new Cron(expression, { paused: true, mode: "5-part", timezone: "UTC" });
}

const cronExpression = z.string().superRefine((expression, ctx) => {
  try {
    cronOf(expression);
  } catch (error) {
    ctx.addIssue({
      code: "custom",
      message: error instanceof Error ? error.message : "not a cron expression",
    });
  }
});

export const frontmatterSchema = z
  .object({
    description: z.string().min(1).max(500),
    schedule: cronExpression.optional(),
    on: z.array(z.enum(AGENT_EVENTS)).min(1).max(AGENT_EVENTS.length).optional(),
    model: z.string().min(1).max(100).optional(),
    budgetUsd: z.number().positive().max(100).default(1),
    maxTurns: z.number().int().min(1).max(500).default(40),
    tools: z
      .array(z.enum(AGENT_TOOLS))
      .max(AGENT_TOOLS.length)
      .default([...READ_ONLY_TOOLS]),
    outputs: z
      .object(Object.fromEntries(Object.entries(outputConfigSchemas).map(([k, s]) => [k, s.optional()])))
      .strict()
      .default({}),
    enabled: z.boolean().default(true),
    /**
     * Who may start it with a forge event its `on` names: `anyone` (the default), or `writers`, users with
     * write access (asked of the forge at each event).
     */
    triggeredBy: z.enum(["anyone", "writers"]).default("anyone"),
  })
  .strict();

type OutputConfigs = { [K in keyof typeof outputConfigSchemas]?: z.output<(typeof outputConfigSchemas)[K]> };

export type AgentDefinition = Omit<z.output<typeof frontmatterSchema>, "outputs"> & {
  name: string;
  source: "builtin" | "repository";
  outputs: OutputConfigs;
  prompt: string;
};

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
/** A definition is a prompt, not a document: past this it is a mistake. */
export const MAX_DEFINITION_BYTES = 64 * 1024;

/**
 * Parses one definition; the error is one line naming what to fix. `reserved`: the project's lifecycle labels
 * (./lifecycle-labels.ts), which no output may name.
 */
export function parseAgentDefinition(
  name: string,
  text: string,
  source: AgentDefinition["source"],
  reserved: readonly string[] = LIFECYCLE_LABELS,
): Parsed<AgentDefinition> {
  if (!AGENT_NAME.test(name)) return { ok: false, error: `agent name "${name.slice(0, 60)}": ${AGENT_NAME}` };
  if (new TextEncoder().encode(text).length > MAX_DEFINITION_BYTES)
    return { ok: false, error: `larger than ${MAX_DEFINITION_BYTES} bytes` };
  const match = FRONTMATTER.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return { ok: false, error: "no frontmatter: the file must start with a --- line and close it" };
  const yaml = readYaml(match[1] ?? "");
  if (!yaml.ok) return { ok: false, error: `frontmatter: ${yaml.error}` };
  const frontmatter = frontmatterSchema.safeParse(yaml.value ?? {});
  if (!frontmatter.success) return { ok: false, error: `frontmatter: ${zodMessage(frontmatter.error)}` };
  const [lifecycle] = lifecycleLabelUses(frontmatter.data.outputs, reserved);
  if (lifecycle) {
    return {
      ok: false,
      error: `frontmatter: ${lifecycle} is a lifecycle label: Conveyor sets it, no agent output may name it`,
    };
  }
  if (!frontmatter.data.schedule && !frontmatter.data.on)
    return { ok: false, error: "frontmatter: give a schedule, an on list of events, or both" };
  const prompt = text.slice((match.index ?? 0) + match[0].length).trim();
  if (prompt === "") return { ok: false, error: "the prompt (the text after the frontmatter) is empty" };
  return {
    ok: true,
    value: { ...frontmatter.data, outputs: frontmatter.data.outputs as OutputConfigs, name, source, prompt },
  };
}

/** YAML without aliases and with unique keys; the error is its first line. */
export function readYaml(text: string): Parsed<unknown> {
  const document = parseDocument(text, { uniqueKeys: true });
  const [error] = document.errors;
  if (error) return { ok: false, error: error.message.split("\n")[0] ?? "invalid YAML" };
  try {
    // No aliases: a few lines of them expand into gigabytes (the "billion laughs").
    return { ok: true, value: document.toJS({ maxAliasCount: 0 }) };
  } catch (thrown) {
    return {
      ok: false,
      error: thrown instanceof Error ? (thrown.message.split("\n")[0] ?? "") : "invalid YAML",
    };
  }
}
