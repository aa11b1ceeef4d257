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
