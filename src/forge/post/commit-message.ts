/**
 * A session's commit messages as they reach the forge: plain text, where "Fixes #2" closes issue 2 once the
 * commit lands on the default branch (both forges read commit messages so). Conveyor's pull request closes
 * its own issue itself ("Closes #n" in the body it writes); a keyword in a session's commit would close
 * another, which Conveyor would then abandon. Pure.
 */
import { CLOSING_WORDS } from "./prose.ts";

/** A keyword, what may stand between it and its reference, and the reference in any form either forge reads. */
const CLOSING = new RegExp(
  `(?<![\\p{L}\\p{N}_])(${CLOSING_WORDS})([\\s:]*)(?=[#!]\\d|gh-\\d|[\\w.-]+/[\\w.-]+[#!]\\d|https?://)`,
  "giu",
);

/** The message with each closing keyword before a reference replaced by `refs`: the link stays, nothing closes. */
export const withoutClosingKeywords = (message: string): string =>
  message.replace(CLOSING, (_keyword, _word, between: string) => `refs${between || " "}`);

/** The longest first line Conveyor gives a merge or squash commit, before the pull request's number. */
const MAX_TITLE_CHARS = 200;

/**
 * The squash or merge commit Conveyor writes for its pull request: the issue's title (its first line, any
 * closing keyword made a reference) with the pull request's number, then `Closes #n` of its own issue and
 * nothing else. Left to the forge, a squash lists every commit's message, and a merge commit the pull
 * request's title, where a keyword would close another issue once the commit lands.
 */
export function mergeCommitMessage(
  issue: { number: number; title: string },
  pr: number,
): { title: string; message: string } {
  const line = withoutClosingKeywords(issue.title.split(/\r?\n/, 1)[0]?.trim() ?? "");
  const title = line.length > MAX_TITLE_CHARS ? `${line.slice(0, MAX_TITLE_CHARS - 1)}…` : line;
  return { title: `${title || `Issue #${issue.number}`} (#${pr})`, message: `Closes #${issue.number}` };
}
