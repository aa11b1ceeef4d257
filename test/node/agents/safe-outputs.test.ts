/**
 * The safe-output tools, through the real Agent SDK binary in the bubblewrap sandbox against the model
 * stand-in: the agent sees only the tools its definition declares, and every call is parsed before it is
 * recorded.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactedOutput } from "../../../runner/agents/run.ts";
import { SAFE_OUTPUTS_SERVER, safeOutputs } from "../../../runner/agents/safe-outputs.ts";
import { claudeSession } from "../../../runner/drivers/claude-session.ts";
import { Logger } from "../../../runner/log.ts";
import { Secrets } from "../../../runner/redact.ts";
import { Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { text, use } from "../../support/model/script.ts";
import { type ModelStandIn, startModelStandIn } from "../../support/model/server.ts";
import { tempDir } from "../git/support.ts";

const tool = (name: string) => `mcp__${SAFE_OUTPUTS_SERVER}__${name}`;

let root = "";
let standIn: ModelStandIn;

beforeAll(async () => {
  root = await tempDir("safe-outputs");
  for (const dir of ["wt", "home"]) await mkdir(join(root, dir), { recursive: true });
  standIn = await startModelStandIn({
    script: [
      {
        when: /groom the backlog/,
        steps: [
          use(tool("create_issue"), { title: "Split #4", body: "It is two changes.", labels: ["tech-debt"] }),
          use(tool("comment"), { issue: 0, body: "issue zero does not exist" }),
          use(tool("close_issue"), { issue: 3, reason: "not declared by this agent" }),
          use(tool("noop"), { reason: "nothing else to do" }),
          text("Done."),
        ],
      },
    ],
  });
});

afterAll(async () => {
  await standIn.close();
  await rm(root, { recursive: true, force: true });
});

describe("safe outputs in a sandboxed session", { timeout: 90_000 }, () => {
  it("offers the declared tools only and records the valid requests", async () => {
    const outputs = safeOutputs(["create_issue", "comment"]);
    const sandbox = new Sandbox({
      mode: "bubblewrap",
      model: { baseUrl: standIn.url, apiKey: "sk-ant-safe-outputs-test" },
      secretFiles: [],
    });
    const home = join(root, "home");
    const run = await claudeSession({
      sandbox,
      place: { worktree: join(root, "wt"), writable: [home], readOnly: [] },
      prompt: "Please groom the backlog.",
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
      },
      allowedTools: ["Read", ...outputs.toolNames],
      mcpServers: { [SAFE_OUTPUTS_SERVER]: outputs.server },
      projectSettings: false,
      allowedDomains: [],
      budgetUsd: 1,
      maxTurns: 10,
      signal: new AbortController().signal,
      log: new Logger({ level: "error", secrets: new Secrets() }),
      onSession: () => {},
      onUsage: () => {},
      onActivity: () => {},
    });
    expect(run.result?.subtype).toBe("success");

    expect(outputs.requests()).toEqual([
      { type: "create_issue", title: "Split #4", body: "It is two changes.", labels: ["tech-debt"] },
      { type: "noop", reason: "nothing else to do" },
    ]);
    const offered = new Set(
      standIn.requests.flatMap((r) =>
        ((r.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name),
      ),
    );
    expect(offered).toContain(tool("create_issue"));
    expect(offered).toContain(tool("comment"));
    expect(offered).not.toContain(tool("close_issue"));
  });
});

describe("the outputs a run reports", () => {
  it("carry none of the runner's secrets, in any text a review holds", () => {
    const secrets = new Secrets();
    secrets.add("tok-7f3a9c1e5b2d4680");
    const review = redactedOutput(
      {
        type: "submit_review",
        pr: 3,
        verdict: "REQUEST_CHANGES",
        summary: "The token tok-7f3a9c1e5b2d4680 is printed.",
        findings: [
          {
            severity: "major",
            file: "src/tok-7f3a9c1e5b2d4680.ts",
            line: 1,
            comment: "It logs tok-7f3a9c1e5b2d4680.",
            inScope: true,
          },
        ],
      },
      (text) => secrets.redact(text),
    );
    expect(JSON.stringify(review)).not.toContain("tok-7f3a9c1e5b2d4680");
    expect(review).toMatchObject({ type: "submit_review", pr: 3, verdict: "REQUEST_CHANGES" });
  });
});
