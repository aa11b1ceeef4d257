import { describe, expect, it } from "vitest";
import { isConveyorPull, issueFromBranch } from "../../src/domain/pull-requests.ts";

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

describe("isConveyorPull", () => {
  const ours = { headRef: "conveyor/7-login", headRepository: "acme/widgets", author: "conveyor-bot" };

  it("takes Conveyor's account's pull request from a conveyor/<n> branch of the repository", () => {
    expect(isConveyorPull(ours, "acme/widgets", "conveyor-bot")).toBe(true);
    // Logins and repository names compare without case.
    expect(isConveyorPull({ ...ours, author: "Conveyor-Bot" }, "Acme/Widgets", "conveyor-bot")).toBe(true);
  });

  it.each([
    ["a fork", { headRepository: "mallory/widgets" }],
    ["an unknown head repository", { headRepository: null }],
    ["another author", { author: "mallory" }],
    ["another branch", { headRef: "fix-7" }],
  ])("refuses %s", (_, patch) => {
    expect(isConveyorPull({ ...ours, ...patch }, "acme/widgets", "conveyor-bot")).toBe(false);
  });
});
