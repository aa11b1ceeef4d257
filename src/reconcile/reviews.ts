/**
 * Lost review webhooks: a person's review (an approval, a change request, a dismissal) sent while the Worker
 * was down, or lost on the way, read back from the forge. A review updates its pull request's `updated_at` on
 * GitHub, Gitea and Forgejo alike (Gitea and Forgejo stamp the issue with the review's comment, and with a
 * dismissal's, which they send no webhook for), so only the pull requests the cycle's listing shows changed are
 * read, and only those of issues whose state listens to reviews. Each review goes through the webhook route's
 * own translation under the review's own id: its late webhook, or the next cycle, changes nothing. A pull
 * request whose reviews could not be read costs only itself: the others are heard, it is read next cycle.
 */

import { reviewsToHear } from "../domain/human-review.ts";
import { edges } from "../domain/lifecycle.ts";
import { sameLogin } from "../domain/logins.ts";
import { hearReview, reviewEventId } from "../hooks/route-review.ts";
import { issueStub } from "../issue-stub.ts";
import { conveyorAccount } from "../projects/account.ts";
import type { ChangedThreads } from "./live.ts";

/** The states in which a review changes something (the lifecycle table says which). */
const LISTENING = new Set<string>(edges().flatMap((e) => (e.event === "pr_review" ? [e.from] : [])));

/** Pull requests whose reviews were read, and reviews the issues heard for the first time. */
export type ReviewsReconciled = { read: number; heard: number };

/**
 * Hears the reviews on `live` issues' pull requests the listing says changed, submitted since `since` (where
 * the listing started, on the forge's clock).
 */
export async function reconcileReviews(reads: ChangedThreads, since: number): Promise<ReviewsReconciled> {
  const { env, project, forge, cause, live, changed, failures } = reads;
  const counts: ReviewsReconciled = { read: 0, heard: 0 };
  const listening = live.filter(
    (entry) => entry.prNumber !== null && changed.has(entry.prNumber) && LISTENING.has(entry.state),
  );
  for (const entry of listening) {
    const pullNumber = entry.prNumber ?? 0;
    await failures.isolate(`reviews of #${pullNumber}`, [pullNumber], async () => {
      const own = await conveyorAccount(env, project);
      const listed = await forge.listReviews(pullNumber);
      counts.read++;
      const fresh = reviewsToHear(listed, (login) => sameLogin(login, own), since);
      if (fresh.length === 0) return;
      // The object's own state: D1's copy lags it, and an approval means something else in a held merge.
      let state = (await issueStub(env, project.id, entry.number).summary())?.state ?? entry.state;
      for (const { id, state: verdict, author, body, commitId } of fresh) {
        if (!LISTENING.has(state)) continue;
        const review = { pullNumber, reviewId: id, state: verdict, author, body, headSha: commitId };
        const issue = { number: entry.number, state };
        const routed = await hearReview(env, project, forge, review, issue, cause, reviewEventId(review, id));
        if (routed.kind !== "routed") continue;
        counts.heard++;
        // What the next review means depends on where this one took the issue.
        state = (await issueStub(env, project.id, entry.number).summary())?.state ?? state;
      }
    });
  }
  return counts;
}
