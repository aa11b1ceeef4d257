import { describe, expect, it } from "vitest";
import {
  formatDuration,
  formatTime,
  healthHeadline,
  plural,
  relativeTime,
} from "../../../src/dashboard/format.ts";
import { LIVE_SCRIPT } from "../../../src/dashboard/live-script.ts";
import { forgeLinks } from "../../../src/forge/web-links.ts";

describe("times and durations", () => {
  it("writes a time to the second, in UTC", () => {
    expect(formatTime(Date.parse("2026-11-25T04:37:12.900Z"))).toBe("2026-11-25 04:37:12 UTC");
  });

  it.each([
    [0, "0 s"],
    [44_600, "45 s"],
    [185_000, "3 min 05 s"],
    [7_620_000, "2 h 07 min"],
    [273_600_000, "3 d 4 h"],
    [-5_000, "0 s"],
  ])("%i ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("relative times", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  it.each([
    [0, "0 s ago"],
    [-44_600, "45 s ago"],
    [-185_000, "3 min ago"],
    [-7_620_000, "2 h ago"],
    [-273_600_000, "3 d ago"],
    [20_000, "in 20 s"],
    [185_000, "in 3 min"],
    [7_620_000, "in 2 h"],
  ])("%i ms from now is %s", (offset, text) => {
    expect(relativeTime(now + offset, now)).toBe(text);
  });

  it("is the same function in the browser's script", () => {
    const inScript = LIVE_SCRIPT.match(/const relativeTime = (function[\s\S]*?\n {2}\});/)?.[1];
    expect(inScript).toBeDefined();
    const compiled = new Function(`return ${inScript}`)() as typeof relativeTime;
    for (const offset of [-273_600_000, -185_000, 0, 20_000, 7_620_000])
      expect(compiled(now + offset, now)).toBe(relativeTime(now + offset, now));
  });
});

describe("counts and health", () => {
  it("writes one finding, not one findings", () => {
    expect(plural(1, "finding")).toBe("1 finding");
    expect(plural(0, "finding")).toBe("0 findings");
    expect(plural(2, "worktree")).toBe("2 worktrees");
  });

  it("never reads healthy before a check ran, nor after one failed", () => {
    const base = { checkedAt: null, error: null, findings: [] };
    expect(healthHeadline(base)).toBe("not checked yet");
    expect(healthHeadline({ ...base, error: "forge down" })).toBe("the first check failed");
    expect(healthHeadline({ ...base, checkedAt: 1 })).toBe("healthy");
    expect(healthHeadline({ ...base, checkedAt: 1, findings: [{}] })).toBe("1 finding");
    expect(healthHeadline({ ...base, checkedAt: 1, error: "x", findings: [{}, {}] })).toBe(
      "2 findings (the last check failed)",
    );
  });
});

describe("forge links", () => {
  it.each([
    [
      "GitHub",
      { forge: "github", apiUrl: "https://api.github.com", repo: "acme/web" },
      "https://github.com/acme/web",
      ["pull/3", "tree/conveyor/7"],
    ],
    [
      "GitHub Enterprise",
      { forge: "github", apiUrl: "https://ghe.example/api/v3", repo: "acme/web" },
      "https://ghe.example/acme/web",
      ["pull/3", "tree/conveyor/7"],
    ],
    [
      "Forgejo under a path",
      { forge: "forgejo", apiUrl: "https://code.example/git/api/v1", repo: "acme/web" },
      "https://code.example/git/acme/web",
      ["pulls/3", "src/branch/conveyor/7"],
    ],
  ] as const)("%s", (_name, project, repo, [pull, branch]) => {
    const links = forgeLinks(project);
    expect(links.issue(5)).toBe(`${repo}/issues/5`);
    expect(links.pullRequest(3)).toBe(`${repo}/${pull}`);
    expect(links.branch("conveyor/7")).toBe(`${repo}/${branch}`);
    expect(links.commit("abc1234")).toBe(`${repo}/commit/abc1234`);
  });

  it("escapes a branch name's characters, and links no name git would refuse", () => {
    const links = forgeLinks({ forge: "gitea", apiUrl: "https://git.example/api/v1", repo: "a/b" });
    expect(links.branch("x/admin?y=1#z")).toBe("https://git.example/a/b/src/branch/x/admin%3Fy%3D1%23z");
    expect(links.branch("x/../../admin")).toBeUndefined();
    expect(links.branch(".hidden/x")).toBeUndefined();
  });
});
