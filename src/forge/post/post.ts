/**
 * The only bodies and titles Conveyor's forge client posts (`PostBody`, `PostTitle`: branded strings that
 * nothing outside this module can make): Conveyor's own words, and text it did not write — an agent's, a
 * session's, the critic's, a person's — defused (./defuse.ts) and, where one author wrote it, quoted apart
 * under that author's name. Every body fits the forge's limit with room for Conveyor's marker: foreign text
 * that would not fit is cut, with a note saying so, rather than refused by the forge. Pure.
 */
import { visibleText } from "./characters.ts";
import { defuse } from "./defuse.ts";
import { bodyLimit, FORGE_LIMITS, type PostPolicy } from "./policy.ts";

declare const posted: unique symbol;
/** A body made by `composePost`: safe to post under Conveyor's account, within the forge's limit. */
export type PostBody = string & { readonly [posted]: "body" };
/** A title made by `postTitle`: one visible line, within the forge's limit. */
export type PostTitle = string & { readonly [posted]: "title" };

/** One block of a post, each separated from the next by a blank line. */
export type Piece =
  /** Conveyor's own words, posted as they are. */
  | { conveyor: string }
  /** Text one author wrote, quoted apart under `by`: Conveyor's line naming the author ("The session wrote:"). */
  | { quote: string; by: string }
  /** Conveyor's sentence around text it did not write, which the sentence attributes: defused whole. */
  | { mixed: string };

/** The body, safe and within the limit (with room for a marker). */
export function composePost(policy: PostPolicy, pieces: readonly Piece[]): PostBody {
  const limit = bodyLimit(policy);
  // No piece of foreign text is read past the limit; a longer one shrinks in proportion until the body fits.
  let share = Math.min(limit, Math.max(0, ...pieces.map(foreignLength)));
  for (let tries = 0; tries < 12; tries++) {
    const body = pieces.map((piece) => render(piece, share, policy)).join("\n\n");
    if (body.length <= limit) return body as PostBody;
    const next = Math.floor(((share * limit) / body.length) * 0.95);
    share = Math.max(0, Math.min(next, share - 1));
  }
  // Conveyor's own words alone are over the limit: never so in practice, and still never refused.
  const body = pieces.map((piece) => render(piece, 0, policy)).join("\n\n");
  return `${body.slice(0, Math.max(0, limit - CUT_NOTE.length - 2))}\n\n${CUT_NOTE}` as PostBody;
}

/** The body with Conveyor's marker after it: `composePost` kept the room for one. */
export const withMarker = (body: PostBody, marker: string): PostBody => `${body}\n\n${marker}` as PostBody;

/**
 * A body already on the forge with Conveyor's own words appended (a dependency line): what was there stays its
 * author's, and is sent back as it was (re-sending it exposes nothing new). Anything but an append throws.
 */
export function appended(current: string, amended: string): PostBody {
  if (!amended.startsWith(current.trimEnd())) throw new Error("only an appended line may change a body");
  return amended as PostBody;
}

/** Foreign text alone, attributed to `by`: the usual post of an agent's output. */
export const quotedPost = (policy: PostPolicy, by: string, text: string): PostBody =>
  composePost(policy, [{ quote: text, by }]);

/**
 * Foreign text as a title: visible characters, one line, within the forge's limit. Titles are plain text on
 * both forges (no markdown, no mentions); they are not defused further.
 */
export function postTitle(policy: PostPolicy, text: string): PostTitle {
  const line = visibleText(text).replace(/\s+/g, " ").trim() || "(untitled)";
  const max = FORGE_LIMITS[policy.forge].title;
  return ([...line].length <= max ? line : `${[...line].slice(0, max - 1).join("")}…`) as PostTitle;
}

const CUT_NOTE = "_(cut: the whole text is longer than the forge accepts)_";

const foreignLength = (piece: Piece): number =>
  "quote" in piece ? piece.quote.length : "mixed" in piece ? piece.mixed.length : 0;

function render(piece: Piece, share: number, policy: PostPolicy): string {
  if ("conveyor" in piece) return piece.conveyor;
  const raw = "quote" in piece ? piece.quote : piece.mixed;
  const cut = raw.length > share ? cutAt(raw, share) : raw;
  const note = cut === raw ? "" : `\n\n_(cut to ${cut.length} of ${raw.length} characters to fit the forge)_`;
  if ("mixed" in piece) return `${defuse(cut, policy)}${note}`;
  // Quoted first and defused after: a line's meaning can change inside the quote (a tab's width does).
  return `${piece.by}\n\n${defuse(quoteLines(cut), policy)}${note}`;
}

/** Every line behind `> `, so nothing in the text reaches past the quote. */
function quoteLines(text: string): string {
  const lines = visibleText(text).trimEnd().split("\n");
  return lines.map((line) => (line === "" ? ">" : `> ${line}`)).join("\n");
}

/** The first `n` UTF-16 units, never half a surrogate pair. */
function cutAt(text: string, n: number): string {
  const end = n > 0 && /[\ud800-\udbff]/.test(text[n - 1] ?? "") ? n - 1 : n;
  return text.slice(0, Math.max(0, end));
}
