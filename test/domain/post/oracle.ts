/**
 * An independent reading of a post, for the sanitizer's tests: markdown-it (another CommonMark parser than
 * the sanitizer's) renders it, and everything a forge would act on is listed — raw HTML, links and images
 * with their addresses, mentions, closing keywords before a reference and command lines in what is shown
 * as prose, invisible characters and markers anywhere.
 */
import MarkdownIt from "markdown-it";
import { allowedUrl, mentionAllowed, type PostPolicy } from "../../../src/forge/post/policy.ts";

const md = new MarkdownIt({ html: true, linkify: true });
// As GitHub's autolinks: `http(s)://`, `www.` and addresses; not linkify-it's protocol-relative `//host`.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: true }).add("//", null);

type Token = ReturnType<typeof md.parse>[number];

/**
 * GitHub's extended email autolink (GFM): `[\w.+-]+@` then a domain of `[\w-]` labels with at least one
 * period, not ending in `-` or `_` (GitHub links the part of a longer word that fits). linkify-it's fuzzy
 * email takes domains no forge does (`a/b#4@bob|gnp.exe`): such a match is prose here, as the forge shows it.
 */
const GFM_EMAIL = /[\w.+-]@[a-z0-9_-]+(?:\.[a-z0-9_-]+)+(?<![-_])$/i;
const linksAsGitHub = (token: Token, href: string) =>
  token.markup !== "linkify" || !href.startsWith("mailto:") || GFM_EMAIL.test(decodeURI(href));

const INVISIBLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\u{e0000}-\u{e007f}]/u;
const MENTION =
  /(?<![\p{L}\p{N}_])[@\uff20\ufe6b]([\p{L}\p{N}_](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}_])?(?:\/[\p{L}\p{N}_][\p{L}\p{N}_.-]*)?)/gu;
const CLOSING =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0001 stands for a link in the prose.
  /(?<![\p{L}\p{N}_])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|reopen(?:s|ed)?)[\s:]*(?:[#!]\d|gh-\d|[\w.-]+\/[\w.-]+[#!]\d|https?:\/\/|\u0001)/iu;

/** What a forge would act on in `text`: empty for a safe post. */
export function violations(text: string, policy: PostPolicy): string[] {
  const found: string[] = [];
  if (INVISIBLE.test(text)) found.push("an invisible or control character");
  if (/<!--\s*conveyor:/i.test(text)) found.push("a marker");
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === "html_block" || token.type === "html_inline")
        found.push(`raw HTML ${JSON.stringify(token.content.slice(0, 40))}`);
      if (token.type === "inline" && token.children) inline(token.children);
    }
  };
  const inline = (children: Token[]) => {
    // The prose as shown: code becomes a stop, a link leaves a mark a keyword may stand before.
    let prose = "";
    let autolink = false;
    for (const token of children) {
      switch (token.type) {
        case "text":
          if (!autolink) prose += token.content;
          break;
        case "softbreak":
        case "hardbreak":
          prose += "\n";
          break;
        case "code_inline":
          prose += "\u0000";
          break;
        case "html_inline":
          found.push(`raw HTML ${JSON.stringify(token.content.slice(0, 40))}`);
          prose += "\u0000";
          break;
        case "image": {
          const src = String(token.attrGet("src") ?? "");
          if (!allowedUrl(src, policy)) found.push(`an image from ${src}`);
          prose += "\u0000";
          break;
        }
        case "link_open": {
          const href = String(token.attrGet("href") ?? "");
          if (!linksAsGitHub(token, href)) break;
          if (!allowedUrl(href, policy)) found.push(`a link to ${href}`);
          autolink = token.markup === "linkify" || token.markup === "autolink";
          prose += "\u0001";
          break;
        }
        case "link_close":
          autolink = false;
          break;
      }
    }
    for (const m of prose.matchAll(MENTION))
      if (!mentionAllowed(m[1] ?? "", policy)) found.push(`a mention of ${m[1]}`);
    if (CLOSING.test(prose)) found.push(`a closing keyword in ${JSON.stringify(prose.slice(0, 80))}`);
    if (/(^|\n)[ \t]*\/conveyor(?![\w-])/i.test(prose)) found.push("a /conveyor line");
  };
  walk(md.parse(text, {}));
  return found;
}
