import type { Forge } from "./forge.ts";
import type { Repo, User } from "./state.ts";
import { issuePayload } from "./webhooks/payloads.ts";

// Gitea's default closing keywords, each followed by one same-repository reference.
const CLOSING = /(?:^|[\s(])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+#(\d+)\b/gi;

/**
 * Closes the open issues `text` closes by keyword ("Fixes #3"), as Gitea does for a merged pull request's
 * title and body and for the commit messages pushed to the default branch; `exclude`: the pull request itself.
 */
export function closeByKeywords(forge: Forge, repo: Repo, text: string, doer: User, exclude?: number): void {
  const numbers = new Set([...text.matchAll(CLOSING)].map((match) => Number(match[1])));
  for (const number of numbers) {
    if (number === exclude) continue;
    const issue = forge.store.issue(repo, number);
    if (!issue || issue.pull || issue.state === "closed") continue;
    const now = forge.store.now();
    Object.assign(issue, { state: "closed", closedAt: now, updatedAt: now });
    forge.hooks.emit(repo, "issues", issuePayload(forge.render, repo, issue, "closed", doer));
  }
}
