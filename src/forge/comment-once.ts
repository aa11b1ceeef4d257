import { commentMarker } from "../crypto/markers.ts";
import { sameLogin } from "../domain/logins.ts";
import type { ForgeClient, NewReview } from "./client/index.ts";
import type { PostPolicy } from "./post/policy.ts";
import { type PostBody, withMarker } from "./post/post.ts";

/**
 * Conveyor posting on a forge: the client, its own account, the secret its markers are made with, and what
 * text it did not write may keep there (src/forge/post). `issueAuthor`: a post on an issue may mention the
 * issue's author (the project's `mentions.issueAuthor`).
 */
export type Poster = {
  forge: ForgeClient;
  account: string;
  secretsKey: string | undefined;
  policy: PostPolicy;
  issueAuthor: boolean;
};

/** The policy for a post on issue `number`: with its author among the mentions, where the project allows. */
export async function policyOn(poster: Poster, number: number): Promise<PostPolicy> {
  if (!poster.issueAuthor) return poster.policy;
  const { author } = await poster.forge.getIssue(number);
  return { ...poster.policy, mentions: [...poster.policy.mentions, author] };
}

/**
 * Posts once under `key`: a retry after a lost response finds the first post instead of adding one. Only
 * Conveyor's own comments count, and the marker cannot be computed without the Worker's secret (nor copied:
 * no post of foreign text holds one).
 */
export async function commentOnce(poster: Poster, number: number, key: string, body: PostBody) {
  const marker = await commentMarker(poster.secretsKey, key);
  const existing = await poster.forge.listComments(number);
  if (existing.some((c) => sameLogin(c.author, poster.account) && c.body.includes(marker))) return;
  await poster.forge.comment(number, withMarker(body, marker));
}

/**
 * Submits a review once under `key`, as `commentOnce` posts a comment: the marker rides in the review's body,
 * and a retry finds Conveyor's own review carrying it.
 */
export async function reviewOnce(poster: Poster, number: number, key: string, review: NewReview) {
  const marker = await commentMarker(poster.secretsKey, key);
  const existing = await poster.forge.listReviews(number);
  if (existing.some((r) => sameLogin(r.author, poster.account) && r.body.includes(marker))) return;
  await poster.forge.createReview(number, { ...review, body: withMarker(review.body, marker) });
}
