/**
 * What a session is doing, for the people watching it: the agent's words and tool calls, and what the tools
 * answered, each cut short. Read from the SDK's messages; sent to the Worker as `activity` events (redacted
 * like every other report), shown live on the dashboard page.
 */
import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ActivityItem } from "../../src/runner-api/contract.ts";

export const MAX_ACTIVITY_TEXT = 300;

export function activityOf(message: SDKMessage, at: number): ActivityItem[] {
  // A subagent's own steps are its tool call's business; the call itself was shown.
  if ((message.type !== "assistant" && message.type !== "user") || message.parent_tool_use_id) return [];
  const content = message.message.content;
  if (typeof content === "string") return [];
  return content.flatMap((block): ActivityItem[] => {
    if (block.type === "text" && message.type === "assistant")
      return block.text.trim() ? [{ at, kind: "text", text: cut(block.text) }] : [];
    if (block.type === "tool_use")
      return [{ at, kind: "tool", text: cut(`${block.name} ${summary(block.input)}`.trim()) }];
    if (block.type === "tool_result") {
      const text = resultText(block.content);
      return [{ at, kind: block.is_error ? "error" : "result", text: cut(text.split("\n")[0] ?? "") }];
    }
    return [];
  });
}

/** The one argument that says what a tool call does (the command, the file, the pattern), else all of them. */
function summary(input: unknown): string {
  if (typeof input !== "object" || input === null) return "";
  const fields = input as Record<string, unknown>;
  for (const key of ["command", "file_path", "pattern", "path", "url", "description"]) {
    if (typeof fields[key] === "string") return fields[key];
  }
  return JSON.stringify(input);
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) =>
      typeof part === "object" && part !== null && "text" in part && typeof part.text === "string"
        ? part.text
        : "",
    )
    .join(" ");
}

/** One item now, its text cut to size. */
export const activityItem = (kind: ActivityItem["kind"], text: string): ActivityItem => ({
  at: Date.now(),
  kind,
  text: cut(text),
});

const cut = (text: string) =>
  text.length > MAX_ACTIVITY_TEXT ? `${text.slice(0, MAX_ACTIVITY_TEXT - 1)}…` : text;
