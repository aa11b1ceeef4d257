/**
 * An action session's tools on the runner, with step commands run for real in the bubblewrap sandbox from the
 * runner's own checkout of the formula's commit: a step gets only its own secrets (in its environment, never
 * on a command line) and a fresh HOME, shows its output only where it holds no secret or the formula asks,
 * and a dangerous step needs the job's vault approval for exactly it, over exactly the files it approved.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionTools, MAX_PROGRESS_NOTES, type StepFiring } from "../../../runner/actions/action-tools.ts";
import { sandboxedStepCommand } from "../../../runner/actions/step-command.ts";
import { openStepSource, type StepSource } from "../../../runner/actions/step-source.ts";
import { Workspace } from "../../../runner/git/workspace.ts";
import { Secrets } from "../../../runner/redact.ts";
import { Sandbox } from "../../../runner/sandbox/session-sandbox.ts";
import { parseFormula } from "../../../src/formulas/formula.ts";
import type { ActionRun } from "../../../src/runner-api/contract.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";

const DEPLOY = "deploy-secret-value-1234567";
const OTHER = "other-secret-value-7654321";
const REPO = "acme/widgets";

const FORMULA = `---
name: rotate-token
version: 2
description: Rotate the deploy token
network: [api.example.com]
secrets: [DEPLOY_TOKEN, OTHER_TOKEN]
steps:
  - id: check
    description: Show what the step sees
    command: sh scripts/check.sh
    secrets: [DEPLOY_TOKEN]
    output: true
  - id: quiet
    description: The same, without asking for its output
    command: sh scripts/check.sh
    secrets: [DEPLOY_TOKEN]
  - id: public
    description: A step that holds no secret
    command: 'echo "hello from $(pwd)"'
  - id: rotate
    description: Revoke the old token
    command: sh scripts/rotate.sh --now
    dangerous: true
    secrets: [OTHER_TOKEN]
    output: true
  - id: report
    description: Say what happened
---
`;

/** What the default branch holds at the formula's commit. */
const SCRIPTS = {
  "scripts/check.sh": `env | sort; echo "token is $DEPLOY_TOKEN"; echo "cwd $(pwd)"; ls -A "$HOME" | wc -l
touch probe 2>/dev/null && echo "checkout writable" || echo "checkout read-only"\n`,
  "scripts/rotate.sh": "echo rotated with $OTHER_TOKEN; exit 3\n",
};

let root = "";
let upstream: Upstream;
let server: GitHttpServer;
let source: StepSource;
let commit = "";
/** The blob ids of the files step rotate names, at the formula's commit: what the vault approved. */
let rotateFiles: Record<string, string> = {};
const sandbox = new Sandbox({ mode: "bubblewrap", model: {}, secretFiles: [] });

beforeAll(async () => {
  root = await tempDir("action-steps");
  upstream = await Upstream.create(root);
  commit = await upstream.commit(SCRIPTS, "scripts");
  server = await startGitHttpServer(root, "bot", "token");
  const workspace = new Workspace({
    workDir: join(root, "work"),
    credential: { username: "bot", token: "token" },
  });
  await workspace.ensureMirror({ repoKey: REPO, remoteUrl: server.url("upstream.git") });
  source = await openStepSource(workspace, join(root, "work", "steps", "demo-1"), {
    repoKey: REPO,
    baseBranch: "main",
    commit,
  });
  rotateFiles = await source.fileIds(["scripts/rotate.sh"]);
});

afterAll(async () => {
  await source?.close();
  await server?.close();
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
    commit,
    approvedStep: null,
    approvedItem: null,
    approval: null,
    secrets: { DEPLOY_TOKEN: DEPLOY, OTHER_TOKEN: OTHER },
    ...patch,
  };
  const notes: [number, string][] = [];
  const fired: string[] = [];
  const ran: string[] = [];
  const runner = new Secrets();
  runner.add("runner-token-abcdefghij");
  const t = actionTools({
    action,
    runCommand: sandboxedStepCommand(sandbox, source),
    fileIds: (paths) => source.fileIds(paths),
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

const approved = (files = rotateFiles) => ({
  approvedStep: "rotate",
  approvedItem: "v1",
  approval: { commit, files },
});

const textOf = (reply: { content: { text: string }[] }) => reply.content.map((c) => c.text).join("\n");

describe("run_step", { timeout: 30_000 }, () => {
  it("runs the step from the runner's read-only checkout of the formula's commit, with a fresh HOME and its own secrets", async () => {
    const reply = await tools().runStep("check");
    const text = textOf(reply);
    expect(reply.isError).toBe(false);
    expect(text).toMatch(/^step check exited with code 0\./);
    expect(text).toContain("DEPLOY_TOKEN=***");
    expect(text).toContain("token is ***");
    expect(text).not.toContain("OTHER_TOKEN");
    expect(text).not.toContain(DEPLOY);
    expect(text).toContain(`cwd ${join(root, "work", "steps", "demo-1", "checkout")}`);
    expect(text).toContain("checkout read-only");
    // An empty HOME of its own, not the session's.
    expect(text).toMatch(/HOME=.*\/steps\/demo-1\/home-\w+\n/);
    expect(text).toMatch(/\n0\n/);
    // Nothing of the runner's environment: the step's is built from scratch.
    expect(text).not.toMatch(/ANTHROPIC|CONVEYOR_/);
    // The formula's hosts go through the egress proxy.
    expect(text).toMatch(/HTTPS_PROXY=http:\/\/127\.0\.0\.1:\d+/);
  });

  it("shows a step that holds secrets by its exit code only, unless the formula asks for its output", async () => {
    expect(textOf(await tools().runStep("quiet"))).toBe(
      "step quiet exited with code 0. It holds secrets: its output is not shown.",
    );
    const open = textOf(await tools().runStep("public"));
    expect(open).toMatch(
      /^step public exited with code 0\.\nIts output \(the end\):\nhello from \/.*checkout$/,
    );
  });

  it("never puts a secret on a command line", async () => {
    const run = sandboxedStepCommand(sandbox, source);
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
    expect(Object.keys(rotateFiles)).toEqual(["scripts/rotate.sh"]);
    const t = tools(approved());
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

  it("refuses an approved step whose files are not the ones the vault approved, before firing anything", async () => {
    const other = "b".repeat(40);
    const cases = [
      [{ "scripts/rotate.sh": other }, "scripts/rotate.sh changed"],
      [{}, "scripts/rotate.sh is new"],
      [{ ...rotateFiles, "scripts/lib.sh": other }, "scripts/lib.sh is gone"],
    ] as const;
    for (const [files, what] of cases) {
      const t = tools(approved(files));
      const reply = await t.runStep("rotate");
      expect(textOf(reply)).toBe(
        `step rotate does not run: ${what} since the vault approved it at commit ${commit.slice(0, 12)}. step rotate is dangerous and needs the vault's approval first. Stop now: write the phase file with the line PHASE:vault and a second line "Step: rotate", then end the session. Conveyor resumes this session once the vault decides.`,
      );
      expect(t.fired).toEqual([]);
      expect(t.ran).toEqual([]);
    }
    const unbound = tools({ ...approved(), approval: null });
    expect(textOf(await unbound.runStep("rotate"))).toMatch(
      /^step rotate does not run: the job carries no record of the files the vault approved\. /,
    );
    expect(unbound.fired).toEqual([]);
  });

  it("does not run a dangerous step the Worker will not fire (it ran under an earlier attempt)", async () => {
    const refusal = "v1 was approved by alice and has fired";
    const t = tools(approved(), async () => ({ fired: false, reason: refusal, retry: false }));
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
    const t = tools(approved(), async () => answers.shift() ?? { fired: true });
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
      'no step "nope" in formula rotate-token; its steps: check, quiet, public, rotate (dangerous), report',
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
