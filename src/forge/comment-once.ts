import { commentMarker } from "../crypto/markers.ts";
import { sameLogin } from "../domain/logins.ts";
import type { ForgeClient, NewReview } from "./client/index.ts";

/** Conveyor posting on a forge: the client, its own account, and the secret its markers are made with. */
export type Poster = { forge: ForgeClient; account: string; secretsKey: string | undefined };

/**
 * Posts once under `key`: a retry after a lost response finds the first post instead of adding one. Only
 * Conveyor's own comments count, and the marker cannot be computed without the Worker's secret.
 */
export async function commentOnce(poster: Poster, number: number, key: string, body: string) {
  const marker = await commentMarker(poster.secretsKey, key);
  const existing = await poster.forge.listComments(number);
  if (existing.some((c) => sameLogin(c.author, poster.account) && c.body.includes(marker))) return;
  await poster.forge.comment(number, `${body}\n\n${marker}`);
}

/**
 * Submits a review once under `key`, as `commentOnce` posts a comment: the marker rides in the review's body,
 * and a retry finds Conveyor's own review carrying it.
 */
export async function reviewOnce(poster: Poster, number: number, key: string, review: NewReview) {
  const marker = await commentMarker(poster.secretsKey, key);
  const existing = await poster.forge.listReviews(number);
  if (existing.some((r) => sameLogin(r.author, poster.account) && r.body.includes(marker))) return;
  await poster.forge.createReview(number, { ...review, body: `${review.body}\n\n${marker}` });
}
