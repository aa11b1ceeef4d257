import { it } from "vitest";
import { defuse, hazards } from "../../src/forge/post/defuse.ts";

const policy = { forge: "github", forgeOrigin: "https://github.com", linkHosts: [], mentions: [] } as const;
const cases: Record<string, string> = {
  links: "[a](http://evil.example/x) ".repeat(2_500),
  mixed: "@u <b>x</b> [l](http://e.x) fixes #3 `c` ".repeat(1_500),
  lists: "- ".repeat(30_000),
  quotes: "> ".repeat(30_000),
  brackets: "[".repeat(60_000),
  emph: "*_".repeat(30_000),
  plain: "word ".repeat(12_000),
};
it("bench", () => {
  for (const [name, text] of Object.entries(cases)) {
    let t = performance.now();
    const edits = (() => {
      try {
        return hazards(text, policy as never).length;
      } catch (e) {
        return String(e).slice(0, 40);
      }
    })();
    const one = Math.round(performance.now() - t);
    t = performance.now();
    defuse(text, policy as never);
    process.stderr.write(
      `${name} ${text.length} hazards-pass ${one} ms (${edits} edits) defuse ${Math.round(performance.now() - t)} ms\n`,
    );
  }
});
