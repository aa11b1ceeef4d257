/** What a commit's statuses say about its CI, for the contexts a project counts. Pure. */
import type { CommitStatus } from "../forge/client/types.ts";

export type CiVerdict =
  | { kind: "pending" }
  | { kind: "green" }
  /** `targetUrls`: where the failing statuses point (a CI's pipeline page, where its logs can be found). */
  | { kind: "red"; excerpt: string; targetUrls: (string | null)[] };

/** `*` matches any run of characters, slashes included (`ci/woodpecker/*`). */
export function contextMatcher(pattern: string): (context: string) => boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (context) => regex.test(context);
}

export function combinedVerdict(statuses: readonly CommitStatus[], pattern: string): CiVerdict {
  const matches = contextMatcher(pattern);
  // Forges list every status ever posted; the newest per context is first.
  const latest = new Map<string, CommitStatus>();
  for (const status of statuses)
    if (matches(status.context) && !latest.has(status.context)) latest.set(status.context, status);
  const counted = [...latest.values()];
  const failing = counted.filter((s) => s.state === "failure" || s.state === "error");
  if (failing.length > 0) {
    return {
      kind: "red",
      excerpt: failing.map(describe).join("\n"),
      targetUrls: failing.map((s) => s.targetUrl),
    };
  }
  if (counted.length > 0 && counted.every((s) => s.state === "success")) return { kind: "green" };
  return { kind: "pending" };
}

const describe = (s: CommitStatus) =>
  `${s.context}: ${s.state}${s.description ? ` — ${s.description}` : ""}${s.targetUrl ? ` (${s.targetUrl})` : ""}`;
