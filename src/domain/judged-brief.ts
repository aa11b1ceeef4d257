/**
 * What a critic judges a change against: the brief a writer queued, not the issue as it reads now — a later
 * edit, by anyone, must not move what the change is checked against. The text as it reads now is shown
 * beside it only when it differs, and only as context. Pure.
 */
import type { Brief } from "./lifecycle.ts";

export type IssueText = { title: string; body: string };

export type JudgedIssue = {
  /** The text the change is judged against. */
  judged: IssueText;
  /** Who queued it; null: no brief was kept (queued before briefs were), so the text as it reads now. */
  queuedBy: string | null;
  /** The issue as it reads now, where it differs from the brief: context only. */
  current: IssueText | null;
};

/** Said to every critic beside the issue's text as it reads now. */
export const CURRENT_TEXT_NOTE =
  "The issue as it reads now, edited since a writer queued it. Context only: judge the change against the issue as queued.";

export function judgedIssue(brief: Brief | null, now: IssueText | null): JudgedIssue {
  const current = now && { title: now.title, body: now.body };
  if (!brief) return { judged: current ?? { title: "", body: "" }, queuedBy: null, current: null };
  const judged = { title: brief.title, body: brief.body };
  const edited = current !== null && (current.title !== brief.title || current.body !== brief.body);
  return { judged, queuedBy: brief.by, current: edited ? current : null };
}
