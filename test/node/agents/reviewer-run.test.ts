/**
 * The reviewer on a runner, end to end: a person opens a pull request on the local forge, its webhook reaches
 * the Worker (wrangler dev) of a project that has the reviewer review people's pull requests, the real runner
 * checks out the pull request's head and runs the real Agent SDK binary in its sandbox against the scripted
 * model stand-in; the session reads the diff from its context files and submits a review, which the Worker
 * checks and posts on the forge once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { REPO } from "../../../demo/scenario.ts";
import { SAFE_OUTPUTS_SERVER } from "../../../runner/agents/safe-outputs.ts";
import { bash, read, type ScriptRequest, text, use } from "../../support/model/script.ts";
import { pushFiles } from "../../support/services/git-push.ts";

const CHANGED_LINE = "export const shout = (s) => s.toUpperCase() + '!!';";

let dataDir = "";
let demo: Demo | undefined;
/** What the session saw, as the stand-in's script read it from the tool results it was sent. */
const seen = { diff: "", git: "" };
let pr = 0;

const lastResult = (req: ScriptRequest) => req.toolResults.map((r) => r.text).join("\n");

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-reviewer-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    settings: { critic: { runsOn: "runner", reviewHumanPullRequests: true } },
    script: [
      {
        when: /You are the reviewer of one pull request/,
        steps: [
          read(".conveyor/context/diff.patch"),
          (req) => {
            seen.diff = lastResult(req);
            return bash("git status --porcelain; git rev-parse HEAD", "Where the worktree is");
          },
          (req) => {
            seen.git = lastResult(req);
            const found = seen.diff.includes(CHANGED_LINE);
            return use(`mcp__${SAFE_OUTPUTS_SERVER}__submit_review`, {
              pr,
              verdict: found ? "REQUEST_CHANGES" : "BLOCK",
              summary: found ? "Shouting adds two exclamation marks." : "The diff was not readable.",
              findings: found
                ? [
                    {
                      severity: "minor",
                      file: "src/shout.js",
                      line: 1,
                      comment: "One exclamation mark is enough.",
                      inScope: true,
                    },
                  ]
                : [],
            });
          },
          text("Reviewed."),
        ],
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function until<T>(what: string, check: () => Promise<T | null> | T | null, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("the reviewer on a runner", { timeout: 150_000 }, () => {
  it("reads the pull request's diff at its head and its review lands on the forge once", async () => {
    if (!demo) throw new Error("no demo");
    const { maintainer } = demo.sample.accounts;
    const client = demo.sample.client(maintainer);
    const head = await pushFiles({
      cloneUrl: demo.sample.forge.cloneUrl(REPO, maintainer.token),
      branch: "shout",
      base: "main",
      files: { "src/shout.js": `${CHANGED_LINE}\n` },
      message: "Add shout",
    });
    pr = (await client.createPullRequest({ head: "shout", base: "main", title: "Add shout", body: "Loud." }))
      .number;

    const reviews = await until("the reviewer's review", async () => {
      const found = await client.listReviews(pr);
      return found.length > 0 ? found : null;
    });
    expect(reviews).toHaveLength(1);
    expect(reviews[0]?.body).toContain("**Critic: REQUEST_CHANGES**");
    expect(reviews[0]?.body).toContain("One exclamation mark is enough.");
    // The session read the diff from its context files, at the pull request's head, with them out of git's view.
    expect(seen.diff).toContain(CHANGED_LINE);
    expect(seen.git).toContain(head);
    expect(seen.git).not.toContain(".conveyor");
  });
});
