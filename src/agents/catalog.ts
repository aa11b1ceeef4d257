/**
 * A project's agents: the built-ins, as its repository overrides, disables or adds to them in
 * `.conveyor/agents/<name>.md`. A malformed file is reported and its agent does not run (not even the
 * built-in it meant to change); every other agent is unaffected.
 */
import { type AgentDefinition, parseAgentDefinition } from "./definition.ts";
import { LIFECYCLE_LABELS } from "./lifecycle-labels.ts";

export const AGENTS_DIR = ".conveyor/agents/";
/** More than this many files in the directory: the rest are reported, not read. */
export const MAX_REPOSITORY_AGENTS = 20;

export type AgentProblem = { name: string; source: AgentDefinition["source"]; error: string };
export type Catalog = { agents: AgentDefinition[]; problems: AgentProblem[] };

/**
 * `files`: the repository's files under `.conveyor/agents/` (path → text), as read at the default branch.
 * `reserved`: the project's lifecycle labels, which no definition's output may name.
 */
export function agentCatalog(
  builtins: Readonly<Record<string, string>>,
  files: ReadonlyMap<string, string>,
  reserved: readonly string[] = LIFECYCLE_LABELS,
): Catalog {
  const agents = new Map<string, AgentDefinition>();
  const problems: AgentProblem[] = [];
  const add = (name: string, text: string, source: AgentDefinition["source"]) => {
    const parsed = parseAgentDefinition(name, text, source, reserved);
    if (parsed.ok) agents.set(name, parsed.value);
    else {
      agents.delete(name);
      problems.push({ name, source, error: parsed.error });
    }
  };
  for (const [name, text] of Object.entries(builtins)) add(name, text, "builtin");
  const paths = [...files.keys()]
    .filter((path) => path.startsWith(AGENTS_DIR) && path.endsWith(".md"))
    .sort();
  for (const [i, path] of paths.entries()) {
    const name = path.slice(AGENTS_DIR.length, -".md".length);
    if (i >= MAX_REPOSITORY_AGENTS) {
      agents.delete(name);
      problems.push({ name, source: "repository", error: `more than ${MAX_REPOSITORY_AGENTS} agent files` });
    } else add(name, files.get(path) ?? "", "repository");
  }
  return { agents: [...agents.values()].sort((a, b) => a.name.localeCompare(b.name)), problems };
}
