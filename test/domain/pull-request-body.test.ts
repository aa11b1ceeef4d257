import { describe, expect, it } from "vitest";
import type { PostPolicy } from "../../src/forge/post/policy.ts";
import { MAX_SUMMARY_CHARS, pullRequestBody } from "../../src/forge/pull-request-body.ts";

const story = { number: 7, branch: "conveyor/7", summary: null, ci: [], critic: [] };
const policy: PostPolicy = {
  forge: "github",
  forgeOrigin: "https://github.com",
  linkHosts: [],
  mentions: [],
};

describe("the pull request's description", () => {
  it("closes its issue and says so when the session left no summary", () => {
    expect(pullRequestBody(story, policy)).toBe(
      [
        "Closes #7",
        "",
        "## What changed",
        "",
        "_The session left no summary; the commits tell._",
        "",
        "_Opened by Conveyor from `conveyor/7`; this description is rewritten with each push._",
      ].join("\n"),
    );
  });

  it("quotes the session's summary and tells how CI and the critic went, each under its author", () => {
    const body = pullRequestBody(
      {
        ...story,
        summary: "Added parse().\n\nIt trims input.",
        ci: [{ green: false }, { green: true }],
        critic: [
          { round: 1, verdict: "REQUEST_CHANGES", summary: "Handle\nempty input." },
          { round: 2, verdict: "APPROVE", summary: "Good." },
        ],
      },
      policy,
    );
    expect(body).toContain(
      "## What changed\n\nThe session wrote:\n\n> Added parse().\n>\n> It trims input.\n",
    );
    expect(body).toContain(
      [
        "## How it went",
        "",
        "- CI: red → green",
        "",
        "Critic, round 1: REQUEST_CHANGES.",
        "",
        "> Handle",
        "> empty input.",
        "",
        "Critic, round 2: APPROVE.",
        "",
        "> Good.",
      ].join("\n"),
    );
  });

  it("mentions nobody, closes nothing but its issue and keeps a runaway summary short", () => {
    const summary = `cc @security-team, fixes #3 ${"x".repeat(10_000)}`;
    const body = pullRequestBody({ ...story, summary }, policy);
    expect(body).toContain("cc `@security-team`, `fixes` #3");
    expect(body.startsWith("Closes #7\n")).toBe(true);
    expect(body.length).toBeLessThan(MAX_SUMMARY_CHARS + 400);
  });
});
