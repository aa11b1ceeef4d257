import { describe, expect, it } from "vitest";
import { MAX_SUMMARY_CHARS, pullRequestBody } from "../../src/forge/pull-request-body.ts";

const story = { number: 7, branch: "conveyor/7", summary: null, ci: [], critic: [] };

describe("the pull request's description", () => {
  it("closes its issue and says so when the session left no summary", () => {
    expect(pullRequestBody(story)).toBe(
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

  it("quotes the session's summary and tells how CI and the critic went", () => {
    const body = pullRequestBody({
      ...story,
      summary: "Added parse().\n\nIt trims input.",
      ci: [{ green: false }, { green: true }],
      critic: [
        { round: 1, verdict: "REQUEST_CHANGES", summary: "Handle\nempty input." },
        { round: 2, verdict: "APPROVE", summary: "Good." },
      ],
    });
    expect(body).toContain("## What changed\n\n> Added parse().\n>\n> It trims input.\n");
    expect(body).toContain(
      [
        "## How it went",
        "",
        "- CI: red → green",
        "- Critic, round 1: REQUEST_CHANGES. Handle empty input.",
        "- Critic, round 2: APPROVE. Good.",
      ].join("\n"),
    );
  });

  it("mentions nobody and keeps a runaway summary short", () => {
    const body = pullRequestBody({ ...story, summary: `cc @security-team ${"x".repeat(10_000)}` });
    expect(body).not.toMatch(/@security-team/);
    expect(body).toContain("@\u200bsecurity-team");
    expect(body.length).toBeLessThan(MAX_SUMMARY_CHARS + 400);
  });
});
