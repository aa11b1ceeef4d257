/**
 * Escalation triage end to end: an issue's session fails; the escalation starts the built-in `triage` agent,
 * which the real runner runs through the real Agent SDK binary against the scripted model stand-in. It reads
 * the escalation from its prompt and proposes a retry with a hint; the Worker checks the output, the issue
 * posts the proposal under the agent's name, and the maintainer's `/conveyor accept` starts a fresh session
 * that is given the hint, which then finishes the work.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { escalatedIssue } from "../../../demo/agents-script.ts";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { PROJECT } from "../../../demo/scenario.ts";
import { SAFE_OUTPUTS_SERVER } from "../../../runner/agents/safe-outputs.ts";
import { bash, text, use, write } from "../../support/model/script.ts";
import { until } from "../../support/until.ts";

const tool = (name: string) => `mcp__${SAFE_OUTPUTS_SERVER}__${name}`;
const phase = (lines: string) => bash(`printf '${lines}' > "$CONVEYOR_PHASE_FILE"`, "Write the phase");
const TITLE = "Add reverse(text)";
const FAILED = "cannot tell where the string helpers live";
const DIAGNOSIS = "The session looked for a helpers directory that this repository does not have.";
const HINT = "Helpers live in src/, one file per function, tested by test/*.test.js with node --test.";
const REVERSE = 'export function reverse(text) {\n  return [...text].reverse().join("");\n}\n';

/** Whether the triage's prompt carried the escalation's cause and the session's failure. */
let triageSaw = "";

let dataDir = "";
let demo: Demo | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-triage-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    script: [
      {
        // The fresh session the accepted proposal starts: given the hint, it does the work.
        when: new RegExp(HINT.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")),
        steps: [
          write("src/reverse.js", REVERSE),
          bash("git add -A && git commit -qm 'Add reverse (#reverse)'", "Commit"),
          phase("PHASE:awaiting_ci\\n"),
          text("reverse is in src/reverse.js."),
        ],
      },
      {
        when: /Implement issue #\d+ /,
        steps: [
          bash("ls lib/helpers", "Look for the helpers"),
          phase(`PHASE:failed\\nReason: ${FAILED}\\n`),
          text(`I ${FAILED}.`),
        ],
      },
      {
        when: /You triage one escalation/,
        steps: [
          (req) => {
            triageSaw = `${req.system}\n${req.lastUserText}`;
            return use(tool("propose_step"), {
              issue: escalatedIssue(req),
              diagnosis: DIAGNOSIS,
              step: { kind: "retry", hint: HINT },
            });
          },
          text("Proposed a retry with a hint."),
        ],
      },
      { forced: "report", steps: [use("report", { verdict: "APPROVE", summary: "ok", findings: [] })] },
    ],
  });
}, 180_000);

afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

type IssueView = {
  state: string;
  prNumber: number | null;
  proposal: { step: { kind: string } } | null;
};

async function issueView(number: number): Promise<IssueView | null> {
  if (!demo) throw new Error("no demo");
  const res = await fetch(`${demo.worker.url}/api/v1/projects/${PROJECT}/issues/${number}`, {
    headers: { authorization: `Bearer ${demo.adminToken}` },
  });
  return res.ok ? ((await res.json()) as IssueView) : null;
}

describe("an escalation's triage", { timeout: 240_000 }, () => {
  it("answers with a proposed step, which the maintainer's /conveyor accept carries out", async () => {
    if (!demo) throw new Error("no demo");
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const { number } = await maintainer.createIssue({
      title: TITLE,
      body: "Add `reverse(text)`: the text's characters in reverse order. With tests.",
      labels: [],
    });
    await until(`#${number} mirrored`, () => (demo?.d1.openMirrored(PROJECT).includes(number) ? true : null));
    await maintainer.addLabels(number, ["backlog"]);

    const proposed = await until(`#${number}'s triage`, async () => {
      const view = await issueView(number);
      return view?.state === "escalated" && view.proposal ? view : null;
    });
    expect(proposed.proposal?.step.kind).toBe("retry");
    // The triage read the escalation: its cause and the session's own reason.
    expect(triageSaw).toContain('"cause":"session_failed"');
    expect(triageSaw).toContain(FAILED);

    const triage = await until(
      `#${number}'s triage comment`,
      async () =>
        (await maintainer.listComments(number)).find((c) =>
          c.body.startsWith("**Triage of this escalation.**"),
        ) ?? null,
    );
    expect(triage.body).toContain("Proposed next step: **retry with a hint**");
    expect(triage.body).toContain("`/conveyor accept`");
    expect(triage.body).toMatch(/The agent `triage` \(run `run_[0-9a-f]+`\)/);
    expect(triage.body).toContain(`> **What went wrong:** ${DIAGNOSIS}`);
    expect(triage.body).toContain(`> **Hint for the next session:** ${HINT}`);

    await maintainer.comment(number, "/conveyor accept");
    // The fresh session, given the hint, pushed its work: its pull request is open, the issue past the retry.
    const moved = await until(`#${number}'s pull request after the retry`, async () => {
      const view = await issueView(number);
      return view?.prNumber && view.state !== "escalated" ? view : null;
    });
    expect(moved.proposal).toBeNull();
    const pull = await maintainer.getPullRequest(moved.prNumber ?? 0);
    expect(pull.headRef).toBe(`conveyor/${number}`);
  });
});
