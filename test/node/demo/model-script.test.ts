/**
 * The demo's scripted model answers every run its factory can start: the built-in agents' schedules fire
 * when a demo crosses their time (the predictor's every hour), and such a run gets a noop, not "no rule
 * matches" (which failed it); the operator's manual runs still get their designed outputs.
 */
import { describe, expect, it } from "vitest";
import { DEMO_SCRIPT } from "../../../demo/model-script.ts";
import { BUILTIN_AGENTS } from "../../../src/agents/builtin.generated.ts";
import { agentPrompt } from "../../../src/agents/context.ts";
import { parseAgentDefinition } from "../../../src/agents/definition.ts";
import { nextTurn, toScriptRequest } from "../../support/model/script.ts";

const definitions = Object.entries(BUILTIN_AGENTS).map(([name, text]) => {
  const parsed = parseAgentDefinition(name, text, "builtin");
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
});

/** The first turn the stand-in gives a run of `name` started by `trigger`. */
async function firstTurn(name: string, trigger: string) {
  const definition = definitions.find((d) => d.name === name);
  if (!definition) throw new Error(`no built-in ${name}`);
  const prompt = agentPrompt(definition, { project: "textkit", repo: "acme/textkit", trigger, issues: [] });
  return nextTurn(DEMO_SCRIPT, toScriptRequest({ messages: [{ role: "user", content: prompt }] }));
}

describe("the demo's model for the built-in agents", () => {
  const scheduled = definitions.filter((d) => d.schedule);

  it("has scheduled agents to answer", () => {
    expect(scheduled.map((d) => d.name).sort()).toEqual(["gardener", "planner", "predictor"]);
  });

  it.each(scheduled.map((d) => [d.name, d.schedule]))(
    "a scheduled %s run (%s) gets a noop",
    async (name, schedule) => {
      const turn = await firstTurn(name, `schedule ${schedule}`);
      expect(turn).toEqual({
        content: [
          { type: "tool_use", name: "mcp__safe_outputs__noop", input: { reason: expect.any(String) } },
        ],
      });
    },
  );

  it("a manual run gets its designed outputs", async () => {
    expect(await firstTurn("gardener", "manual")).toMatchObject({
      content: [{ type: "tool_use", name: "mcp__safe_outputs__comment", input: { issue: 9 } }],
    });
  });
});
