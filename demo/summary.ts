/**
 * What each sample issue went through, from the Worker's own record (D1) and the forge's pull requests; how
 * that differs from the scenario's design; and the summary table.
 */
import { z } from "zod";
import { parseDependencies } from "../src/domain/dependencies.ts";
import type { ScenarioRun } from "./drive.ts";
import type { Transition } from "./local-d1.ts";
import type { Demo } from "./orchestrator.ts";
import { PROJECT, REPO, type SampleIssue } from "./scenario.ts";

export type IssueOutcome = {
  issue: SampleIssue;
  state: string;
  reason: string | null;
  iterations: number;
  ciAttempts: number;
  criticRounds: number;
  escalations: number;
  /** Updates from the base (timing decides which issue falls behind): not part of an issue's design. */
  updates: number;
  usd: number;
  pr: number | null;
  sessionId: string | null;
  /** When a session first started on it, and when it merged (epoch ms). */
  startedAt: number | null;
  mergedAt: number | null;
  /** Merged pull requests from its branch, as the forge lists them. */
  mergedPulls: number[];
  /** What its merge left on the base: parents (one for a squash) and message. */
  mergeCommit: { parents: string[]; message: string } | null;
};

const pullsSchema = z.array(
  z.object({
    number: z.number(),
    merged: z.boolean(),
    head: z.object({ ref: z.string() }),
    merge_commit_sha: z.string().nullish(),
  }),
);

export type PullRequest = { number: number; merged: boolean; branch: string; mergeCommit: string | null };

/** Every pull request of the sample repository, as the forge lists them. */
export async function pullRequests(demo: Demo): Promise<PullRequest[]> {
  const { forge, accounts } = demo.sample;
  const res = await fetch(`${forge.apiUrl}/repos/${REPO}/pulls?state=all&limit=50`, {
    headers: { authorization: `token ${accounts.conveyor.token}` },
  });
  if (!res.ok) throw new Error(`listing pull requests: ${res.status}`);
  return pullsSchema.parse(await res.json()).map((p) => ({
    number: p.number,
    merged: p.merged,
    branch: p.head.ref,
    mergeCommit: p.merge_commit_sha ?? null,
  }));
}

export async function outcomes(demo: Demo, run: ScenarioRun): Promise<IssueOutcome[]> {
  const rows = new Map(demo.d1.issues(PROJECT).map((row) => [row.number, row]));
  const costs = demo.d1.costs(PROJECT);
  const merged = (await pullRequests(demo)).filter((pull) => pull.merged);
  const commits = new Map(
    await Promise.all(
      merged.map(async (pull) => {
        const sha = pull.mergeCommit;
        return [pull.number, sha ? await demo.sample.forge.commit(REPO, sha) : null] as const;
      }),
    ),
  );
  return run.issues.map((issue) => {
    const row = rows.get(issue.number);
    const edges = run.transitions.filter((t) => t.number === issue.number);
    const count = (match: (edge: Transition) => boolean) => edges.filter(match).length;
    return {
      issue,
      state: row?.state ?? "new",
      reason: row?.reason ?? null,
      iterations: row?.iteration ?? 0,
      // A forge update of a branch behind its base adds a CI run, and a second review when the first had
      // already approved (the update came at the merge): counted apart, as `updates`.
      ciAttempts: count((t) => t.event === "ci") - count((t) => t.event === "branch_updated"),
      criticRounds:
        count((t) => t.event === "review") -
        count((t) => t.event === "branch_updated" && t.from === "merging"),
      // An escalated issue's own edges (its triage's proposal) are no new escalation.
      escalations: count((t) => t.to === "escalated" && t.from !== "escalated"),
      updates: count((t) => t.event === "branch_updated" || t.event === "conflict"),
      usd: costs.get(issue.number) ?? 0,
      pr: row?.prNumber ?? null,
      sessionId: row?.sessionId ?? null,
      startedAt: edges.find((t) => t.to === "running")?.at ?? null,
      mergedAt: edges.find((t) => t.to === "merged")?.at ?? null,
      mergedPulls: merged.filter((pull) => pull.branch === row?.branch).map((pull) => pull.number),
      mergeCommit: (row?.prNumber && commits.get(row.prNumber)) || null,
    };
  });
}

/**
 * Where the run left the design. `exact` (the scripted model) also holds each issue to its designed path;
 * a real model is held to the outcome only.
 */
export function deviations(results: IssueOutcome[], exact: boolean): string[] {
  const found: string[] = [];
  const byNumber = new Map(results.map((r) => [r.issue.number, r]));
  for (const r of results) {
    const { design, number } = r.issue;
    const at = `#${number}`;
    if (r.state !== design.state)
      found.push(`${at} ended ${r.state}${r.reason ? ` (${r.reason})` : ""}, designed ${design.state}`);
    if (design.state === "done" && r.pr !== null) found.push(`${at}: an action opened pull request #${r.pr}`);
    if (r.state === "merged" && r.mergedPulls.length !== 1)
      found.push(`${at}: the forge shows ${r.mergedPulls.length} merged pull requests, not one`);
    // The sample allows squash merges only: one commit on the base, with Conveyor's message.
    const message = `${r.issue.title} (#${r.pr})\n\nCloses #${number}`;
    if (r.state === "merged" && (r.mergeCommit?.parents.length !== 1 || r.mergeCommit.message !== message))
      found.push(`${at}: not squashed with Conveyor's message: ${JSON.stringify(r.mergeCommit)}`);
    const dependencies = parseDependencies(r.issue.body, { repo: REPO, number }).filter(
      (d) => d.repo === null,
    );
    for (const dependency of dependencies) {
      const mergedAt = byNumber.get(dependency.number)?.mergedAt;
      if (r.startedAt !== null && (mergedAt == null || r.startedAt < mergedAt))
        found.push(`${at} started before its dependency #${dependency.number} merged`);
    }
    if (!exact) continue;
    for (const key of ["iterations", "ciAttempts", "criticRounds", "escalations"] as const) {
      if (!asDesigned(r, key)) found.push(`${at}: ${key} ${r[key]}, designed ${design[key]}`);
    }
  }
  return found;
}

/**
 * Whether the run's `key` is as designed. A maintainer's review on the pull request (`review`) comes when it
 * opens, and timing decides whether CI's and the critic's first rounds came before it: at least one of each,
 * at most the design's.
 */
export function asDesigned(
  r: IssueOutcome,
  key: "iterations" | "ciAttempts" | "criticRounds" | "escalations",
) {
  const designed = r.issue.design[key];
  const timed = r.issue.review && (key === "ciAttempts" || key === "criticRounds");
  return timed ? r[key] >= 1 && r[key] <= designed : r[key] === designed;
}

export function summaryTable(results: IssueOutcome[]): string {
  const header = [
    "issue",
    "final state",
    "iterations",
    "CI attempts",
    "critic rounds",
    "updates",
    "cost",
    "PR",
  ];
  const rows = results.map((r) => [
    `#${r.issue.number} ${r.issue.title}`,
    r.state,
    String(r.iterations),
    String(r.ciAttempts),
    String(r.criticRounds),
    String(r.updates),
    `$${r.usd.toFixed(2)}`,
    r.pr === null ? "-" : `#${r.pr}${r.mergedPulls.includes(r.pr) ? ` ${mergedAs(r)}` : ""}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** How the pull request landed: squashed (one commit on the base) or merged. */
const mergedAs = ({ mergeCommit }: IssueOutcome): string =>
  mergeCommit?.parents.length === 1 ? "squashed" : "merged";

/** One squash merge as it landed on the base: the first merged issue's commit, its message in full. */
export function squashShown(results: IssueOutcome[]): string | null {
  const first = results.find((r) => r.state === "merged" && r.mergeCommit?.parents.length === 1);
  if (!first?.mergeCommit) return null;
  const message = first.mergeCommit.message.split("\n").map((line) => (line ? `    ${line}` : ""));
  return [
    `#${first.issue.number}'s pull request #${first.pr}, squashed onto main as one commit:`,
    ...message,
  ].join("\n");
}
