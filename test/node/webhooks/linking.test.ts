import { describe, expect, it } from "vitest";
import { closingReferences, issueFromBranch, linkedIssues } from "../../../src/forge/webhooks/linking.ts";

describe("issueFromBranch", () => {
  it.each([
    ["conveyor/12", 12],
    ["conveyor/12-add-login-page", 12],
    ["conveyor/7-", 7],
    ["conveyor/123456789", 123456789],
    ["conveyor/0", null],
    ["conveyor/012", null],
    ["conveyor/12abc", null],
    ["conveyor/", null],
    ["conveyor/x-12", null],
    ["conveyor/1234567890", null],
    ["feature/conveyor/12", null],
    ["Conveyor/12", null],
    ["refs/heads/conveyor/12", null],
    ["main", null],
  ])("%s → %s", (ref, expected) => {
    expect(issueFromBranch(ref)).toBe(expected);
  });
});

describe("closingReferences", () => {
  it.each([
    ["Fixes #12", [12]],
    ["fixes #12", [12]],
    ["FIXED #12", [12]],
    ["fix #3", [3]],
    ["Closes #4", [4]],
    ["close #4", [4]],
    ["closed #4", [4]],
    ["Resolves #5", [5]],
    ["resolve #5", [5]],
    ["resolved #5", [5]],
    ["Fixes: #6", [6]],
    ["Fixes #6.", [6]],
    ["(fixes #6)", [6]],
    ["Fixes #1, fixes #2 and resolves #3", [1, 2, 3]],
    ["Fixes #2\n\nAlso closes #2", [2]],
    ["Closes #9 and fixes #3", [9, 3]],
    ["line one\nFixes #42\n", [42]],
    // Not a closing reference:
    ["Fixes #1, #2", [1]],
    ["See #12", []],
    ["#12", []],
    ["Fixes owner/repo#12", []],
    ["unfixed #3", []],
    ["prefixes #3", []],
    ["Fixes#3", []],
    ["Fixes #12abc", []],
    ["Fixes #0", []],
    ["Fixes\n#3", []],
    ["fixing #3", []],
    ["", []],
  ])("%j → %j", (body, expected) => {
    expect(closingReferences(body)).toEqual(expected);
  });
});

describe("linkedIssues", () => {
  it.each([
    ["conveyor/7-login", "", [7]],
    ["conveyor/7", "Fixes #7", [7]],
    ["conveyor/7-login", "Also fixes #3 and closes #12", [3, 7, 12]],
    ["feature/x", "Resolves #5", [5]],
    ["feature/x", "no links", []],
  ])("branch %s, body %j → %j", (headRef, body, expected) => {
    expect(linkedIssues(headRef, body)).toEqual(expected);
  });
});
