/**
 * Action issues end to end: the maintainer files an issue labelled `action` that names a formula kept on the
 * default branch; the Worker (wrangler dev) queues it with the formula, the real runner runs the real Agent SDK
 * binary in its sandbox against the scripted model stand-in, and the session's tools do the rest — progress
 * notes become one comment each, `run_step` runs the step's command on the runner with the step's secret only
 * (shown to the agent redacted), a dangerous step stops the session for the vault, and a session that finishes
 * its formula closes the issue with its summary. No pull request is opened. The dangerous step is a vault item:
 * a non-writer's approval is refused, a maintainer's `/conveyor approve <id>` resumes the same session, which
 * runs the step and finishes; an item nobody decides expires (short here) and the action stops, saying so.
 * A hostile session attacks its steps (./support/action-attacks.ts): steps run from the runner's checkout of
 * the formula's commit, and an approved step whose file changed on the default branch since is refused.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { PROJECT, REPO } from "../../../demo/scenario.ts";
import { ACTION_SERVER } from "../../../runner/actions/action-tools.ts";
import { bash, type ScriptRequest, type Turn, text, use } from "../../support/model/script.ts";
import { pushFiles } from "../../support/services/git-push.ts";
import { until } from "../../support/until.ts";
import * as ATTACKS from "./support/action-attacks.ts";

const tool = (name: string) => `mcp__${ACTION_SERVER}__${name}`;
const DEPLOY_TOKEN = "deploy-token-e2e-0123456789";
/** Long enough for the approval test's decisions; the expiry test shortens it for its own item. */
const VAULT_EXPIRY_MS = 120_000;
const SHORT_EXPIRY_MS = 3_000;
const phase = (lines: string) => bash(`printf '${lines}' > "$CONVEYOR_PHASE_FILE"`, "Write the phase");

const FORMULAS = {
  ...ATTACKS.formulas,
  "rotate-token": `---
name: rotate-token
version: 1
description: Rotate the deploy token
secrets: [DEPLOY_TOKEN]
steps:
  - id: check
    description: Check the current token
    command: 'echo "token length \${#DEPLOY_TOKEN}: $DEPLOY_TOKEN"'
    secrets: [DEPLOY_TOKEN]
    output: true
  - id: rotate
    description: Revoke the old token and issue a new one
    command: 'echo rotated'
    dangerous: true
    secrets: [DEPLOY_TOKEN]
---
Post the outcome of each step.
`,
  "wipe-cache": `---
name: wipe-cache
version: 1
description: Wipe the CDN cache
steps:
  - id: wipe
    description: Purge everything
    command: 'echo purged'
    dangerous: true
---
`,
  "say-hello": `---
name: say-hello
version: 1
description: Greet the team
steps:
  - id: greet
    description: Print a greeting
    command: 'echo hello from $(pwd | wc -c) chars deep'
---
`,
};

/** A comment's text without the marker Conveyor adds to post each comment once. */
const bodyOf = (comment: { body: string }) => comment.body.replace(/\n\n<!-- conveyor:[0-9a-f]+ -->$/, "");

/** The session's words as Conveyor posts them: quoted apart under its name. */
const quoted = (text: string) =>
  `Its session wrote:\n\n${text
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n")}`;
const note = (text: string) => `**Progress:**\n\n${quoted(text)}`;
const done = (text: string) => `**The action is done.**\n\n${quoted(text)}`;

/** The progress note that quotes what the last tool answered. */
const quoteLastResult = (req: ScriptRequest): Turn =>
  use(tool("progress"), { text: `check: ${req.toolResults.at(-1)?.text ?? "(nothing)"}` });

let dataDir = "";
let demo: Demo | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-action-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    settings: { actionSecrets: { DEPLOY_TOKEN }, vault: { expiryMs: VAULT_EXPIRY_MS } },
    script: [
      {
        when: /follows the formula rotate-token/,
        steps: [
          use(tool("progress"), { text: "Starting the rotation." }),
          use(tool("run_step"), { id: "check" }),
          quoteLastResult,
          use(tool("run_step"), { id: "rotate" }),
          phase("PHASE:vault\\nStep: rotate\\n"),
          text("Waiting for the vault to approve rotate."),
        ],
      },
      {
        when: /The vault approved step rotate/,
        steps: [
          use(tool("run_step"), { id: "rotate" }),
          (req) => use(tool("progress"), { text: `rotate: ${req.toolResults.at(-1)?.text ?? "(nothing)"}` }),
          phase("PHASE:done\\n"),
          text("Rotated the deploy token; the old one is revoked."),
        ],
      },
      ATTACKS.askingVault(tool, phase, "wipe-cache", "wipe"),
      // The vault's classifier leaves every step to a human.
      {
        forced: "vault_verdict",
        steps: [use("vault_verdict", { verdict: "ask", reason: "a human decides" })],
      },
      ...ATTACKS.rules(tool, phase),
      {
        when: /follows the formula say-hello/,
        steps: [
          use(tool("run_step"), { id: "greet" }),
          use(tool("progress"), { text: "Greeted." }),
          phase("PHASE:done\\n"),
          text("Greeted the team; nothing else to do."),
        ],
      },
    ],
  });
  await pushFormulas(demo);
}, 180_000);

afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** The maintainer commits the formulas and their scripts to the default branch. */
async function pushFormulas(d: Demo): Promise<void> {
  const formulas = Object.entries(FORMULAS).map(([name, body]) => [`.conveyor/formulas/${name}.md`, body]);
  await commitToMain(d, { ...Object.fromEntries(formulas), ...ATTACKS.scripts }, "Formulas");
}

/** A commit of `files` (scripts executable) on the default branch, as a maintainer pushes it. */
const commitToMain = (d: Demo, files: Record<string, string>, message: string) =>
  pushFiles({
    cloneUrl: d.sample.forge.cloneUrl(REPO, d.sample.accounts.maintainer.token),
    branch: "main",
    base: "main",
    files,
    executable: Object.keys(files).filter((path) => path.endsWith(".sh")),
    message,
  });

type IssueView = { state: string; reason: string | null; prNumber: number | null };

async function issueView(number: number): Promise<IssueView | null> {
  if (!demo) throw new Error("no demo");
  const res = await fetch(`${demo.worker.url}/api/v1/projects/${PROJECT}/issues/${number}`, {
    headers: { authorization: `Bearer ${demo.adminToken}` },
  });
  return res.ok ? ((await res.json()) as IssueView) : null;
}

async function fileAction(title: string, formula: string): Promise<number> {
  if (!demo) throw new Error("no demo");
  const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
  await maintainer.ensureLabels([{ name: "action", color: "0052cc", description: "operational work" }]);
  const { number } = await maintainer.createIssue({
    title,
    body: `Please do it.\n\nFormula: ${formula}\n`,
    labels: ["action"],
  });
  await until(`#${number} mirrored`, () => (demo?.d1.openMirrored(PROJECT).includes(number) ? true : null));
  await maintainer.addLabels(number, ["backlog"]);
  return number;
}

/** The vault item the issue's notice names (the `nth`, from 0), once the vault holds its step. */
async function vaultItemNamed(number: number, nth = 0): Promise<string> {
  if (!demo) throw new Error("no demo");
  const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
  return until(`#${number}'s vault item ${nth} named`, async () => {
    const items = (await maintainer.listComments(number)).flatMap((comment) => {
      const item = /waits for the vault \(item (v\d+)\)/.exec(comment.body)?.[1];
      return item ? [item] : [];
    });
    return items[nth] ?? null;
  });
}

/** The issue's comments (without markers) once the action is done and its closing comment posted. */
async function commentsOnceDone(number: number): Promise<string[]> {
  await until("the action is done", inState(number, "done"));
  const maintainer = demo?.sample.client(demo.sample.accounts.maintainer);
  return until("its closing comment", async () => {
    const bodies = ((await maintainer?.listComments(number)) ?? []).map(bodyOf);
    return bodies.some((body) => body.startsWith("**The action is done.**")) ? bodies : null;
  });
}

/** The project's vault items in `state`. */
async function vaultItems(state: string) {
  const res = await fetch(`${demo?.worker.url}/api/v1/projects/${PROJECT}/vault?state=${state}`, {
    headers: { authorization: `Bearer ${demo?.adminToken}` },
  });
  const { items } = (await res.json()) as {
    items: { id: string; audit: { action: string; reason?: string }[] }[];
  };
  return items;
}

/** Everything the model was sent in the sessions of one formula: prompts, tool results, all. */
const modelSaw = (formula: string) =>
  (demo?.model?.requests ?? [])
    .map((request) => JSON.stringify(request.body))
    .filter((body) => body.includes(`follows the formula ${formula}`))
    .join("\n");

const inState =
  (number: number, state: string, expected = false) =>
  async () => {
    const view = await issueView(number);
    if (!expected && view && view.state !== state && ["escalated", "abandoned"].includes(view.state)) {
      throw new Error(`#${number} is ${view.state}: ${view.reason}`);
    }
    return view?.state === state ? view : null;
  };

describe("action issues", { timeout: 240_000 }, () => {
  it("run their formula, post progress once, stop at a dangerous step, and go on when a writer approves it", async () => {
    if (!demo) throw new Error("no demo");
    const number = await fileAction("Rotate the deploy token", "rotate-token");
    const view = await until("the action waits for the vault", inState(number, "awaiting_approval"));
    expect(view.reason).toBe("step rotate waits for the vault's decision");
    expect(view.prNumber).toBeNull();

    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const progress = await until("both progress notes", async () => {
      const notes = (await maintainer.listComments(number)).filter((c) => c.body.startsWith("**Progress:**"));
      return notes.length >= 2 ? notes : null;
    });
    expect(progress.map(bodyOf)).toEqual([
      note("Starting the rotation."),
      // The step had the secret (its length), and the agent saw it only redacted.
      note(
        `check: step check exited with code 0.\nIts output (the end):\ntoken length ${DEPLOY_TOKEN.length}: ***`,
      ),
    ]);
    const all = (await maintainer.listComments(number)).map((c) => c.body).join("\n");
    expect(all).not.toContain(DEPLOY_TOKEN);

    const item = await vaultItemNamed(number);
    // Not a writer: refused, and the step still waits.
    const outsider = demo.sample.forge.createUser(`outsider-${Date.now().toString(36)}`);
    await demo.sample.client(outsider).comment(number, `/conveyor approve ${item}`);
    await until("the refusal", async () =>
      (await maintainer.listComments(number)).some((c) => c.body.startsWith(`@${outsider.login} only users`))
        ? true
        : null,
    );
    expect((await issueView(number))?.state).toBe("awaiting_approval");

    await maintainer.comment(number, `/conveyor approve ${item}`);
    await until("the action is done", inState(number, "done"));
    const closed = await until("the issue closed", async () => {
      const current = await maintainer.getIssue(number);
      return current.state === "closed" ? current : null;
    });
    expect(closed.state).toBe("closed");
    const bodies = (await maintainer.listComments(number)).map(bodyOf);
    // The same session went on: the approved step ran once, on the runner; it holds a secret and the formula
    // does not ask for its output, so the session was told its exit code only.
    expect(bodies).toContain(
      note("rotate: step rotate exited with code 0. It holds secrets: its output is not shown."),
    );
    expect(bodies).toContain(done("Rotated the deploy token; the old one is revoked."));
    expect(bodies.filter((b) => b.startsWith("**The action is done.**"))).toHaveLength(1);
    // The runner fired the approval on the Worker right before the step ran: spent, once.
    const fired = await until(
      `${item} fired`,
      async () => (await vaultItems("fired")).find((i) => i.id === item) ?? null,
    );
    expect(fired.audit.at(-1)).toMatchObject({
      action: "fired",
      reason: expect.stringMatching(/^run by job /),
    });
  });

  it("stop with a comment when nobody decides on the dangerous step before its item expires", async () => {
    if (!demo) throw new Error("no demo");
    // An item takes the expiry the settings say when it is requested: short for this one.
    const res = await fetch(`${demo.worker.url}/api/v1/projects/${PROJECT}/settings`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${demo.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ key: "vault.expiryMs", value: SHORT_EXPIRY_MS }),
    });
    expect(res.status).toBe(200);
    const number = await fileAction("Wipe the cache", "wipe-cache");
    const item = await vaultItemNamed(number);
    const view = await until(
      "the action stops",
      inState(number, "abandoned", true),
      SHORT_EXPIRY_MS + 60_000,
    );
    expect(view.reason).toBe(
      `the action stops: nobody decided on step wipe before its vault item ${item} expired`,
    );
    // Posted by the abandonment's effect, a moment after the state changed.
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const stop = `The action stops: nobody decided on step wipe before its vault item ${item} expired.`;
    await until("the comment saying so", async () =>
      (await maintainer.listComments(number)).map(bodyOf).includes(stop) ? true : null,
    );
  });

  it("run a step from the formula's commit: a rewritten script or a planted dotfile does not run, nor does the secret come back", async () => {
    if (!demo) throw new Error("no demo");
    const number = await fileAction("Check the token", "token-check");
    const comments = (await commentsOnceDone(number)).join("\n");
    const saw = modelSaw("token-check");
    expect({ rewritten: saw.includes("REWRITTEN-RAN"), planted: saw.includes("FSMONITOR-RAN") }).toEqual({
      rewritten: false,
      planted: false,
    });
    expect(
      ATTACKS.encoded(DEPLOY_TOKEN).filter((leak) => saw.includes(leak) || comments.includes(leak)),
    ).toEqual([]);
    // The default branch's script ran, and git's status in the runner's clean checkout: not what the session made.
    const shown = (step: string, output: string) =>
      saw.includes(`step ${step} exited with code 0.\\nIts output (the end):\\n${output}`);
    expect({ check: shown("check", "token is set"), status: shown("status", "clean") }).toEqual({
      check: true,
      status: true,
    });
    expect(saw.includes("end of loot")).toBe(true);
  });

  it("refuse an approved step whose file changed on the default branch since, and run the one approved next", async () => {
    if (!demo) throw new Error("no demo");
    const number = await fileAction("Swap the key", "swap-key");
    const first = await vaultItemNamed(number);
    // After the vault was asked, a writer changes the script the step runs.
    await commitToMain(demo, { "scripts/swap.sh": ATTACKS.swapV2 }, "swap v2");
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    await maintainer.comment(number, `/conveyor approve ${first}`);
    // Refused before firing: the session asks the vault again, for the step as it is now.
    const second = await vaultItemNamed(number, 1);
    expect(modelSaw("swap-key")).toMatch(
      /step swap does not run: scripts\/swap\.sh changed since the vault approved it at commit [0-9a-f]{12}\./,
    );
    await maintainer.comment(number, `/conveyor approve ${second}`);
    const bodies = await commentsOnceDone(number);
    // The default branch's new script ran, not the one the session edited in its worktree.
    expect(bodies).toContain(note("swap: step swap exited with code 0.\nIts output (the end):\nswapped v2"));
    const all = `${modelSaw("swap-key")}\n${bodies.join("\n")}`;
    expect(all).not.toContain("REWRITTEN-RAN");
    expect(ATTACKS.encoded(DEPLOY_TOKEN).filter((leak) => all.includes(leak))).toEqual([]);
    // Only the second approval was spent. The list is D1's record, a moment behind the vault: read once it
    // shows the second fired (the first was settled before, and is recorded in order before it).
    const fired = await until(`${second} recorded fired`, async () => {
      const ids = (await vaultItems("fired")).map((item) => item.id);
      return ids.includes(second) ? ids : null;
    });
    expect([first, second].filter((id) => fired.includes(id))).toEqual([second]);
  });

  it("close the issue with the session's summary when the formula is done", async () => {
    if (!demo) throw new Error("no demo");
    const number = await fileAction("Greet the team", "say-hello");
    await until("the action is done", inState(number, "done"));
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const issue = await until("the issue closed", async () => {
      const current = await maintainer.getIssue(number);
      return current.state === "closed" ? current : null;
    });
    expect(issue.state).toBe("closed");
    const bodies = (await maintainer.listComments(number)).map(bodyOf);
    expect(bodies).toContain(note("Greeted."));
    expect(bodies).toContain(done("Greeted the team; nothing else to do."));
  });

  it("answer an action issue that names no formula, and do not start it", async () => {
    if (!demo) throw new Error("no demo");
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const { number } = await maintainer.createIssue({
      title: "Do something",
      body: "No formula.",
      labels: ["action"],
    });
    await until(`#${number} mirrored`, () => (demo?.d1.openMirrored(PROJECT).includes(number) ? true : null));
    await maintainer.addLabels(number, ["backlog"]);
    const answer = await until("the answer", async () => {
      const found = (await maintainer.listComments(number)).find((c) =>
        c.body.startsWith("Conveyor cannot start"),
      );
      return found ?? null;
    });
    expect(answer.body).toMatch(/it is labelled action but names no formula/);
    expect((await issueView(number))?.state).toBe("new");
  });
});
