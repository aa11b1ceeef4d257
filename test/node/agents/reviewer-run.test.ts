/**
 * The reviewer on a runner, end to end: a person opens a pull request on the local forge, its webhook reaches
 * the Worker (wrangler dev) of a project that has the reviewer review people's pull requests, the real runner
 * checks out the pull request's head and runs the real Agent SDK binary in its sandbox against the scripted
 * model stand-in; the session reads the diff from its context files and submits a review, which the Worker
 * checks and posts on the forge once. The same for an issue's pull request, in a Worker with no model key.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_SCRIPT } from "../../../demo/model-script.ts";
import { type Demo, startDemo } from "../../../demo/orchestrator.ts";
import { PROJECT, REPO } from "../../../demo/scenario.ts";
import { SAFE_OUTPUTS_SERVER } from "../../../runner/agents/safe-outputs.ts";
import { bash, read, type ScriptRequest, text, use } from "../../support/model/script.ts";
import { pushFiles } from "../../support/services/git-push.ts";
import { until } from "../../support/until.ts";

const CHANGED_LINE = "export const shout = (s) => s.toUpperCase() + '!!';";

let dataDir = "";
let demo: Demo | undefined;
/** What the session saw, as the stand-in's script read it from the tool results it was sent. */
const seen = { diff: [] as string[], git: [] as string[] };

const lastResult = (req: ScriptRequest) => req.toolResults.map((r) => r.text).join("\n");
/** The run's prompt, wherever the SDK put it (the first user message). */
const promptOf = (req: ScriptRequest) =>
  req.messages
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((b) => String(b.text ?? "")).join(""),
    )
    .join("\n");

/** Where the runner wrote the review's context files, as the end of the prompt says. */
const contextDirOf = (req: ScriptRequest) =>
  /outside the working directory: (\S+)\/pull-request\.json/.exec(promptOf(req))?.[1] ?? "(no context)";

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "conveyor-reviewer-"));
  demo = await startDemo({
    dataDir,
    model: { kind: "stand-in" },
    // At each push: the local forge sends no CI webhooks, so after CI would wait for a reconciliation cycle
    // (test/worker/review-runner.test.ts covers reviews after CI).
    settings: { critic: { runsOn: "runner", reviewHumanPullRequests: true }, reviews: { people: "on_push" } },
    // The Worker holds no model key: the critic runs on the runner, for Conveyor's pull requests too.
    workerModel: false,
    script: [
      {
        when: /You are the reviewer of one pull request/,
        steps: [
          (req) => read(join(contextDirOf(req), "diff.patch")),
          (req) => {
            seen.diff.push(lastResult(req));
            // Its context is read-only: the session (and the code it runs) cannot replace what it reads.
            const tamper = `rm -f ${join(contextDirOf(req), "diff.patch")} 2>/dev/null && echo CONTEXT-REPLACED`;
            return bash(`git status --porcelain; git rev-parse HEAD; ${tamper}`, "Where the worktree is");
          },
          (req) => {
            seen.git.push(lastResult(req));
            const pr = Number(/the working directory is pull request #(\d+) at/.exec(promptOf(req))?.[1]);
            const diff = seen.diff.at(-1) ?? "";
            // The person's change gets findings; Conveyor's (issue #6, a README line) is approved.
            const shouting = diff.includes(CHANGED_LINE);
            return use(`mcp__${SAFE_OUTPUTS_SERVER}__submit_review`, {
              pr,
              verdict: shouting ? "REQUEST_CHANGES" : diff.includes("README") ? "APPROVE" : "BLOCK",
              summary: shouting
                ? "Shouting adds two exclamation marks."
                : "Says how to run one file's tests.",
              findings: shouting
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
      // Issue #6's session, as the demo scripts it.
      ...DEMO_SCRIPT,
    ],
  });
}, 120_000);

afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("the reviewer on a runner", { timeout: 180_000 }, () => {
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
    const { number: pr } = await client.createPullRequest({
      head: "shout",
      base: "main",
      title: "Add shout",
      body: "Loud.",
    });

    const reviews = await until("the reviewer's review", async () => {
      const found = await client.listReviews(pr);
      return found.length > 0 ? found : null;
    });
    expect(reviews).toHaveLength(1);
    expect(reviews[0]?.body).toContain("**Critic: REQUEST_CHANGES**");
    expect(reviews[0]?.body).toContain("One exclamation mark is enough.");
    // The session read the diff from its context files, at the pull request's head, with them out of git's view.
    const at = seen.diff.findIndex((diff) => diff.includes(CHANGED_LINE));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(seen.git[at]).toContain(head);
    expect(seen.git[at]).not.toContain("CONTEXT-REPLACED");
  });

  it("writes a pull request's context nowhere its symbolic links point", async () => {
    if (!demo) throw new Error("no demo");
    const { maintainer } = demo.sample.accounts;
    const client = demo.sample.client(maintainer);
    // What the runner's user can write: its identity file, a mirror's config, another issue's worktree.
    const victim = join(dataDir, "victim");
    await mkdir(victim, { recursive: true });
    await writeFile(join(victim, "keep.txt"), "untouched\n");
    const cloneUrl = demo.sample.forge.cloneUrl(REPO, maintainer.token);
    const pulls: { branch: string; symlinks: Record<string, string> }[] = [
      { branch: "linked-dir", symlinks: { ".conveyor": victim } },
      {
        branch: "linked-files",
        symlinks: {
          ".conveyor/context/diff.patch": join(victim, "keep.txt"),
          ".conveyor/context/pull-request.json": join(victim, "planted.json"),
        },
      },
    ];
    for (const { branch, symlinks } of pulls) {
      const line = `export const ${branch.replace("-", "_")} = 1;`;
      await pushFiles({
        cloneUrl,
        branch,
        base: "main",
        files: { "src/linked.js": `${line}\n` },
        symlinks,
        message: branch,
      });
      const { number: pr } = await client.createPullRequest({
        head: branch,
        base: "main",
        title: branch,
        body: ".",
      });
      await until(`the review of #${pr}`, async () =>
        (await client.listReviews(pr)).length > 0 ? true : null,
      );
    }
    expect(await readdir(victim)).toEqual(["keep.txt"]);
    expect(await readFile(join(victim, "keep.txt"), "utf8")).toBe("untouched\n");
    // Each reviewer read its diff from the runner's own directory.
    const read = pulls.map(({ branch }) => seen.diff.some((diff) => diff.includes(branch.replace("-", "_"))));
    expect(read).toEqual([true, true]);
  });

  it("reviews Conveyor's pull request for its issue, and the issue merges with no model key in the Worker", async () => {
    if (!demo) throw new Error("no demo");
    const client = demo.sample.client(demo.sample.accounts.maintainer);
    await client.addLabels(6, ["backlog"]);
    const d1 = demo.d1;
    const merged = await until(
      "issue #6 merged",
      () => d1.issues(PROJECT).find((issue) => issue.number === 6 && issue.state === "merged") ?? null,
      120_000,
    );
    expect((await client.getIssue(6)).state).toBe("closed");
    const reviews = await client.listReviews(merged.prNumber ?? 0);
    expect(reviews.filter((r) => r.body.startsWith("**Critic: APPROVE**"))).toHaveLength(1);
    expect(reviews[0]?.body).toContain("Says how to run one file's tests.");
  });
});
