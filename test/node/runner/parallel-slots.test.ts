import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Script } from "../../../runner/drivers/scripted.ts";
import { type LocalWorker, startLocalWorker } from "../../support/worker.ts";
import { type GitHttpServer, startGitHttpServer, tempDir, Upstream } from "../git/support.ts";
import { LeaseLedger } from "./support/lease-ledger.ts";
import { logLines, maxOverlap, until } from "./support/observe.ts";
import { Operator, writeRunnerConfig } from "./support/operator.ts";
import { type RunnerProcess, startRunner } from "./support/runner-process.ts";

const GIT_TOKEN = "git-token-slots-52";
const ISSUES = [1, 2, 3, 4, 5];

let root = "";
let upstream: Upstream;
let gitServer: GitHttpServer;
let worker: LocalWorker;
let ledger: LeaseLedger;
let operator: Operator;
const configs: string[] = [];
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  root = await tempDir("runner-slots");
  upstream = await Upstream.create(root);
  [gitServer, worker] = await Promise.all([
    startGitHttpServer(root, "conveyor-bot", GIT_TOKEN),
    startLocalWorker({ stateDir: join(root, "worker-state") }),
  ]);
  ledger = await LeaseLedger.start(worker.url);
  operator = new Operator(worker.url);
  await operator.registerProject("fleet", gitServer.url("upstream.git"), { parallel: 2 });

  // Every session notes when it starts and ends, on this host's clock, in its own HOME (the sandbox shows it
  // nothing else of the host); the worktree's name is the issue's.
  const note = (what: string) => ({
    run: `echo "$(date +%s%3N) ${what} $(basename "$PWD")" >> "$HOME/sessions.log"`,
  });
  const script: Script = {
    implement: [
      note("start"),
      { sleep: 1_000 },
      { write: "work.txt", content: "done\n" },
      note("end"),
      { phase: "awaiting_ci" },
    ],
  };
  const scriptFile = join(root, "script.json");
  await writeFile(scriptFile, JSON.stringify(script));
  for (const name of ["a", "b"]) {
    configs.push(
      await writeRunnerConfig(join(root, `runner-${name}.json`), {
        workerUrl: ledger.url,
        registrationToken: await operator.registrationToken(),
        name,
        workDir: join(root, `work-${name}`),
        // Together they could run six sessions at once: two is the project's limit, not theirs.
        concurrency: 3,
        driver: "scripted",
        script: scriptFile,
        git: { username: "conveyor-bot", token: GIT_TOKEN },
      }),
    );
  }
}, 60_000);

afterAll(async () => {
  for (const runner of runners) runner.process.kill("SIGKILL");
  await Promise.all([worker?.stop(), gitServer?.close(), ledger?.close()]);
  await rm(root, { recursive: true, force: true });
});

/** Each issue's session as its steps noted it: start and end, in ms. */
async function sessions(): Promise<Map<number, { start: number; end: number }>> {
  const spans = new Map<number, { start: number; end: number }>();
  const logs = await Promise.all(
    ["a", "b"].flatMap((name) =>
      ISSUES.map((n) =>
        readFile(join(root, `work-${name}`, "agents", `fleet-${n}`, "home", "sessions.log"), "utf8").catch(
          () => "",
        ),
      ),
    ),
  );
  for (const line of logs.join("").trim().split("\n")) {
    const [at, what, issue] = line.split(" ");
    const span = spans.get(Number(issue)) ?? { start: 0, end: 0 };
    spans.set(Number(issue), { ...span, [what === "start" ? "start" : "end"]: Number(at) });
  }
  return spans;
}

it("runs five ready issues on two runners, two at a time; an issue waiting for CI frees its slot", async () => {
  runners.push(...configs.map((config) => startRunner(config)));
  await until(() => runners.every((r) => logLines(r).some((l) => l.msg === "runner started")));

  // The Worker's own record of what is leased, sampled all along.
  const leased: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      leased.push((await operator.leasedJobs()).length);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  for (const number of ISSUES) await operator.triage("fleet", number);
  const views = await Promise.all(ISSUES.map((n) => operator.waitForIssue("fleet", n, "awaiting_ci")));
  sampling = false;
  await sampler;

  // From the runners' side: the sessions themselves.
  const spans = await sessions();
  expect([...spans.keys()].sort()).toEqual(ISSUES);
  expect(maxOverlap([...spans.values()])).toBe(2);

  // From the Worker's side: its lease grants and its record of leased jobs. Each issue ran once, to the end.
  expect(ledger.leases.map((l) => l.issue).sort()).toEqual(ISSUES);
  for (const lease of ledger.leases) expect(lease).toMatchObject({ attempt: 1, end: "complete", refused: 0 });
  expect(ledger.maxConcurrent()).toBe(2);
  expect(Math.max(...leased)).toBe(2);

  // The first two issues wait for CI (no result ever comes) while the last sessions run: waiting holds no slot.
  const byStart = [...spans].sort(([, a], [, b]) => a.start - b.start).map(([issue]) => issue);
  const lastStart = spans.get(byStart[4] ?? 0)?.start ?? 0;
  for (const issue of byStart.slice(0, 2)) {
    const waiting = views[issue - 1]?.history.at(-1);
    expect(waiting).toMatchObject({ event: "phase", to: "awaiting_ci" });
    expect(waiting?.at).toBeLessThan(lastStart);
  }

  // One push per issue, of the head each issue records.
  expect(gitServer.requests.filter((r) => r.url.endsWith("/git-receive-pack"))).toHaveLength(5);
  for (const view of views) expect(view.headSha).toBe(await upstream.sha(view.branch ?? ""));
}, 60_000);
