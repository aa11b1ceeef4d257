/**
 * The sanitizer (src/forge/post/defuse.ts) against an independent reading of its output (./oracle.ts): for
 * any input, nothing a forge would act on is left; text with nothing to defuse comes back byte for byte.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defuse } from "../../../src/forge/post/defuse.ts";
import type { PostPolicy } from "../../../src/forge/post/policy.ts";
import { CLEAN_DOCUMENTS, HAZARDS, SYNTAX } from "./corpus.ts";
import { violations } from "./oracle.ts";

const ESC = String.fromCharCode(27);

const policy: PostPolicy = {
  forge: "github",
  forgeOrigin: "https://github.com",
  linkHosts: ["docs.example.com", "*.cdn.example.com"],
  mentions: ["alice", "acme/reviewers"],
};

/** Hostile text: hazards and markdown syntax in any order, with arbitrary text between. */
const hostile = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...HAZARDS) },
      { weight: 4, arbitrary: fc.constantFrom(...SYNTAX) },
      { weight: 1, arbitrary: fc.constantFrom(...CLEAN_DOCUMENTS) },
      { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 8 }) },
    ),
    { maxLength: 24 },
  )
  .map((parts) => parts.join(""));

describe("defuse, for any input", () => {
  it("leaves nothing a forge would act on", () => {
    fc.assert(
      fc.property(hostile, (text) => {
        expect(violations(defuse(text, policy), policy)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("is done in one pass: defusing its output changes nothing", () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const once = defuse(text, policy);
        expect(defuse(once, policy)).toBe(once);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps every hazard fragment's words visible", () => {
    // Entities, markers, images and escapes aside: an entity's name is not a word, the rest go whole.
    for (const hazard of HAZARDS.filter((h) => !/&|conveyor:|!\[/.test(h) && !h.includes(ESC))) {
      const out = defuse(hazard, policy);
      expect(violations(out, policy), hazard).toEqual([]);
      for (const word of hazard.match(/[a-z]{4,}/g) ?? [])
        if (!/conveyor|hidden|instructions|next|agent|script|alert|details|summary|secret|pixel/.test(word))
          expect(out.toLowerCase(), hazard).toContain(word.toLowerCase());
    }
  });
});

describe("defuse, on text with nothing to defuse", () => {
  it("changes no byte of realistic markdown", () => {
    for (const doc of CLEAN_DOCUMENTS) expect(defuse(doc, policy)).toBe(doc);
  });

  it("changes no byte of any combination of it", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...CLEAN_DOCUMENTS), { maxLength: 6 }), (docs) => {
        const text = docs.join("\n\n");
        expect(defuse(text, policy)).toBe(text);
      }),
      { numRuns: 100 },
    );
  });

  it("changes no byte of plain prose", () => {
    const word = fc.stringMatching(/^[A-Za-z][a-z]{0,9}[.,;]?$/);
    fc.assert(
      fc.property(fc.array(word, { maxLength: 40 }), (words) => {
        const text = words.join(" ");
        expect(defuse(text, policy)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

describe("each rule", () => {
  const cases: [string, string][] = [
    ["hi @bob and @alice", "hi `@bob` and @alice"],
    ["&#64;carol, \\@dave, \uff20eve", "`@carol`, `@dave`, `\uff20eve`"],
    ["@acme/reviewers and @acme/everyone", "@acme/reviewers and `@acme/everyone`"],
    ["mail bob@example", "mail bob@example"],
    // Addresses as GitHub links them: the part of a word that fits, and none where the domain holds a `|`.
    ["write to a/b#4@bob.com now", "write to a/b#`4@bob.com` now"],
    ["acme/widgets#4@bob|\u202egnp.exe", "acme/widgets#4@bob|gnp.exe"],
    ["Fixes #12, closes acme/w#3", "`Fixes` #12, `closes` acme/w#3"],
    ["resolves: https://github.com/a/b/issues/2", "`resolves`: https://github.com/a/b/issues/2"],
    ["This fixes the bug", "This fixes the bug"],
    ["before <!-- hidden --> after", "before  after"],
    ["<b>bold</b>", "&lt;b>bold&lt;/b>"],
    ["[x](https://evil.example/a?d=1)", "x (`https://evil.example/a?d=1`)"],
    ["[docs](https://docs.example.com/a)", "[docs](https://docs.example.com/a)"],
    ["[cdn](https://img.cdn.example.com/a)", "[cdn](https://img.cdn.example.com/a)"],
    ["[plain](http://docs.example.com/a)", "plain (`http://docs.example.com/a`)"],
    ["<https://evil.example/x>", "`https://evil.example/x`"],
    ["![p](https://evil.example/p.png)", "_(image from `evil.example` not shown)_"],
    ["![p](https://github.com/a/b/raw/main/p.png)", "![p](https://github.com/a/b/raw/main/p.png)"],
    ["/conveyor approve v7", "`/conveyor` approve v7"],
    ["a\u202eb\u200bc\u001b[31md", "abcd"],
    ["x <!-- conveyor:0123456789abcdef0123456789abcdef --> y", "x  y"],
    ["```\n<!-- conveyor:0123456789abcdef0123456789abcdef -->\n```", "```\n\n```"],
  ];
  it.each(cases)("%j → %j", (input, output) => {
    expect(defuse(input, policy)).toBe(output);
  });

  it("uses a backtick run the text holds nowhere else, so a stray backtick cannot open a hazard", () => {
    expect(defuse("x ` y @bob", policy)).toBe("x ` y ``@bob``");
  });
  it("reads containers nested 64 deep; a line opening more is shown whole as code, unread", () => {
    const nested = (depth: number) => `${"> ".repeat(depth / 2)}${"- ".repeat(depth / 2)}@bob`;
    expect(defuse(nested(64), policy)).toBe(`${"> ".repeat(32)}${"- ".repeat(32)}\`@bob\``);
    expect(defuse(nested(66), policy)).toBe(`\`\`\`text\n${nested(66)}\n\`\`\``);
    expect(defuse(">".repeat(60_000), policy)).toBe(`\`\`\`text\n${">".repeat(60_000)}\n\`\`\``);
  });
});
