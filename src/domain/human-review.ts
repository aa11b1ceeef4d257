/**
 * People on Conveyor's pull request (docs/operating.md#people-on-the-pull-request): what a writer's review or
 * comment there tells the issue's session, and which reviews on the pull request hold its merge. Pure.
 */
import { sameLogin } from "./logins.ts";

/** What a review says, as both forges' webhooks and listings name it. */
export type ReviewVerdict = "approved" | "changes_requested" | "commented" | "dismissed";

/** A review comment on a line of the diff: where it points, the hunk it points into, and what it says. */
export type LineComment = { path: string; line: number | null; hunk: string; body: string };

/** One piece of a person's feedback waiting for the issue's session. `round`: it starts a round of its own. */
export type Feedback = { by: string; text: string; round: boolean };

/** A writer's change request standing on the pull request: who, and the review that says it. */
export type ReviewHold = { by: string; reviewId: number };

/** A review as the forge lists it (src/forge/client): `pending` ones are their author's draft, seen by nobody. */
export type ListedReview = {
  id: number;
  author: string;
  state: ReviewVerdict | "pending";
  /** Gitea and Forgejo keep a dismissed review's state and say so here; GitHub sets its state to dismissed. */
  dismissed: boolean;
  /** When it was submitted; a dismissal keeps it. */
  submittedAt?: string | null;
};

/** What one round's instructions may hold: the rest is left out, saying so. */
export const MAX_FEEDBACK_CHARS = 20_000;
/** Of a line comment's diff hunk, the lines that end at the line it points at. */
const HUNK_LINES = 8;
/** Pieces of feedback an issue keeps waiting for its session; the oldest give way. */
const MAX_PENDING = 20;

const VERB: Record<ReviewVerdict, string> = {
  changes_requested: "requested changes on the pull request",
  commented: "reviewed the pull request",
  approved: "approved the pull request",
  dismissed: "had their review dismissed",
};

/** What a person's review tells the session: their words, then each line they point at with its hunk. */
export function reviewText(by: string, verdict: ReviewVerdict, body: string, lines: LineComment[]): string {
  const head = body.trim() === "" ? `${by} ${VERB[verdict]}.` : `${by} ${VERB[verdict]}:\n\n${body.trim()}`;
  return [head, ...lines.map(lineText)].join("\n\n");
}

/** Of a review nobody obeys, what the issue's history shows of it. */
const SHOWN_CHARS = 300;

/** Why a review by someone without write access changed nothing: who, and what they said, for its page. */
export function shownNotObeyed(by: string, text: string): string {
  const said = text.replace(/\s+/g, " ").trim();
  const cut = said.length > SHOWN_CHARS ? `${said.slice(0, SHOWN_CHARS - 1)}…` : said;
  return `shown, not obeyed: ${by} has no write access${cut ? ` — ${cut}` : ""}`;
}

/** A plain comment on the pull request, as the session reads it. */
export const commentText = (by: string, body: string) =>
  `${by} commented on the pull request:\n\n${body.trim()}`;

function lineText({ path, line, hunk, body }: LineComment): string {
  const where = line === null ? `\`${path}\`` : `\`${path}\` line ${line}`;
  const shown = hunk.trimEnd().split("\n").slice(-HUNK_LINES).join("\n");
  if (shown.trim() === "") return `On ${where}:\n${body.trim()}`;
  const fence = "`".repeat(Math.max(3, longestRun(shown) + 1));
  return `On ${where}:\n${fence}diff\n${shown}\n${fence}\n${body.trim()}`;
}

const longestRun = (text: string) => Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));

/** The feedback waiting for the session, with `item` added; past the bound the oldest give way. */
export const withFeedback = (pending: readonly Feedback[] | undefined, item: Feedback): Feedback[] =>
  [...(pending ?? []), { ...item, text: item.text.slice(0, MAX_FEEDBACK_CHARS) }].slice(-MAX_PENDING);

/** Whether anything waiting asks for a round of its own (not only for the next one). */
export const wantsRound = (pending: readonly Feedback[] | undefined) => (pending ?? []).some((f) => f.round);

/**
 * The instructions a round gives the session from what waited for it, oldest first, within the bound: the
 * newest words are kept whole, and what does not fit is named as left out.
 */
export function feedbackInstructions(pending: readonly Feedback[]): string {
  const kept: string[] = [];
  let size = 0;
  for (const item of [...pending].reverse()) {
    if (size + item.text.length > MAX_FEEDBACK_CHARS) break;
    kept.unshift(item.text);
    size += item.text.length + 2;
  }
  const left = pending.length - kept.length;
  const note =
    left > 0 ? [`(${left} earlier ${left === 1 ? "piece" : "pieces"} of feedback left out: too long)`] : [];
  return [...note, ...kept].join("\n\n");
}

/** A continuation's instructions with the feedback that waited for it appended, and said to come from people. */
export function withPending(detail: string | undefined, pending: readonly Feedback[]): string {
  const said = `Meanwhile, on the pull request:\n\n${feedbackInstructions(pending)}`;
  return detail ? `${detail}\n\n${said}` : said;
}

/**
 * The change requests that stand on a pull request: for each reviewer, their latest review that approves,
 * requests changes or was dismissed decides (a comment changes nothing, as on both forges). Conveyor's own
 * reviews (`isOwn`) and those a writer's `/conveyor merge` overrode are not holds.
 */
export function standingChangeRequests(
  reviews: readonly ListedReview[],
  isOwn: (login: string) => boolean,
  overridden: readonly number[] = [],
): ReviewHold[] {
  const latest = new Map<string, ReviewHold | null>();
  for (const review of [...reviews].sort((a, b) => a.id - b.id)) {
    if (review.author === "" || isOwn(review.author)) continue;
    const key = review.author.toLowerCase();
    if (review.dismissed || review.state === "dismissed" || review.state === "approved")
      latest.set(key, null);
    else if (review.state === "changes_requested")
      latest.set(key, { by: review.author, reviewId: review.id });
  }
  return [...latest.values()].filter(
    (hold): hold is ReviewHold => hold !== null && !overridden.includes(hold.reviewId),
  );
}

/** Whether two sets of holds name the same reviews (a merge held again for them says nothing new). */
export const sameHolds = (a: readonly ReviewHold[] | undefined, b: readonly ReviewHold[]) =>
  (a ?? []).length === b.length && b.every((h) => (a ?? []).some((o) => o.reviewId === h.reviewId));

/** Whether `login` holds the merge with a change request. */
export const holdsMerge = (holds: readonly ReviewHold[] | undefined, login: string) =>
  (holds ?? []).some((h) => sameLogin(h.by, login));

/** What a merge held by change requests says, for the issue and its humans. */
export function holdReason(holds: readonly ReviewHold[]): string {
  const names = holds.map((h) => h.by).join(", ");
  return `changes requested by ${names}: the merge waits until ${holds.length === 1 ? "they approve" : "each approves"} the pull request or the review is dismissed, or a writer comments \`/conveyor merge\``;
}

/**
 * How long before a listing's `since` a review may be stamped and still be news to it: a review and its pull
 * request's update are stamped apart (in one of the forge's transactions), so a cycle may list the pull request
 * changed after its review's stamp.
 */
export const REVIEW_STAMP_SLACK_MS = 60_000;

/**
 * Of a pull request's listed reviews, those a reconciliation cycle hears (src/reconcile/reviews.ts), oldest
 * first: submitted ones by anyone but Conveyor, stamped since the listing that showed the pull request changed
 * began (`since`, less the slack; a review without a stamp counts as recent). Earlier ones were an earlier cycle's to hear. A dismissal
 * keeps its review's stamp, so every dismissed review is heard: the lifecycle knows it by its id, and one it
 * already heard changes nothing.
 */
export function reviewsToHear<R extends ListedReview>(
  reviews: readonly R[],
  isOwn: (login: string) => boolean,
  since: number,
): (R & { state: ReviewVerdict })[] {
  const recent = (review: R) => {
    const stamp = Date.parse(review.submittedAt ?? "");
    return Number.isNaN(stamp) || stamp >= since - REVIEW_STAMP_SLACK_MS;
  };
  return reviews
    .filter(
      (r): r is R & { state: ReviewVerdict } => r.state !== "pending" && r.author !== "" && !isOwn(r.author),
    )
    .filter((r) => r.dismissed || r.state === "dismissed" || recent(r))
    .sort((a, b) => a.id - b.id);
}
