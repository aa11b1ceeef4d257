/**
 * Dependency gating for an issue: which of its dependencies are still open, and whether it sits in a cycle.
 * State comes from the mirror; a dependency the mirror has never seen is read from the forge once and
 * mirrored, so the next evaluation is local.
 */
import { findCycles, type IssueRef, parseDependencies, tooManyDependencies } from "../domain/dependencies.ts";
import type { GateFindings } from "../domain/lifecycle.ts";
import type { Env } from "../env.ts";
import type { ForgeClient } from "../forge/client/index.ts";
import { dependencyGraph, type MirroredIssue, mirroredIssues, mirrorIssue } from "./mirror.ts";
import type { Project } from "./store.ts";

export type Gate = GateFindings;

/** The project's forge client, or one for another repository on the same forge; created on first use. */
export type Forges = (repo?: string) => Promise<ForgeClient>;

/** An issue declaring too many dependencies waits for none of them: it is blocked until its body is trimmed. */
export function sameRepoDependencies(project: Project, number: number, body: string): number[] {
  const refs = parseDependencies(body, { repo: project.repo, number });
  if (tooManyDependencies(refs)) return [];
  return refs.filter((ref) => ref.repo === null).map((ref) => ref.number);
}

export function toMirrored(project: Project, issue: Omit<MirroredIssue, "dependsOn">): MirroredIssue {
  return { ...issue, dependsOn: sameRepoDependencies(project, issue.number, issue.body) };
}

/**
 * The issue's gate, read from `body`: the text a writer queued (the brief), or the mirror's body for an issue
 * no writer has queued text of. The mirror's body is anyone's latest edit: the issue's outsider author must not
 * block or reorder queued work by editing its dependencies.
 */
export async function gateFor(
  env: Env,
  project: Project,
  issue: MirroredIssue,
  body: string,
  forge: Forges,
): Promise<Gate> {
  const refs = parseDependencies(body, { repo: project.repo, number: issue.number });
  // Read none of them: every reference costs an authenticated forge read, on every evaluation.
  if (tooManyDependencies(refs)) return { blockers: [], tooMany: refs.length };
  const local = refs.filter((r) => r.repo === null).map((r) => r.number);
  const known = new Map((await mirroredIssues(env, project.id, local)).map((i) => [i.number, i]));
  const blockers: string[] = [];
  for (const ref of refs) {
    if (await isOpen(env, project, ref, known, forge)) blockers.push(label(ref));
  }
  // Without dependencies of its own an issue cannot sit in a cycle: skip reading the project's graph.
  const cycle =
    refs.length === 0
      ? undefined
      : findCycles(withEdges(await dependencyGraph(env, project.id), issue.number, local)).find((c) =>
          c.includes(issue.number),
        );
  return cycle
    ? { blockers, cycle: [...rotateTo(cycle, issue.number), issue.number].map((n) => `#${n}`) }
    : { blockers };
}

async function isOpen(
  env: Env,
  project: Project,
  ref: IssueRef,
  known: Map<number, MirroredIssue>,
  forge: Forges,
): Promise<boolean> {
  if (ref.repo !== null) {
    // Another repository: ask its forge each time; an unreadable dependency keeps the issue blocked.
    const other = await forge(ref.repo);
    return (await other.getIssue(ref.number).catch(() => null))?.state !== "closed";
  }
  const mirrored = known.get(ref.number);
  if (mirrored) return mirrored.state === "open";
  const fetched = await (await forge()).getIssue(ref.number).catch(() => null);
  if (!fetched) return true;
  await mirrorIssue(env, project.id, toMirrored(project, fetched));
  return fetched.state === "open";
}

/** The project's graph with `number`'s own edges as the gated text declares them. */
function withEdges(graph: Map<number, number[]>, number: number, dependencies: number[]) {
  graph.set(number, dependencies);
  return graph;
}

const label = (ref: IssueRef) => (ref.repo ? `${ref.repo}#${ref.number}` : `#${ref.number}`);

function rotateTo(cycle: number[], start: number): number[] {
  const at = cycle.indexOf(start);
  return [...cycle.slice(at), ...cycle.slice(0, at)];
}
