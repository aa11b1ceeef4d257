import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ForgeClient, Plain } from "../../../src/forge/client/index.ts";
import { CI_CONTEXT, type LocalForge } from "../../support/forge/index.ts";
import { apiGet, Checkout, clientFor, startForge } from "./harness.ts";

const REPO = "acme/built";
// The repository's CI script: passes when `answer.txt` says 42.
const CI_SCRIPT =
  'echo "checking answer"\ntest "$(cat answer.txt)" = 42 || { echo "wrong answer" >&2; exit 3; }\necho ok\n';

let forge: LocalForge;
let cleanup: () => Promise<void>;
let client: ForgeClient<Plain>;
let checkout: Checkout;

beforeAll(async () => {
  const started = await startForge();
  ({ forge, cleanup } = started);
  await forge.createRepo({
    owner: "acme",
    name: "built",
    seed: { files: { "ci.sh": CI_SCRIPT, "answer.txt": "0\n" } },
  });
  client = clientFor(forge, forge.admin.token, REPO);
  checkout = await Checkout.clone(forge.cloneUrl(REPO, forge.admin.token), `${started.workDir}/built`);
});

afterAll(async () => {
  await cleanup();
});

async function pullWith(branch: string, answer: string) {
  await checkout.reset("main");
  await checkout.commitAndPush(branch, { "answer.txt": `${answer}\n` });
  return client.createPullRequest({ head: branch, base: "main", title: branch, body: "" });
}

async function log(targetUrl: string | null): Promise<string> {
  return (await fetch(targetUrl ?? "")).text();
}

describe("Woodpecker-like CI", () => {
  it("runs sh ./ci.sh on a pull request's head and reports pending, then success or failure", async () => {
    const passing = await pullWith("passes", "42");
    const failing = await pullWith("fails", "41");
    await forge.settled();

    const green = await client.getCombinedStatus(passing.headSha);
    const red = await client.getCombinedStatus(failing.headSha);
    expect(green).toEqual({
      state: "success",
      statuses: [
        {
          context: CI_CONTEXT,
          state: "success",
          targetUrl: expect.any(String),
          description: "Pipeline was successful",
        },
      ],
    });
    expect(red).toEqual({
      state: "failure",
      statuses: [
        {
          context: CI_CONTEXT,
          state: "failure",
          targetUrl: expect.any(String),
          description: "Pipeline failed",
        },
      ],
    });
    expect(await log(green.statuses[0]?.targetUrl ?? null)).toBe("+ sh ./ci.sh\nchecking answer\nok\n");
    expect(await log(red.statuses[0]?.targetUrl ?? null)).toBe(
      "+ sh ./ci.sh\nchecking answer\nwrong answer\n",
    );

    const history = await apiGet<{ status: string; creator: { login: string } }[]>(
      forge,
      forge.admin.token,
      `/repos/${REPO}/statuses/${passing.headSha}`,
    );
    expect(history.map((status) => [status.status, status.creator.login])).toEqual([
      ["success", "woodpecker"],
      ["pending", "woodpecker"],
    ]);
    expect(forge.ciRuns().map((run) => [run.branch, run.status, run.exitCode])).toEqual([
      ["passes", "success", 0],
      ["fails", "failure", 3],
    ]);
  });

  it("runs again when a push moves the head of an open pull request", async () => {
    const pull = await pullWith("fixed-later", "7");
    await forge.settled();
    expect((await client.getCombinedStatus(pull.headSha)).state).toBe("failure");

    const fixed = await checkout.commitAndPush("fixed-later", { "answer.txt": "42\n" });
    await forge.settled();

    expect((await client.getPullRequest(pull.number)).headSha).toBe(fixed);
    expect((await client.getCombinedStatus(fixed)).state).toBe("success");
    expect((await client.getCombinedStatus("fixed-later")).state).toBe("success");
  });

  it("reports nothing for a commit without ci.sh, and serves 404 for an unknown log", async () => {
    await checkout.reset("main");
    await checkout.run("rm", "--quiet", "ci.sh");
    await checkout.commitAndPush("no-ci", {});
    const pull = await client.createPullRequest({ head: "no-ci", base: "main", title: "No CI", body: "" });
    await forge.settled();

    expect(await client.getCombinedStatus(pull.headSha)).toEqual({ state: "pending", statuses: [] });
    expect((await fetch(`${forge.url}/ci/logs/999999`)).status).toBe(404);
  });
});

describe("CI limits", () => {
  it("kills a run that exceeds its time limit, and a repository's own command replaces ci.sh", async () => {
    const { forge: local, workDir, cleanup: stop } = await startForge({ ci: { timeoutMs: 300 } });
    try {
      await local.createRepo({
        owner: "acme",
        name: "slow",
        ciCommand: "echo started; sleep 30",
        seed: { files: { a: "a\n" } },
      });
      const slow = clientFor(local, local.admin.token, "acme/slow");
      const clone = await Checkout.clone(local.cloneUrl("acme/slow", local.admin.token), `${workDir}/slow`);
      const headSha = await clone.commitAndPush("slow", { b: "b\n" });
      await slow.createPullRequest({ head: "slow", base: "main", title: "Slow", body: "" });
      await local.settled();

      const combined = await slow.getCombinedStatus(headSha);
      expect(combined).toMatchObject({ state: "failure", statuses: [{ description: "Pipeline failed" }] });
      expect(await log(combined.statuses[0]?.targetUrl ?? null)).toBe(
        "+ echo started; sleep 30\nstarted\n\nlocal forge: killed after 300 ms\n",
      );
      expect(local.ciRuns()[0]).toMatchObject({ status: "failure", exitCode: null });
    } finally {
      await stop();
    }
  });
});
