import { describe, expect, it } from "vitest";
import { parseComment } from "../../src/domain/commands.ts";

describe("parseComment", () => {
  it.each([
    ["/conveyor retry", { kind: "command", command: "retry" }],
    ["/conveyor abandon", { kind: "command", command: "abandon" }],
    ["/conveyor accept", { kind: "command", command: "accept" }],
    ["/Conveyor Accept\nthe hint is right", { kind: "command", command: "accept" }],
    ["\n\n  /Conveyor RETRY  \nbecause the flake is fixed", { kind: "command", command: "retry" }],
    ["/conveyor abandon\r\nno longer needed", { kind: "command", command: "abandon" }],
    ["/conveyor merge", { kind: "command", command: "merge" }],
    ["/conveyor rebase", { kind: "unknown_command", verb: "rebase" }],
    ["/conveyor", { kind: "unknown_command", verb: "" }],
    ["Use the v2 endpoint.\n/conveyor retry", { kind: "text" }],
    ["please /conveyor retry", { kind: "text" }],
    ["/conveyorretry", { kind: "text" }],
    ["", { kind: "text" }],
    ["/conveyor approve v7", { kind: "vault", command: "approve", id: "v7" }],
    ["/conveyor approve 12\nlooks fine", { kind: "vault", command: "approve", id: "v12" }],
    [
      "/conveyor reject v3 rotates the wrong key",
      { kind: "vault", command: "reject", id: "v3", reason: "rotates the wrong key" },
    ],
    ["/conveyor REJECT V3", { kind: "vault", command: "reject", id: "v3" }],
    ["/conveyor approve", { kind: "vault", command: "approve", id: null }],
    ["/conveyor approve everything", { kind: "vault", command: "approve", id: null }],
  ])("%j → %j", (body, expected) => {
    expect(parseComment(body)).toEqual(expected);
  });
});
