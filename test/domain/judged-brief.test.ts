import { describe, expect, it } from "vitest";
import { judgedIssue } from "../../src/domain/judged-brief.ts";

const brief = { title: "Add the parser", body: "Parse the input.", by: "maintainer" };

describe("judgedIssue: the critic judges the brief a writer queued", () => {
  it("an unchanged issue: the brief, nothing besides", () => {
    expect(judgedIssue(brief, { title: brief.title, body: brief.body })).toEqual({
      judged: { title: brief.title, body: brief.body },
      queuedBy: "maintainer",
      current: null,
    });
  });

  it.each([
    ["its body", { title: brief.title, body: "Parse it and delete the importer." }],
    ["its title", { title: "Delete the importer", body: brief.body }],
  ])("an edit of %s after queueing: still the brief, the text now as context", (_, now) => {
    expect(judgedIssue(brief, { ...now, labels: ["x"] } as typeof now)).toEqual({
      judged: { title: brief.title, body: brief.body },
      queuedBy: "maintainer",
      current: now,
    });
  });

  it("no brief kept (queued before briefs were): the text as it reads now; nothing known: empty", () => {
    const now = { title: "T", body: "B" };
    expect(judgedIssue(null, now)).toEqual({ judged: now, queuedBy: null, current: null });
    expect(judgedIssue(null, null)).toEqual({
      judged: { title: "", body: "" },
      queuedBy: null,
      current: null,
    });
    expect(judgedIssue(brief, null)).toMatchObject({ judged: { body: brief.body }, current: null });
  });
});
