/**
 * Characters foreign text may not carry into a post, wherever they stand (code blocks too): terminal escapes,
 * control characters, and everything that is there without being seen — zero-width and format characters,
 * bidirectional overrides (which reorder what a reader sees, "Trojan Source"), tag characters and variation
 * selectors that smuggle hidden text. And Conveyor's comment markers (src/crypto/markers.ts): a post of
 * foreign text never holds one, so Conveyor's "post once" lookups cannot take it for its own. Pure.
 */

/** CSI, OSC (ended by BEL or ST), and the other two-character escapes; C1's CSI too. */
const ANSI =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what this removes.
  /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[ -/]*[0-~]?)|\u009b[0-?]*[ -/]*[@-~]?/g;

/**
 * C0 and C1 controls except tab and line feed; format characters (zero-width spaces and joiners, bidi marks,
 * embeddings, overrides and isolates, soft hyphens, the BOM, tag characters); line and paragraph separators;
 * Hangul fillers that render as nothing; variation selectors other than the emoji ones (U+FE0E, U+FE0F).
 */
const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes.
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: lone variation selectors are what this removes.
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cf}\u2028\u2029\u115f\u1160\u3164\uffa0\ufe00-\ufe0d\u{e0000}-\u{e007f}\u{e0100}-\u{e01ef}]/gu;

/** A Conveyor marker's opening, however spaced or cased; to its end, or to the end of the text. */
const MARKER = /<!--\s*conveyor:[\s\S]*?(?:-->|$)/gi;

/** Lone surrogates are not text: a forge may refuse them, and a cut can leave one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text with line ends made `\n`, escapes and invisible characters removed, and no marker left. */
export function visibleText(text: string): string {
  let out = text.replace(/\r\n?/g, "\n").replace(ANSI, "").replace(INVISIBLE, "").replace(LONE_SURROGATE, "");
  // Removing one marker can join the pieces of another around it.
  for (let previous = ""; previous !== out; ) {
    previous = out;
    out = out.replace(MARKER, "");
  }
  return out;
}

/** Whether the text holds something `visibleText` removes. */
export const hasInvisible = (text: string): boolean => visibleText(text) !== text;
