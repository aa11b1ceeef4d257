import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Options, query, type SDKMessage, type SDKResultMessage } from "@anthropic-ai/claude-agent-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiError, bash, edit, read, text, turn, write } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";

const PHASE_COMMAND = 'printf "PHASE:awaiting_ci\\n" > "$CONVEYOR_PHASE_FILE"';

let standIn: ModelStandIn;
let dir: string;
let cwd: string;
let phaseFile: string;

beforeAll(async () => {
  standIn = await startModelStandIn({
    script: [
      {
        when: /implement issue #7/,
        steps: [write("src/greeting.txt", "hello from issue 7\n"), bash(PHASE_COMMAND), text("Implemented.")],
      },
      {
        when: /address the review of issue #7/,
        // Edit needs no Read first: the resumed session knows the file it wrote.
        steps: [
          edit("src/greeting.txt", "hello from", "revised greeting from"),
          turn(text("Checking the result."), read("src/greeting.txt")),
          text("Revised."),
        ],
      },
      { when: /loop forever/, steps: Array.from({ length: 5 }, (_, i) => bash(`echo ${i}`)) },
      { when: /overloaded/, steps: [apiError(529, "overloaded_error", "Overloaded")] },
    ],
  });
  dir = mkdtempSync(join(tmpdir(), "model-stand-in-"));
  cwd = join(dir, "repo");
  phaseFile = join(dir, "phase");
  execFileSync("git", ["init", "-q", cwd]);
});

afterAll(async () => {
  await standIn.close();
  rmSync(dir, { recursive: true, force: true });
});

// As root, bypassPermissions needs IS_SANDBOX=1; dontAsk with allowedTools runs the listed tools without it.
function options(extra: Options = {}): Options {
  return {
    cwd,
    permissionMode: "dontAsk",
    allowedTools: ["Bash", "Write", "Edit", "Read"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      ANTHROPIC_BASE_URL: standIn.url,
      ANTHROPIC_API_KEY: "test-key",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CONFIG_DIR: join(dir, "claude"),
      CONVEYOR_PHASE_FILE: phaseFile,
    },
    ...extra,
  };
}

async function run(prompt: string, extra?: Options) {
  const messages: SDKMessage[] = [];
  let result: SDKResultMessage | undefined;
  let error: unknown;
  try {
    for await (const message of query({ prompt, options: options(extra) })) {
      messages.push(message);
      if (message.type === "result") result = message;
    }
  } catch (caught) {
    error = caught;
  }
  return { messages, result, error };
}

function requestsSince(start: number) {
  return standIn.requests
    .slice(start)
    .map((r) => r.body as { messages: { role: string; content: unknown }[] });
}

describe("real Claude Agent SDK against the stand-in", () => {
  let sessionId = "";

  it("runs tool round trips in the session's cwd and reports usage and cost", async () => {
    const start = standIn.requests.length;
    const { result, error } = await run("Please implement issue #7");

    expect(error).toBeUndefined();
    expect(readFileSync(join(cwd, "src/greeting.txt"), "utf8")).toBe("hello from issue 7\n");
    expect(readFileSync(phaseFile, "utf8")).toBe("PHASE:awaiting_ci\n");
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Implemented.",
    });
    expect(result?.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result?.total_cost_usd).toBeGreaterThan(0);
    expect(result?.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(result?.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(standIn.requests.slice(start).map((r) => `${r.method} ${r.path}${r.query}`)).toEqual(
      Array(3).fill("POST /v1/messages?beta=true"),
    );
    expect(standIn.requests[start]?.headers["x-api-key"]).toBeUndefined();
    sessionId = result?.session_id ?? "";
  });

  it("resumes the same session id with the earlier transcript and a warm cache", async () => {
    const start = standIn.requests.length;
    const { result, error } = await run("Please address the review of issue #7", { resume: sessionId });

    expect(error).toBeUndefined();
    expect(result).toMatchObject({ subtype: "success", result: "Revised.", session_id: sessionId });
    expect(readFileSync(join(cwd, "src/greeting.txt"), "utf8")).toBe("revised greeting from issue 7\n");
    const readBack = requestsSince(start).at(-1)?.messages.at(-1);
    expect(JSON.stringify(readBack)).toContain("revised greeting from issue 7");
    const first = JSON.stringify(requestsSince(start)[0]?.messages);
    expect(first).toContain("Please implement issue #7");
    expect(first).toContain("hello from issue 7");
    expect(first).toContain("PHASE:awaiting_ci");
    const usage = result?.usage;
    const read = usage?.cache_read_input_tokens ?? 0;
    const total = read + (usage?.cache_creation_input_tokens ?? 0) + (usage?.input_tokens ?? 0);
    expect(read / total).toBeGreaterThan(0.9);
  });

  it("yields an error result at maxTurns and then throws", async () => {
    const { result, error } = await run("Please loop forever", { maxTurns: 2 });

    expect(result).toMatchObject({ subtype: "error_max_turns", is_error: true });
    expect(result?.session_id).toBeTruthy();
    expect(String(error)).toContain("Reached maximum number of turns (2)");
  });

  it("yields an error result on an API error and then throws", async () => {
    const start = standIn.requests.length;
    const { messages, result, error } = await run("Please report overloaded");

    // Claude Code reports the API error as `subtype: "success"` with `is_error: true`.
    expect(result).toMatchObject({
      subtype: "success",
      is_error: true,
      api_error_status: 529,
      total_cost_usd: 0,
    });
    expect(messages.find((m) => m.type === "assistant")).toMatchObject({ error: "server_error" });
    expect(String(error)).toContain("API Error: 529 Overloaded");
    // `x-should-retry: false` on scripted errors: one request, no backoff.
    expect(standIn.requests.length - start).toBe(1);
  });
});
