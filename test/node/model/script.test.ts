import { describe, expect, it } from "vitest";
import { bash, nextTurn, type Rule, text, toScriptRequest, use } from "../../support/model/script.ts";

const rules: Rule[] = [
  { when: /implement issue #7/, steps: [bash("make"), text("done")] },
  { when: /review feedback/, steps: [bash("make fix"), text("fixed")] },
  { forced: "report", steps: [use("report", { verdict: "APPROVE" })] },
];

const prompt = (value: string) => ({
  role: "user",
  content: [
    { type: "text", text: "<system-reminder>context</system-reminder>" },
    { type: "text", text: value },
  ],
});
const environment = { role: "system", content: "# Environment\n - Primary working directory: /tmp/x" };
const toolCall = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name: "Bash", input: {} }],
});
const toolResult = (id: string, content: string) => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content }],
});

describe("scripted turns", () => {
  it("derives the step from the assistant turns after the matching prompt", async () => {
    const first = toScriptRequest({ messages: [prompt("Please implement issue #7"), environment] });
    expect(first.lastUserText).toContain("Please implement issue #7");
    expect(await nextTurn(rules, first)).toMatchObject({
      content: [{ name: "Bash", input: { command: "make" } }],
    });

    const second = toScriptRequest({
      messages: [prompt("Please implement issue #7"), environment, toolCall("t1"), toolResult("t1", "ok")],
    });
    expect(second.toolResults).toEqual([{ toolUseId: "t1", text: "ok", isError: false }]);
    expect(await nextTurn(rules, second)).toEqual(text("done"));
  });

  it("moves to the rule of a new prompt in a resumed transcript", async () => {
    const resumed = toScriptRequest({
      messages: [
        prompt("Please implement issue #7"),
        environment,
        toolCall("t1"),
        toolResult("t1", "ok"),
        { role: "assistant", content: [{ type: "text", text: "done" }] },
        prompt("Please address the review feedback"),
      ],
    });
    expect(resumed.assistantTurns).toBe(2);
    expect(await nextTurn(rules, resumed)).toMatchObject({ content: [{ input: { command: "make fix" } }] });
  });

  it("answers a forced tool only with a rule for that tool", async () => {
    const forced = toScriptRequest({
      system: [{ type: "text", text: "You review diffs." }],
      messages: [{ role: "user", content: "Review: implement issue #7" }],
      tool_choice: { type: "tool", name: "report" },
    });
    expect(forced.forcedTool).toBe("report");
    expect(await nextTurn(rules, forced)).toMatchObject({ content: [{ name: "report" }] });
  });
});
