/**
 * Conveyor opening an issue once under a key, as `commentOnce` posts a comment: the issue carries a hidden
 * marker of the key (src/crypto/markers.ts), and a retry after a lost answer finds the one it opened among its
 * own account's issues with the given label, instead of opening a second.
 */
import { commentMarker } from "../crypto/markers.ts";
import { sameLogin } from "../domain/logins.ts";
import type { Issue } from "./client/index.ts";
import type { Poster } from "./comment-once.ts";
import { type PostBody, type PostTitle, withMarker } from "./post/post.ts";

/** The issue Conveyor opened under `key` and labelled `label`, if it did: only its own account's issues count. */
export async function issueOpenedUnder(
  poster: Poster,
  label: string,
  key: string,
): Promise<Issue | undefined> {
  const marker = await commentMarker(poster.secretsKey, key);
  const issues = await poster.forge.listIssuesByLabel(label, "all");
  return issues.find((issue) => sameLogin(issue.author, poster.account) && issue.body.includes(marker));
}

/** Opens the issue once under `key`; `labels` must hold `label`, where a retry looks for it. Its number. */
export async function openIssueOnce(
  poster: Poster,
  key: string,
  label: string,
  issue: { title: PostTitle; body: PostBody; labels: string[] },
): Promise<number> {
  const found = await issueOpenedUnder(poster, label, key);
  if (found) return found.number;
  const marker = await commentMarker(poster.secretsKey, key);
  const { number } = await poster.forge.createIssue({ ...issue, body: withMarker(issue.body, marker) });
  return number;
}
