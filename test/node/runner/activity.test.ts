import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import { activityOf, MAX_ACTIVITY_TEXT } from "../../../runner/drivers/activity.ts";

const AT = 1_800_000_000_000;
const assistant = (content: unknown[], parent: string | null = null) =>
  ({ type: "assistant", parent_tool_use_id: parent, message: { content } }) as unknown as SDKMessage;
const user = (content: unknown[]) =>
  ({ type: "user", parent_tool_use_id: null, message: { content } }) as unknown as SDKMessage;

describe("session activity from the SDK's messages", () => {
  it("the agent's words and tool calls, each named by what it does", () => {
    const message = assistant([
      { type: "text", text: "Running the tests." },
      { type: "tool_use", name: "Bash", input: { command: "npm test", description: "Run tests" } },
      { type: "tool_use", name: "Edit", input: { file_path: "src/a.ts", old_string: "a", new_string: "b" } },
      { type: "tool_use", name: "TodoWrite", input: { todos: [] } },
      { type: "thinking", thinking: "hidden" },
    ]);
    expect(activityOf(message, AT)).toEqual([
      { at: AT, kind: "text", text: "Running the tests." },
      { at: AT, kind: "tool", text: "Bash npm test" },
      { at: AT, kind: "tool", text: "Edit src/a.ts" },
      { at: AT, kind: "tool", text: 'TodoWrite {"todos":[]}' },
    ]);
  });

  it("a tool's answer by its first line, errors marked", () => {
    const message = user([
      { type: "tool_result", tool_use_id: "1", content: "12 passed\nall good" },
      {
        type: "tool_result",
        tool_use_id: "2",
        is_error: true,
        content: [{ type: "text", text: "exit 1: boom" }],
      },
    ]);
    expect(activityOf(message, AT)).toEqual([
      { at: AT, kind: "result", text: "12 passed" },
      { at: AT, kind: "error", text: "exit 1: boom" },
    ]);
  });

  it("cuts long text, and leaves out subagents' own steps and other messages", () => {
    const [long] = activityOf(assistant([{ type: "text", text: "x".repeat(5_000) }]), AT);
    expect(long?.text).toHaveLength(MAX_ACTIVITY_TEXT);
    expect(long?.text.endsWith("…")).toBe(true);
    expect(activityOf(assistant([{ type: "text", text: "inner" }], "toolu_1"), AT)).toEqual([]);
    expect(activityOf({ type: "system", subtype: "init" } as unknown as SDKMessage, AT)).toEqual([]);
    expect(activityOf(user([{ type: "text", text: "the prompt" }]), AT)).toEqual([]);
  });
});
