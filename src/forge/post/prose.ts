/**
 * Hazards in the prose of foreign text, as a forge reads it: a text node decoded the way the renderer decodes
 * it (backslash escapes, character references such as `&#64;`), so that no encoding slips past. Mentions of
 * users and teams outside the allowlist, closing keywords before a reference, addresses another renderer
 * might link, and lines that start with a Conveyor command are each wrapped in a code span: shown as
 * written, and read by no forge. Pure.
 */
import { decodeNamedCharacterReference } from "decode-named-character-reference";
import { allowedUrl, mentionAllowed, type PostPolicy } from "./policy.ts";

/** Replace `source[start, end)` with `text`. */
export type Edit = { start: number; end: number; text: string };

/** One character of the decoded text and the source it came from. */
type Unit = { start: number; end: number; char: string };

const WORD = "[\\p{L}\\p{N}_]";
const NAME = `${WORD}(?:[\\p{L}\\p{N}_.-]*${WORD})?`;

/** `@user`, `@org/team`, fullwidth and small `@` too; never after a letter (an address, not a mention). */
const MENTION = new RegExp(`(?<!${WORD})[@\\uff20\\ufe6b](${NAME})(?:/(${NAME}))?`, "gu");

/** GitHub's closing keywords, and Gitea's reopening ones; a reference must follow for them to act. */
export const CLOSING_WORDS = "close[sd]?|fix(?:e[sd])?|resolve[sd]?|reopen(?:s|ed)?";
const KEYWORD = new RegExp(`(?<!${WORD})(?:${CLOSING_WORDS})(?!(?!https?:|www\\.)${WORD})`, "giu");

/** What may stand between a keyword and its reference: a colon, spaces, emphasis, quote marks, brackets. */
const BETWEEN = /[\s:*_~>[(\\]*/uy;

/**
 * The start of a reference in any form either forge reads, or might: `#12`, `!12` (Gitea's pull requests),
 * `GH-12`, `owner/repo#12`, a URL, an encoded `#` or a link that a next node would hold.
 */
const REFERENCE = /(?:[#!\uff03]|&|<|[/\\]|https?:|www\.|gh-\d|[\p{L}\p{N}_.-]+\/[\p{L}\p{N}_.-]+[#!])/iuy;

/**
 * What an address a renderer found by itself (no `[text](url)`) may not hold: another renderer may end it
 * before one of these and read the rest as a mention, a link or emphasis.
 */
export const UNCLEAR_END = /[@\uff20\ufe6b[\]()&\\*<>!`]/u;

/** An address the parser left as text, which another renderer may still link. */
const BARE_URL =
  /(?:https?:\/\/|www\.)[^\s<>`]+|(?<![\p{L}\p{N}._+-])[\p{L}\p{N}._+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/giu;

/** `/conveyor` at the start of a line: someone reading the post could take it for Conveyor's instruction. */
const COMMAND = /(?<=^|\n)[ \t]*(\/conveyor)(?![\p{L}\p{N}_-])/giu;

const ESCAPABLE = /[!-/:-@[-`{-~]/;

/** The text node's source decoded into characters, each with its source span. */
function decode(source: string, start: number, end: number): Unit[] {
  const units: Unit[] = [];
  let i = start;
  while (i < end) {
    const c = source[i] ?? "";
    if (c === "\\" && i + 1 < end && ESCAPABLE.test(source[i + 1] ?? "")) {
      units.push({ start: i, end: i + 2, char: source[i + 1] ?? "" });
      i += 2;
      continue;
    }
    if (c === "&") {
      const ref = /^&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{0,31}));/.exec(
        source.slice(i, Math.min(end, i + 40)),
      );
      const char = ref ? referenced(ref) : null;
      if (ref && char !== null) {
        units.push({ start: i, end: i + ref[0].length, char });
        i += ref[0].length;
        continue;
      }
    }
    if (c === "\n") {
      // The next line's container prefix (`> `, a list's indent) is not text.
      let j = i + 1;
      while (j < end && /[ \t>]/.test(source[j] ?? "")) j++;
      units.push({ start: i, end: j, char: "\n" });
      i = j;
      continue;
    }
    const width = (source.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    units.push({ start: i, end: i + width, char: source.slice(i, i + width) });
    i += width;
  }
  return units;
}

function referenced(ref: RegExpExecArray): string | null {
  const [, decimal, hex, name] = ref;
  if (name !== undefined) {
    const decoded = decodeNamedCharacterReference(name);
    return decoded === false ? null : decoded;
  }
  const code = decimal !== undefined ? Number.parseInt(decimal, 10) : Number.parseInt(hex ?? "", 16);
  // CommonMark reads 0, surrogates and anything past Unicode as U+FFFD.
  return code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)
    ? "\ufffd"
    : String.fromCodePoint(code);
}

/**
 * Edits that defuse the prose of one text node, `source[start, end)`. `followed`: another inline node comes
 * after it (a keyword at its end may be followed by a reference the next node holds). `ticks`: the backtick
 * run code spans use, one the document holds nowhere else.
 */
export function proseEdits(
  source: string,
  start: number,
  end: number,
  followed: boolean,
  ticks: string,
  policy: PostPolicy,
): Edit[] {
  const units = decode(source, start, end);
  const text = units.map((u) => u.char).join("");
  // Index in `text` → its unit.
  const unitAt: number[] = [];
  units.forEach((u, n) => {
    for (let k = 0; k < u.char.length; k++) unitAt.push(n);
  });
  const spans: [number, number][] = [];
  for (const m of text.matchAll(MENTION)) {
    const team = m[2] === undefined ? "" : `/${m[2]}`;
    if (!mentionAllowed(`${m[1]}${team}`, policy)) spans.push([m.index, m.index + m[0].length]);
  }
  // An `@` before emphasis or a link: a renderer that reads the text across them would see a mention.
  const at = /(?<![\p{L}\p{N}_])[@\uff20\ufe6b]$/u.exec(text);
  if (followed && at) spans.push([at.index, text.length]);
  for (const m of text.matchAll(KEYWORD)) {
    // Read in place (sticky), not on a copy of the rest: a text of many keywords stays linear.
    BETWEEN.lastIndex = m.index + m[0].length;
    REFERENCE.lastIndex = BETWEEN.lastIndex + (BETWEEN.exec(text)?.[0].length ?? 0);
    const atEnd = REFERENCE.lastIndex >= text.length;
    if (atEnd ? followed : REFERENCE.test(text)) spans.push([m.index, m.index + m[0].length]);
  }
  for (const m of text.matchAll(BARE_URL)) {
    const url = /^(?:https?:|www\.)/i.test(m[0]) ? m[0].replace(/^www\./i, "http://www.") : `mailto:${m[0]}`;
    if (!allowedUrl(url, policy) || UNCLEAR_END.test(m[0])) spans.push([m.index, m.index + m[0].length]);
  }
  for (const m of text.matchAll(COMMAND)) {
    const at = m.index + m[0].length - (m[1]?.length ?? 0);
    spans.push([at, m.index + m[0].length]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const edits: Edit[] = [];
  // A tag's `<` the parser left in text (a literal autolink took the tag's end): another renderer would
  // read the tag. Escaped where it stands.
  for (const m of text.matchAll(/<(?=[A-Za-z/!?])/g)) {
    const unit = units[unitAt[m.index] ?? 0];
    if (unit && source.slice(unit.start, unit.end) === "<")
      edits.push({ start: unit.start, end: unit.end, text: "&lt;" });
  }
  let last = -1;
  for (const [from, to] of spans) {
    if (from < last) continue;
    last = to;
    const first = units[unitAt[from] ?? 0];
    const final = units[unitAt[to - 1] ?? 0];
    if (!first || !final) continue;
    edits.push({ start: first.start, end: final.end, text: codeSpan(text.slice(from, to), ticks) });
  }
  return edits;
}

/** `text` as inline code with the given backtick run, on one line. */
export function codeSpan(text: string, ticks: string): string {
  const flat = text.replace(/\s*\n\s*/g, " ");
  const pad = /^[` ]|[` ]$/.test(flat) ? " " : "";
  return `${ticks}${pad}${flat}${pad}${ticks}`;
}

/** The shortest backtick run that occurs nowhere in `source`: code spans made with it close only on their own. */
export function freeTicks(source: string): string {
  const used = new Set((source.match(/`+/g) ?? []).map((run) => run.length));
  let n = 1;
  while (used.has(n)) n++;
  return "`".repeat(n);
}
