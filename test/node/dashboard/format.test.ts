import { describe, expect, it } from "vitest";
import { formatDuration, formatTime } from "../../../src/dashboard/format.ts";
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
