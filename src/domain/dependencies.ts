/**
 * Dependency declarations in issue bodies, and cycle detection over the resulting graph. Pure: no I/O.
 *
 * Recognised (after dropping fenced code blocks, HTML comments and inline code spans):
 * - list items under an ATX heading titled exactly `Dependencies`, `Depends on` or `Blocked by`
 *   (case-insensitive; trailing `:` and closing `#`s ignored). `## Dependencies of this module` is not one:
 *   prose headings that merely start with the word are common and must not turn their lists into blockers.
 *   The section runs until the next heading of the same or a higher level, so sub-headings stay inside it.
 *   Only list-item lines count there; paragraphs in the section are commentary.
 * - anywhere: `depends on` / `blocked by` followed by a list of refs (`#1, #2 and #3`).
 * A ref is `#N`, `owner/repo#N` or `https://host/owner/repo/issues/N`; N must be in 1..MAX_SAFE_INTEGER
 * (leading zeros are read as decimal). Closing keywords (`fixes #N`) and other sections are not dependencies.
 * An owner or repository named `.` or `..` is no name (it would climb out of the forge's `/repos/` path).
 */

/** `repo` is `owner/name`, or null for the issue's own repository. */
export type IssueRef = { repo: string | null; number: number };

/**
 * Each dependency may cost a forge read on every evaluation (triage, a dependency closing, cron), so an issue
 * declaring more is blocked with a comment instead of being read at all: a partial list could start it early.
 */
export const MAX_DEPENDENCIES = 20;

export const tooManyDependencies = (refs: readonly IssueRef[]): boolean => refs.length > MAX_DEPENDENCIES;

const SECTION_TITLES = new Set(["dependencies", "depends on", "blocked by"]);

const NAME = "[A-Za-z0-9_.-]+";
// The URL alternative comes first so its path is never re-read as a short ref. The lookbehind keeps `#N`
// out of words (`abc#12`), HTML entities (`&#123;`), headings-like runs (`##1`) and URL fragments (`/#1`).
const REF_SOURCE =
  `https?://[^\\s/<>()]+/(${NAME})/(${NAME})/issues/(\\d+)(?!\\w)` +
  `|(?<![\\w&#/.-])(?:(${NAME})/(${NAME}))?#(\\d+)(?!\\w)`;
const REF_GLOBAL = new RegExp(REF_SOURCE, "g");
const REF_STICKY = new RegExp(REF_SOURCE, "y");

const INLINE_KEYWORD = /\b(?:depends[ \t]+on|blocked[ \t]+by)\b[ \t]*:?[ \t]*(?:\n[ \t]*)?/gi;
// GitHub's and Gitea's closing keywords.
const CLOSING_KEYWORD = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b[ \t]*:?[ \t]*/gi;
// A bare space separates refs only within a line; after `,` `&` `and` the list may wrap onto the next line.
const LIST_SEPARATOR = /[ \t]*(?:,[ \t]*(?:and\b)?|&|and\b)[ \t]*(?:\n[ \t]*)?|[ \t]+/iy;

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
const FENCE_OPEN = /^[ \t]*(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

type Hit = { at: number; ref: IssueRef };

/**
 * Issues this body declares as dependencies, deduplicated in first-seen order. With `self`, references to
 * `self.repo` are reported with `repo: null` and references to the issue itself are dropped.
 */
export function parseDependencies(body: string, self?: { repo: string; number: number }): IssueRef[] {
  const lines = visibleLines(body);
  const hits: Hit[] = [];

  let sectionLevel: number | null = null;
  let offset = 0;
  for (const line of lines) {
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]?.length ?? 1;
      if (sectionLevel !== null && level <= sectionLevel) sectionLevel = null;
      if (sectionLevel === null && SECTION_TITLES.has(headingTitle(heading[2] ?? ""))) sectionLevel = level;
    } else if (sectionLevel !== null && LIST_ITEM.test(line)) {
      for (const m of line.matchAll(REF_GLOBAL)) {
        const ref = toRef(m);
        if (ref) hits.push({ at: offset + m.index, ref });
      }
    }
    offset += line.length + 1;
  }

  hits.push(...refsAfter(lines.join("\n"), INLINE_KEYWORD));
  return distinctRefs(hits, self);
}

/**
 * The issues of its own repository a pull request's text closes by keyword (`Fixes #3`, `closes o/r#4` of
 * itself, `resolves <issue URL>`), as both forges read it when it merges: the issues the pull request is
 * linked to. Read like dependencies (code and comments are no text), in first-seen order.
 */
export function parseClosingRefs(text: string, self: { repo: string; number: number }): number[] {
  return distinctRefs(refsAfter(visibleLines(text).join("\n"), CLOSING_KEYWORD), self)
    .filter((ref) => ref.repo === null)
    .map((ref) => ref.number);
}

/** The refs listed after each match of `keyword` (`#1, #2 and #3`). */
function refsAfter(text: string, keyword: RegExp): Hit[] {
  const hits: Hit[] = [];
  for (const match of text.matchAll(keyword)) {
    let pos = match.index + match[0].length;
    for (;;) {
      REF_STICKY.lastIndex = pos;
      const m = REF_STICKY.exec(text);
      if (!m) break;
      const ref = toRef(m);
      if (ref) hits.push({ at: m.index, ref });
      pos = m.index + m[0].length;
      LIST_SEPARATOR.lastIndex = pos;
      if (!LIST_SEPARATOR.exec(text)) break;
      pos = LIST_SEPARATOR.lastIndex;
    }
  }
  return hits;
}

/** Deduplicated in text order; with `self`, its own repository's refs are `repo: null` and itself is dropped. */
function distinctRefs(hits: Hit[], self?: { repo: string; number: number }): IssueRef[] {
  hits.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const result: IssueRef[] = [];
  for (const { ref } of hits) {
    const repo = self && ref.repo?.toLowerCase() === self.repo.toLowerCase() ? null : ref.repo;
    if (self && repo === null && ref.number === self.number) continue;
    // GitHub owner and repository names are case-insensitive.
    const key = `${repo?.toLowerCase() ?? ""}#${ref.number}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push({ repo, number: ref.number });
  }
  return result;
}

function toRef(m: RegExpExecArray | RegExpMatchArray): IssueRef | null {
  const [, urlOwner, urlRepo, urlNumber, owner, repo, number] = m;
  const digits = urlNumber ?? number ?? "";
  const n = Number(digits);
  if (!Number.isSafeInteger(n) || n <= 0) return null;
  const [o, r] = urlOwner && urlRepo ? [urlOwner, urlRepo] : [owner, repo];
  if (!o || !r) return { repo: null, number: n };
  return isDotSegment(o) || isDotSegment(r) ? null : { repo: `${o}/${r}`, number: n };
}

const isDotSegment = (name: string) => name === "." || name === "..";

function headingTitle(raw: string): string {
  let title = raw.replace(/[ \t]*#+[ \t]*$/, "").trim();
  title = title.replace(/\s*:$/, "");
  const emphasis = /^(\*\*|__|\*|_)(.*)\1$/.exec(title);
  if (emphasis) title = (emphasis[2] ?? "").trim().replace(/\s*:$/, "");
  return title.replace(/\s+/g, " ").toLowerCase();
}

/**
 * The body's lines with everything a reader cannot see as text blanked out: fenced code blocks (an unclosed
 * fence runs to the end), HTML comments (likewise) and inline code spans. Fences are recognised at any
 * indentation so that fences inside list items count. Code spans are matched within a line only.
 */
function visibleLines(body: string): string[] {
  const out: string[] = [];
  let fence: { char: string; length: number } | null = null;
  let inComment = false;
  for (const raw of body.replace(/\r\n?/g, "\n").split("\n")) {
    if (fence) {
      const run = FENCE_CLOSE.exec(raw)?.[1];
      if (run && run[0] === fence.char && run.length >= fence.length) fence = null;
      out.push("");
      continue;
    }
    let line = raw;
    if (inComment) {
      const end = line.indexOf("-->");
      if (end < 0) {
        out.push("");
        continue;
      }
      line = ` ${line.slice(end + 3)}`;
      inComment = false;
    } else {
      const open = FENCE_OPEN.exec(line);
      const run = open?.[1];
      // A backtick fence's info string may not contain backticks (that line is inline code instead).
      if (run && !(run[0] === "`" && open[2]?.includes("`"))) {
        fence = { char: run[0] ?? "`", length: run.length };
        out.push("");
        continue;
      }
    }
    const scanned = stripInline(line);
    inComment = scanned.openComment;
    out.push(scanned.text);
  }
  return out;
}

/** Blanks code spans and HTML comments left to right, so `` `<!--` `` is code and `<!-- ` -->` a comment. */
function stripInline(line: string): { text: string; openComment: boolean } {
  let text = "";
  let i = 0;
  while (i < line.length) {
    if (line.startsWith("<!--", i)) {
      const end = line.indexOf("-->", i + 4);
      if (end < 0) return { text: `${text} `, openComment: true };
      text += " ";
      i = end + 3;
      continue;
    }
    if (line[i] === "`") {
      let runEnd = i;
      while (line[runEnd] === "`") runEnd++;
      const run = line.slice(i, runEnd);
      const close = findBacktickRun(line, runEnd, run.length);
      if (close < 0) {
        text += run; // Unmatched backticks are literal.
      } else {
        text += " ";
        runEnd = close + run.length;
      }
      i = runEnd;
      continue;
    }
    text += line[i];
    i++;
  }
  return { text, openComment: false };
}

function findBacktickRun(line: string, from: number, length: number): number {
  let i = from;
  while (i < line.length) {
    if (line[i] !== "`") {
      i++;
      continue;
    }
    let end = i;
    while (line[end] === "`") end++;
    if (end - i === length) return i;
    i = end;
  }
  return -1;
}

/**
 * Dependency cycles: every strongly connected component that contains a cycle (two or more issues, or one
 * issue depending on itself), each once. A component starts at its smallest issue and continues in
 * depth-first preorder along edges inside it, so a simple cycle comes out in edge order (3→1→2→3 gives
 * [1, 2, 3]; 1→3→2→1 gives [1, 3, 2]). Components are sorted by their first issue. Issues that only appear as
 * targets are nodes without edges. Iterative (Tarjan), so long chains cannot overflow the stack.
 */
export function findCycles(graph: ReadonlyMap<number, readonly number[]>): number[][] {
  const successors = (node: number): readonly number[] => graph.get(node) ?? [];
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;

  const enter = (node: number): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
  };

  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    enter(root);
    const frames: { node: number; edge: number }[] = [{ node: root, edge: 0 }];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1] as { node: number; edge: number };
      const edges = successors(frame.node);
      if (frame.edge < edges.length) {
        const next = edges[frame.edge] as number;
        frame.edge++;
        if (!index.has(next)) {
          enter(next);
          frames.push({ node: next, edge: 0 });
        } else if (onStack.has(next)) {
          low.set(frame.node, Math.min(lowOf(low, frame.node), lowOf(index, next)));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent.node, Math.min(lowOf(low, parent.node), lowOf(low, frame.node)));
      if (lowOf(low, frame.node) !== lowOf(index, frame.node)) continue;
      const members = new Set<number>();
      for (;;) {
        const member = stack.pop() as number;
        onStack.delete(member);
        members.add(member);
        if (member === frame.node) break;
      }
      if (members.size > 1 || successors(frame.node).includes(frame.node)) {
        components.push(preorder(members, successors));
      }
    }
  }
  return components.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
}

function lowOf(map: ReadonlyMap<number, number>, node: number): number {
  return map.get(node) ?? Number.POSITIVE_INFINITY;
}

function preorder(members: ReadonlySet<number>, successors: (node: number) => readonly number[]): number[] {
  let start = Number.POSITIVE_INFINITY;
  for (const member of members) start = Math.min(start, member);
  const order: number[] = [start];
  const visited = new Set<number>([start]);
  const frames: { node: number; edge: number }[] = [{ node: start, edge: 0 }];
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as { node: number; edge: number };
    const edges = successors(frame.node);
    if (frame.edge >= edges.length) {
      frames.pop();
      continue;
    }
    const next = edges[frame.edge] as number;
    frame.edge++;
    if (members.has(next) && !visited.has(next)) {
      visited.add(next);
      order.push(next);
      frames.push({ node: next, edge: 0 });
    }
  }
  return order;
}
