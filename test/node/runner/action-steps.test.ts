/**
 * An action session's tools on the runner, with step commands run for real in the bubblewrap sandbox: a
 * step gets only its own secrets (in its environment, never on a command line), a dangerous step needs the
 * job's vault approval for exactly it, and what the agent is shown is redacted of every secret.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionTools, MAX_PROGRESS_NOTES, type StepFiring } from "../../../runner/actions/action-tools.ts";
import { sandboxedStepCommand } from "../../../runner/actions/step-command.ts";
import { Secrets } from "../../../runner/redact.ts";
import { Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { parseFormula } from "../../../src/formulas/formula.ts";
import type { ActionRun } from "../../../src/runner-api/contract.ts";
import { tempDir } from "../git/support.ts";

const DEPLOY = "deploy-secret-value-1234567";
const OTHER = "other-secret-value-7654321";

const FORMULA = `---
name: rotate-token
version: 2
description: Rotate the deploy token
network: [api.example.com]
secrets: [DEPLOY_TOKEN, OTHER_TOKEN]
steps:
  - id: check
    description: Show what the step sees
    command: 'env | sort; echo "token is $DEPLOY_TOKEN"'
    secrets: [DEPLOY_TOKEN]
  - id: argv
    description: Every command line in the step's sandbox
    command: 'cat /proc/[0-9]*/cmdline | tr "\\0" " "'
    secrets: [DEPLOY_TOKEN]
  - id: rotate
    description: Revoke the old token
    command: 'echo rotated with $OTHER_TOKEN; exit 3'
    dangerous: true
    secrets: [OTHER_TOKEN]
  - id: report
    description: Say what happened
---
`;

let root = "";
const sandbox = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });

beforeAll(async () => {
  root = await tempDir("action-steps");
  await mkdir(join(root, "wt"), { recursive: true });
  await mkdir(join(root, "home"), { recursive: true });
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function formula() {
  const parsed = parseFormula("rotate-token", FORMULA);
  if (!parsed.ok) throw new Error(parsed.error);
  const { guidance, ...rest } = parsed.value;
  return { formula: rest, guidance };
}

/** The session's tools; `fire` answers as the Worker would when a dangerous step is about to run. */
function tools(
  patch: Partial<ActionRun> = {},
  fire: (id: string) => Promise<StepFiring> = async () => ({ fired: true }),
) {
  const action: ActionRun = {
    ...formula(),
    approvedStep: null,
    approvedItem: null,
    secrets: { DEPLOY_TOKEN: DEPLOY, OTHER_TOKEN: OTHER },
    ...patch,
  };
  const notes: [number, string][] = [];
  const fired: string[] = [];
  const ran: string[] = [];
  const runner = new Secrets();
  runner.add("runner-token-abcdefghij");
  const runCommand = sandboxedStepCommand(
    sandbox,
    { worktree: join(root, "wt"), writable: [join(root, "home")], readOnly: [] },
    { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(root, "home") },
  );
  const t = actionTools({
    action,
    runCommand,
    onProgress: (seq, text) => notes.push([seq, text]),
    redact: (text) => runner.redact(text),
    fire: (id) => {
      fired.push(id);
      return fire(id);
    },
    onStep: (id) => ran.push(id),
    signal: new AbortController().signal,
  });
  return { ...t, notes, fired, ran };
}

const textOf = (reply: { content: { text: string }[] }) => reply.content.map((c) => c.text).join("\n");

describe("run_step", { timeout: 30_000 }, () => {
  it("gives the step its own secrets only, and shows the agent their values redacted", async () => {
    const reply = await tools().runStep("check");
    const text = textOf(reply);
    expect(reply.isError).toBe(false);
    expect(text).toMatch(/^step check exited with code 0\./);
    expect(text).toContain("DEPLOY_TOKEN=***");
    expect(text).toContain("token is ***");
    expect(text).not.toContain("OTHER_TOKEN");
    expect(text).not.toContain(DEPLOY);
    // Nothing of the runner's environment: the step's is built from scratch.
    expect(text).not.toMatch(/ANTHROPIC|CONVEYOR_/);
    // The formula's hosts go through the egress proxy.
    expect(text).toMatch(/HTTPS_PROXY=http:\/\/127\.0\.0\.1:\d+/);
  });

  it("never puts a secret on a command line", async () => {
    const run = sandboxedStepCommand(
      sandbox,
      { worktree: join(root, "wt"), writable: [], readOnly: [] },
      { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    );
    const result = await run({
      command: 'cat /proc/[0-9]*/cmdline | tr "\\0" " "; echo; echo "$DEPLOY_TOKEN" | wc -c',
      secrets: { DEPLOY_TOKEN: DEPLOY },
      allowedHosts: [],
      signal: new AbortController().signal,
    });
    expect(result.exitCode).toBe(0);
    // The raw output, before any redaction: the command lines hold the script, not the value.
    expect(result.output).toContain("/bin/sh -c");
    expect(result.output).not.toContain(DEPLOY);
    expect(result.output.trim().split("\n").at(-1)?.trim()).toBe(String(DEPLOY.length + 1));
    // No allowed hosts: no proxy, no network.
    const env = await run({
      command: "env",
      secrets: {},
      allowedHosts: [],
      signal: new AbortController().signal,
    });
    expect(env.output).not.toContain("HTTPS_PROXY");
  });

  it("refuses a dangerous step without the job's approval for exactly it, and tells the agent to stop", async () => {
    for (const approvedStep of [null, "check"]) {
      const reply = await tools({ approvedStep }).runStep("rotate");
      expect(reply.isError).toBe(true);
      expect(textOf(reply)).toContain("needs the vault's approval first");
      expect(textOf(reply)).toContain('PHASE:vault and a second line "Step: rotate"');
    }
  });

  it("runs an approved dangerous step once, after the Worker fired its approval", async () => {
    const t = tools({ approvedStep: "rotate", approvedItem: "v1" });
    const first = await t.runStep("rotate");
    expect(first.isError).toBe(true);
    expect(textOf(first)).toBe("step rotate exited with code 3.\nIts output (the end):\nrotated with ***");
    const again = await t.runStep("rotate");
    expect(textOf(again)).toMatch(/already ran under its vault approval/);
    expect(t.fired).toEqual(["rotate"]);
    expect(t.ran).toEqual(["rotate"]);
    // A step that needs no approval spends none.
    await t.runStep("check");
    expect(t.fired).toEqual(["rotate"]);
  });

  it("does not run a dangerous step the Worker will not fire (it ran under an earlier attempt)", async () => {
    const refusal = "v1 was approved by alice and has fired";
    const t = tools({ approvedStep: "rotate", approvedItem: "v1" }, async () => ({
      fired: false,
      reason: refusal,
      retry: false,
    }));
    const reply = await t.runStep("rotate");
    expect(reply.isError).toBe(true);
    expect(textOf(reply)).toMatch(
      new RegExp(`^step rotate did not run: ${refusal}\\. step rotate is dangerous`),
    );
    expect(t.ran).toEqual([]);
    // Asked again, the Worker refuses again: nothing runs.
    expect(textOf(await t.runStep("rotate"))).toMatch(/^step rotate did not run: v1 was approved/);
    expect(t.fired).toEqual(["rotate", "rotate"]);
    expect(t.ran).toEqual([]);
  });

  it("runs it on a later call when the Worker could not be asked the first time", async () => {
    const answers: StepFiring[] = [
      { fired: false, reason: "Conveyor could not be asked (timed out)", retry: true },
      { fired: true },
    ];
    const t = tools(
      { approvedStep: "rotate", approvedItem: "v1" },
      async () => answers.shift() ?? { fired: true },
    );
    const first = await t.runStep("rotate");
    expect(textOf(first)).toBe(
      "step rotate did not run: Conveyor could not be asked (timed out). call run_step again in a moment",
    );
    expect(t.ran).toEqual([]);
    const second = await t.runStep("rotate");
    expect(textOf(second)).toMatch(/^step rotate exited with code 3\./);
    expect(t.ran).toEqual(["rotate"]);
  });

  it("refuses an unknown step, a step without a command, and a secret the project lacks", async () => {
    expect(textOf(await tools().runStep("nope"))).toBe(
      'no step "nope" in formula rotate-token; its steps: check, argv, rotate (dangerous), report',
    );
    expect(textOf(await tools().runStep("report"))).toMatch(/has no command for Conveyor to run/);
    const lacking = await tools({ secrets: { OTHER_TOKEN: OTHER } }).runStep("check");
    expect(textOf(lacking)).toBe(
      "step check needs the project secret DEPLOY_TOKEN, which the project does not provide: escalate",
    );
  });
});

describe("progress", () => {
  it("numbers the notes and redacts the job's and the runner's secrets", () => {
    const t = tools();
    expect(t.progress(`checked ${DEPLOY} with runner-token-abcdefghij`).isError).toBe(false);
    expect(t.progress("  ").isError).toBe(true);
    t.progress("rotated");
    expect(t.notes).toEqual([
      [1, "checked *** with ***"],
      [2, "rotated"],
    ]);
  });

  it("caps the notes a session posts", () => {
    const t = tools();
    for (let i = 0; i < MAX_PROGRESS_NOTES; i++) t.progress(`note ${i}`);
    expect(textOf(t.progress("one more"))).toMatch(/^refused: at most/);
    expect(t.notes).toHaveLength(MAX_PROGRESS_NOTES);
  });
});
