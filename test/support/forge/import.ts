/**
 * A repository's history brought in as Gitea's repository migration brings it (`POST /repos/migrate` keeps
 * each issue's poster, times, labels and comments, and sends no webhook): how a test gets an existing
 * repository with issues older than Conveyor's registration, some stale for months.
 */
import { z } from "zod";
import { ensureUser } from "./repositories.ts";
import type { Issue, Repo } from "./state.ts";
import type { Store } from "./store.ts";

const rfc3339 = z.iso
  .datetime({ offset: true })
  .transform((at) => new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z"));

export const importedIssue = z.object({
  title: z.string().trim().min(1),
  body: z.string().default(""),
  /** Created as a user when missing. */
  author: z.string().min(1),
  /** Names; missing ones are created. */
  labels: z.array(z.string().min(1)).default([]),
  createdAt: rfc3339,
  /** Default: the creation time (or the last comment's). */
  updatedAt: rfc3339.optional(),
  closedAt: rfc3339.nullable().default(null),
  /** Comments by the author, spread between creation and the last update. */
  comments: z.number().int().min(0).max(100).default(0),
});
export type ImportedIssue = z.input<typeof importedIssue>;

/** Adds `issues` to `repo`, numbered next in order; returns their numbers. */
export function importIssues(store: Store, repo: Repo, input: readonly ImportedIssue[]): number[] {
  const issues = z.array(importedIssue).parse(input);
  const numbers: number[] = [];
  for (const item of issues) {
    const poster = ensureUser(store, item.author, false);
    const updatedAt = item.updatedAt ?? item.closedAt ?? item.createdAt;
    if (Date.parse(updatedAt) < Date.parse(item.createdAt)) throw new RangeError("updated before created");
    const labelIds = item.labels.map((name) => labelId(store, repo, name));
    const index = Math.max(0, ...repo.issues.map((issue) => issue.index)) + 1;
    const issue: Issue = {
      id: store.nextId(),
      index,
      posterId: poster.id,
      title: item.title,
      body: item.body,
      state: item.closedAt ? "closed" : "open",
      labelIds,
      comments: Array.from({ length: item.comments }, () => ({
        id: store.nextId(),
        posterId: poster.id,
        body: "Still wanted.",
        createdAt: updatedAt,
        updatedAt,
      })),
      createdAt: item.createdAt,
      updatedAt,
      closedAt: item.closedAt,
      pull: null,
    };
    repo.issues.push(issue);
    numbers.push(index);
  }
  store.save();
  return numbers;
}

function labelId(store: Store, repo: Repo, name: string): number {
  const known = repo.labels.find((label) => label.name === name);
  if (known) return known.id;
  const id = store.nextId();
  repo.labels.push({ id, name, color: "ededed", description: "" });
  return id;
}
