/**
 * Foreign markdown made safe to post under Conveyor's account, read the way the forges read it (CommonMark
 * with GitHub's extensions: tables, literal autolinks, footnotes): hidden and raw HTML, links and images
 * outside the allowlist, and the prose hazards of ./prose.ts, each rewritten where it stands. Everything else
 * — code, tables, ordinary prose — is left byte for byte. Pure.
 */
import type { Nodes, Parents, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import { visibleText } from "./characters.ts";
import { allowedUrl, type PostPolicy, shownHost } from "./policy.ts";
import { codeSpan, type Edit, freeTicks, proseEdits, UNCLEAR_END } from "./prose.ts";

/** Rewriting can make new hazards (escaped HTML becomes prose): parse again until none is left. */
const MAX_ROUNDS = 8;

/**
 * A line opening more containers than this (`>` quotes, list items) is not read: the parser spends time per
 * level per line (60 000 `>` took seconds before it gave up on its stack), and no honest text nests so deep.
 */
const MAX_NESTING = 64;
const TOO_DEEP = new RegExp(`^(?:[ \\t]*(?:>|(?:[-+*]|\\d{1,9}[.)])[ \\t])){${MAX_NESTING + 1}}`, "m");

/**
 * The text with no live mention outside the allowlist, no closing keyword, no HTML (comments removed, tags
 * escaped), no link or image outside the allowlist, no command line, no invisible character and no marker.
 * Text that holds none of these comes back unchanged.
 */
export function defuse(text: string, policy: PostPolicy): string {
  let out = visibleText(text);
  if (TOO_DEEP.test(out)) return codeBlock(out);
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const edits = hazards(out, policy);
      if (edits.length === 0) return out;
      out = visibleText(applyEdits(out, edits));
    }
  } catch (error) {
    // Nesting deeper than the parser's stack (thousands of `>`): no reading of it is sure.
    if (!(error instanceof RangeError)) throw error;
  }
  // Input built to keep producing hazards, or too deep to read: shown whole as a code block, which nothing reads.
  return codeBlock(visibleText(text));
}

/** The edits one pass of the rules makes; none when the text is safe as it stands. */
export function hazards(source: string, policy: PostPolicy): Edit[] {
  const tree = parse(source);
  const ticks = freeTicks(source);
  const edits: Edit[] = [];
  const at = (node: Nodes) => ({
    start: node.position?.start.offset ?? 0,
    end: node.position?.end.offset ?? 0,
  });
  const visit = (node: Nodes, followed: boolean) => {
    const { start, end } = at(node);
    switch (node.type) {
      case "code":
      case "inlineCode":
        return;
      case "html":
        edits.push({ start, end, text: escapeHtml(source.slice(start, end)) });
        return;
      case "text":
        edits.push(...proseEdits(source, start, end, followed, ticks, policy));
        return;
      case "image":
        if (!allowedUrl(node.url, policy))
          edits.push({ start, end, text: imageNote(node.url, ticks, policy) });
        return;
      case "definition":
        if (!allowedUrl(node.url, policy))
          edits.push({ start, end, text: codeSpan(source.slice(start, end), ticks) });
        return;
      case "imageReference":
        // Its definition decides: a refused one is shown as text, and the reference with it.
        return;
      case "link": {
        const autolink = !source.startsWith("[", start);
        if (!allowedUrl(node.url, policy)) edits.push({ start, end, text: linkText(node, source, ticks) });
        else if (!autolink) visitChildren(node);
        else if (unclearEnd(start, end, followed))
          edits.push({ start, end, text: linkText(node, source, ticks) });
        return;
      }
      default:
        if ("children" in node) visitChildren(node);
    }
  };
  /** Where renderers differ is where an autolink ends: one that may end early, or holds a hazard, is code. */
  const unclearEnd = (from: number, to: number, followed: boolean) => {
    const [start, end] = source.startsWith("<", from) ? [from + 1, to - 1] : [from, to];
    return (
      UNCLEAR_END.test(source.slice(start, end)) ||
      proseEdits(source, start, end, followed, ticks, policy).length > 0
    );
  };
  const visitChildren = (parent: Parents) => {
    const { children } = parent;
    for (let i = 0; i < children.length; ) {
      const child = children[i] as Nodes;
      if (child.position) {
        visit(child, i < children.length - 1);
        i++;
        continue;
      }
      // Nodes the autolink transform split out of one text node carry no position: that node's source is
      // the gap between the positioned siblings around them.
      let j = i;
      while (j < children.length && !children[j]?.position) j++;
      const from = children[i - 1]?.position?.end.offset ?? parent.position?.start.offset ?? 0;
      const to = children[j]?.position?.start.offset ?? parent.position?.end.offset ?? source.length;
      edits.push(...splitText(children.slice(i, j) as Nodes[], from, to, j < children.length));
      i = j;
    }
  };
  /** A text node the autolink transform split into text and links: each link found again in the source. */
  const splitText = (run: Nodes[], from: number, to: number, followed: boolean): Edit[] => {
    const out: Edit[] = [];
    let cursor = from;
    for (const node of run) {
      if (node.type !== "link") continue;
      const shown = node.children.map((c) => ("value" in c ? c.value : "")).join("");
      const at = source.indexOf(shown, cursor);
      if (shown === "" || at < 0 || at + shown.length > to)
        return [{ start: from, end: to, text: codeSpan(source.slice(from, to), ticks) }];
      out.push(...proseEdits(source, cursor, at, true, ticks, policy));
      cursor = at + shown.length;
      if (!allowedUrl(node.url, policy) || unclearEnd(at, cursor, true))
        out.push({ start: at, end: cursor, text: codeSpan(shown, ticks) });
    }
    out.push(...proseEdits(source, cursor, to, followed, ticks, policy));
    return out;
  };
  visitChildren(tree);
  return edits;
}

export function parse(source: string): Root {
  return fromMarkdown(source, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
}

/** The edits applied in one pass, front to back; one overlapping an earlier one waits for the next round. */
function applyEdits(source: string, edits: Edit[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const edit of [...edits].sort((a, b) => a.start - b.start || a.end - b.end)) {
    if (edit.start < at) continue;
    parts.push(source.slice(at, edit.start), edit.text);
    at = edit.end;
  }
  parts.push(source.slice(at));
  return parts.join("");
}

/** Comments go; every other tag is shown as text (`&lt;`), which renders as it was written. */
function escapeHtml(html: string): string {
  const shown = html.replace(/<!--[\s\S]*?(?:-->|$)/g, "").replace(/</g, "&lt;");
  return shown.trim() === "" ? "" : shown;
}

/** A refused link as text: its words, and its address as code (the host visible, nothing to click). */
function linkText(node: Extract<Nodes, { type: "link" }>, source: string, ticks: string): string {
  const start = node.position?.start.offset ?? 0;
  const end = node.position?.end.offset ?? 0;
  if (!source.startsWith("[", start)) {
    const written = source.slice(start, end).replace(/^<|>$/g, "");
    return codeSpan(written, ticks);
  }
  const first = node.children[0]?.position?.start.offset;
  const last = node.children.at(-1)?.position?.end.offset;
  const label = first === undefined || last === undefined ? "" : source.slice(first, last);
  const address = codeSpan(node.url, ticks);
  return label.trim() === "" ? address : `${label} (${address})`;
}

function imageNote(url: string, ticks: string, policy: PostPolicy): string {
  return `_(image from ${codeSpan(shownHost(url, policy), ticks)} not shown)_`;
}

/** The whole text as a fenced code block whose fence no line of it can close. */
function codeBlock(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}
