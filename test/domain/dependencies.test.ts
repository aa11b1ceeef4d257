import { describe, expect, it } from "vitest";
import { findCycles, type IssueRef, parseDependencies } from "../../src/domain/dependencies.ts";

const SELF = { repo: "acme/app", number: 10 };
const local = (...numbers: number[]): IssueRef[] => numbers.map((number) => ({ repo: null, number }));
const remote = (repo: string, number: number): IssueRef => ({ repo, number });

describe("parseDependencies", () => {
  it.each<[string, string, IssueRef[]]>([
    ["empty body", "", []],
    ["whitespace only", "  \n\n\t", []],
    ["basic section", "## Dependencies\n- #1\n- #2", local(1, 2)],
    ["h3 with trailing colon", "### Depends on:\n* #3", local(3)],
    ["h1, upper case, closing hashes", "# BLOCKED BY ##\n+ #4", local(4)],
    ["h6, colon before closing hashes", "###### blocked  by : ###\n- #4", local(4)],
    ["bold heading with colon inside", "## **Dependencies:**\n- #5", local(5)],
    ["ordered list items", "## Dependencies\n1. #6\n2) #7", local(6, 7)],
    ["checkbox items, checked or not", "## Dependencies\n- [ ] #8\n- [x] #9", local(8, 9)],
    ["nested list items", "## Dependencies\n- #1\n  - #2\n    * #3\n\t+ #4", local(1, 2, 3, 4)],
    [
      "text after the ref and several refs per line",
      "## Dependencies\n- #12 (the parser), also #13 and acme/lib#4",
      [...local(12, 13), remote("acme/lib", 4)],
    ],
    ["section ends at a same-level heading", "## Dependencies\n- #1\n## Related\n- #5", local(1)],
    ["section ends at a higher-level heading", "## Dependencies\n- #1\n# Notes\n- #5", local(1)],
    [
      "sub-headings stay inside the section",
      "## Dependencies\n### Core\n- #1\n### Optional\n- #2",
      local(1, 2),
    ],
    ["an empty heading ends the section", "## Dependencies\n- #1\n##\n- #2", local(1)],
    ["several sections", "## Dependencies\n- #1\n## Other\n- #2\n## Blocked by\n- #3", local(1, 3)],
    [
      "paragraphs inside the section are commentary",
      "## Dependencies\nSee #7 for background.\n- #1",
      local(1),
    ],
    ["look-alike heading is not a section", "## Dependencies of this module are unchanged\n- #1", []],
    ["singular heading is not a section", "## Dependency\n- #1", []],
    ["heading without a space is not a heading", "##Dependencies\n- #1", []],
    ["seven hashes is not a heading", "####### Dependencies\n- #1", []],
    ["four-space indent is code, not a heading", "    ## Dependencies\n- #1", []],
    ["setext headings are not recognised", "Dependencies\n---\n- #1", []],
    ["other sections do not count", "## Related\n- #5\n- acme/lib#6", []],
    ["closing keywords are not dependencies", "Fixes #3. Closes #4.\n\n- #5", []],
    ["inline list with comma and 'and'", "This depends on #1, #2 and #3.", local(1, 2, 3)],
    ["inline Oxford comma", "Depends on #1, #2, and #3", local(1, 2, 3)],
    [
      "inline blocked by, cross-repo, ampersand",
      "Blocked by acme/lib#7 & #8, and #9",
      [remote("acme/lib", 7), ...local(8, 9)],
    ],
    ["inline, upper case with colon", "DEPENDS ON: #4", local(4)],
    ["inline, space-separated refs", "depends on #4 #5", local(4, 5)],
    ["inline list stops at the first non-ref", "depends on #1 and also fixes #2", local(1)],
    ["inline list wraps after a comma", "depends on #1,\n#2", local(1, 2)],
    ["inline list does not continue on a bare newline", "blocked by #1\n#2 is unrelated", local(1)],
    ["inline keyword needs a ref right after it", "depends on the parser (#3)", []],
    ["inline 'depends only' is not the keyword", "depends only on #3", []],
    ["inline inside a heading", "## Depends on #5\n- #6", local(5)],
    ["inline inside another section", "## Related\n- #5, which depends on #6", local(6)],
    ["inline URL", "depends on https://github.com/acme/lib/issues/42.", [remote("acme/lib", 42)]],
    [
      "URL with fragment in a section",
      "## Dependencies\n- https://git.example.org/other/x.y/issues/5#issuecomment-1",
      [remote("other/x.y", 5)],
    ],
    ["pull request URLs are not issues", "## Dependencies\n- https://github.com/other/x/pull/5", []],
    [
      "URL to the same repository is local",
      "## Dependencies\n- https://github.com/acme/app/issues/3\n- #3",
      local(3),
    ],
    ["same-repo short ref is local", "## Dependencies\n- acme/app#3\n- #3", local(3)],
    [
      "cross-repo dedup is case-insensitive",
      "## Dependencies\n- Acme/Lib#1\n- acme/lib#1",
      [remote("Acme/Lib", 1)],
    ],
    [
      "same number in another repo is distinct",
      "## Dependencies\n- #1\n- acme/lib#1",
      [...local(1), remote("acme/lib", 1)],
    ],
    [
      "self-references are dropped",
      "## Dependencies\n- #10\n- acme/app#10\n- ACME/App#10\n- https://github.com/acme/app/issues/10\n- #11",
      local(11),
    ],
    ["duplicates keep first-seen order", "depends on #2\n## Dependencies\n- #1\n- #2\n- #1", local(2, 1)],
    [
      "section and inline refs interleave by position",
      "## Dependencies\n- #5\n\nBlocked by #3\n- #4",
      local(5, 3, 4),
    ],
    [
      "#N inside words, entities, fragments and paths",
      "## Dependencies\n- abc#12 &#123; x/#4 ##5 #6abc foo/bar/baz#7 #8_ #9",
      local(9),
    ],
    ["inline code spans are ignored", "## Dependencies\n- `#12` and #13\n- ``a ` #14`` #15", local(13, 15)],
    ["keyword inside inline code is ignored", "Note: `depends on #3` is the syntax.", []],
    ["an unmatched backtick is literal", "## Dependencies\n- `#1", local(1)],
    ["backtick fence", "## Dependencies\n```\n- #1\n```\n- #2", local(2)],
    [
      "fence with an info string hides a heading",
      "```md\n## Dependencies\n- #1\n```\ndepends on #2",
      local(2),
    ],
    [
      "tilde fence is not closed by backticks",
      "~~~\n```\ndepends on #1\n```\ndepends on #9\n~~~\ndepends on #2",
      local(2),
    ],
    ["a longer fence needs a long enough close", "````\n```\ndepends on #1\n````\ndepends on #2", local(2)],
    ["a shorter run never closes the fence", "````\n```\ndepends on #1", []],
    [
      "a fence line with an info string does not close",
      "```\n```js\ndepends on #1\n```\ndepends on #2",
      local(2),
    ],
    ["an unclosed fence runs to the end", "depends on #1\n```\ndepends on #2", local(1)],
    ["a backtick in the info string makes inline code", "``` `#1` ```\ndepends on #2", local(2)],
    [
      "an indented fence inside a list item",
      "## Dependencies\n- #1\n  ```\n  - #2\n  ```\n- #3",
      local(1, 3),
    ],
    ["CRLF line endings", "## Dependencies\r\n- #1\r\n- #2\r\n## Notes\r\n- #3", local(1, 2)],
    ["lone CR line endings", "## Dependencies\r- #1\r## Notes\r- #3", local(1)],
    ["CRLF fences", "```\r\ndepends on #1\r\n```\r\ndepends on #2\r\n", local(2)],
    ["single-line HTML comment", "<!-- depends on #1 -->\ndepends on #2", local(2)],
    ["multi-line HTML comment", "## Dependencies\n<!--\n- #1\n-->\n- #2", local(2)],
    ["an unclosed HTML comment runs to the end", "depends on #1\n<!-- template\ndepends on #2", local(1)],
    ["an HTML comment inside an inline list", "depends on <!-- #1 --> #2", local(2)],
    ["text after a comment closes", "<!--\nx --> depends on #3", local(3)],
    ["a comment opener inside inline code is code", "`<!--` depends on #4", local(4)],
    ["a fence inside an HTML comment is hidden", "<!--\n```\n-->\ndepends on #5", local(5)],
    ["leading zeros read as decimal", "depends on #007", local(7)],
    ["zero is rejected", "## Dependencies\n- #0\n- #00", []],
    ["MAX_SAFE_INTEGER is accepted", "## Dependencies\n- #9007199254740991", local(9007199254740991)],
    [
      "beyond MAX_SAFE_INTEGER is rejected",
      "## Dependencies\n- #9007199254740992\n- #99999999999999999999999",
      [],
    ],
    ["a rejected number does not end an inline list", "depends on #0, #3", local(3)],
    [
      "`.` and `..` are no owner or repository name",
      "depends on ../x#1, acme/..#2, ./lib#3, https://h/../x/issues/4, a.b/c..d#5, #6",
      [remote("a.b/c..d", 5), ...local(6)],
    ],
  ])("%s", (_name, body, expected) => {
    expect(parseDependencies(body, SELF)).toEqual(expected);
  });

  it("without self, keeps own-repository refs as written and drops nothing", () => {
    expect(parseDependencies("## Dependencies\n- #10\n- acme/app#10\n- acme/app#10")).toEqual([
      ...local(10),
      remote("acme/app", 10),
    ]);
  });

  it("handles a large body", () => {
    const body = `## Dependencies\n${Array.from({ length: 5_000 }, (_, i) => `- #${i + 1}`).join("\n")}`;
    const refs = parseDependencies(body, SELF);
    expect(refs).toHaveLength(4_999);
    expect(refs[0]).toEqual({ repo: null, number: 1 });
    expect(refs[9]).toEqual({ repo: null, number: 11 });
  });
});

describe("findCycles", () => {
  const graph = (edges: Record<number, number[]>) =>
    new Map(Object.entries(edges).map(([node, targets]) => [Number(node), targets]));

  it.each<[string, Record<number, number[]>, number[][]]>([
    ["empty graph", {}, []],
    ["no cycle", { 1: [2, 3], 2: [3], 3: [] }, []],
    ["targets that are not keys", { 1: [99] }, []],
    ["self-loop", { 1: [1], 2: [1] }, [[1]]],
    ["two-cycle", { 2: [1], 1: [2] }, [[1, 2]]],
    ["three-cycle starts at its smallest member", { 3: [1], 1: [2], 2: [3] }, [[1, 2, 3]]],
    ["cycle keeps edge order", { 1: [3], 3: [2], 2: [1] }, [[1, 3, 2]]],
    [
      "two disjoint cycles sorted by first member",
      { 5: [6], 6: [5], 1: [2], 2: [3], 3: [1] },
      [
        [1, 2, 3],
        [5, 6],
      ],
    ],
    ["a cycle plus tails in and out", { 9: [1], 1: [2], 2: [1, 7], 7: [8] }, [[1, 2]]],
    ["a component with two cycles is reported once", { 1: [2], 2: [1, 3], 3: [2] }, [[1, 2, 3]]],
    ["a self-loop inside a larger component", { 1: [1, 2], 2: [1] }, [[1, 2]]],
    ["duplicate edges", { 1: [2, 2], 2: [1, 1] }, [[1, 2]]],
    ["self-loop and a separate two-cycle", { 4: [4], 1: [2], 2: [1] }, [[1, 2], [4]]],
  ])("%s", (_name, edges, expected) => {
    expect(findCycles(graph(edges))).toEqual(expected);
  });

  const N = 10_000;
  const chain = (close: boolean) =>
    new Map(Array.from({ length: N }, (_, i) => [i + 1, i + 1 < N ? [i + 2] : close ? [1] : []]));

  it("a chain of 10 000 issues has no cycle and does not overflow the stack", () => {
    expect(findCycles(chain(false))).toEqual([]);
  });

  it("a cycle of 10 000 issues comes out once, in order", () => {
    expect(findCycles(chain(true))).toEqual([Array.from({ length: N }, (_, i) => i + 1)]);
  });

  it("a long tail into a self-loop", () => {
    const edges = new Map(Array.from({ length: N }, (_, i) => [i + 1, [i + 2]]));
    edges.set(N + 1, [N + 1]);
    expect(findCycles(edges)).toEqual([[N + 1]]);
  });
});
