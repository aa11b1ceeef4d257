import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { end, track } from "../../children.ts";
import { gitDir } from "../forge.ts";
import { git } from "../git/exec.ts";
import { hasFile } from "../git/log.ts";
import type { Render } from "../render.ts";
import type { CiRun, CiStatus, Issue, Repo, StatusState, User } from "../state.ts";
import { addStatus } from "../statuses.ts";
import { fullName, type Store } from "../store.ts";

/** Woodpecker names a status `ci/woodpecker/<event>/<workflow>`; here one workflow, for pull requests. */
export const CI_CONTEXT = "ci/woodpecker/pr/test";

const CI_SCRIPT = "ci.sh";

// Woodpecker's pipeline states as it reports them to Gitea/Forgejo (state, description).
const REPORTED: Record<CiStatus, { state: StatusState; description: string }> = {
  pending: { state: "pending", description: "Pipeline is pending" },
  running: { state: "pending", description: "Pipeline is running" },
  success: { state: "success", description: "Pipeline was successful" },
  failure: { state: "failure", description: "Pipeline failed" },
  error: { state: "error", description: "Pipeline failed" },
  killed: { state: "failure", description: "Pipeline was canceled" },
};

export interface CiOptions {
  enabled: boolean;
  timeoutMs: number;
  reposDir: string;
  logsDir: string;
}

/**
 * A Woodpecker-like CI: whenever a pull request is opened or its head moves, the head commit is checked out
 * in a temporary directory and the repository's command runs there (`sh ./ci.sh` when the commit has that
 * file, unless the repository names a command; nothing at all otherwise). It reports `pending`, then
 * `success` or `failure`, as commit statuses by the `woodpecker` user, each pointing at the run's log. One
 * run at a time, in trigger order.
 */
export class Ci {
  readonly #store: Store;
  readonly #render: Render;
  readonly #bot: User;
  readonly #options: CiOptions;
  #queue: Promise<void> = Promise.resolve();
  readonly #inFlight = new Set<Promise<void>>();
  #running: ChildProcess | null = null;
  #closed = false;

  constructor(store: Store, render: Render, bot: User, options: CiOptions) {
    this.#store = store;
    this.#render = render;
    this.#bot = bot;
    this.#options = options;
  }

  logFile(id: number): string {
    return join(this.#options.logsDir, `${id}.log`);
  }

  /** Runs a previous process left unfinished are reported canceled. */
  recover(): void {
    for (const run of this.#store.state.ciRuns) {
      if (run.status !== "pending" && run.status !== "running") continue;
      const repo = this.#store.state.repos.find((candidate) => fullName(candidate) === run.repo);
      if (repo) this.#finish(repo, run, "killed", null);
    }
  }

  trigger(repo: Repo, issue: Issue): void {
    const pull = issue.pull;
    if (!this.#options.enabled || this.#closed || !pull) return;
    const run = this.#prepare(repo, issue.index, pull.headBranch, pull.headSha);
    this.#inFlight.add(run);
    void run.finally(() => this.#inFlight.delete(run));
  }

  /** Resolves when every triggered run has finished. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Kills the running command; runs not started yet are canceled. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#kill();
    await this.idle();
  }

  async #prepare(repo: Repo, pullNumber: number, branch: string, sha: string): Promise<void> {
    const dir = gitDir(this.#options.reposDir, repo);
    const command = repo.ciCommand ?? ((await hasFile(dir, sha, CI_SCRIPT)) ? `sh ./${CI_SCRIPT}` : null);
    if (command === null || this.#closed) return;
    const run: CiRun = {
      id: this.#store.nextId(),
      repo: fullName(repo),
      sha,
      branch,
      pullNumber,
      command,
      status: "pending",
      exitCode: null,
      createdAt: this.#store.now(),
      startedAt: null,
      finishedAt: null,
    };
    this.#store.state.ciRuns.push(run);
    this.#report(repo, run);
    this.#store.save();
    // A bug in one run must not stop the queue for the runs after it.
    this.#queue = this.#queue
      .then(() => this.#execute(repo, run))
      .catch((error: unknown) => {
        console.error("local forge: CI:", error);
      });
    await this.#queue;
  }

  async #execute(repo: Repo, run: CiRun): Promise<void> {
    if (this.#closed) return this.#finish(repo, run, "killed", null);
    run.status = "running";
    run.startedAt = this.#store.now();
    this.#store.save();
    const work = await mkdtemp(join(tmpdir(), "local-forge-ci-"));
    const log = openSync(this.logFile(run.id), "w");
    let status: CiStatus;
    let exitCode: number | null = null;
    try {
      await git([
        "clone",
        "--quiet",
        "--shared",
        "--no-checkout",
        gitDir(this.#options.reposDir, repo),
        work,
      ]);
      await git(["checkout", "--quiet", "--detach", run.sha], { cwd: work });
      // No await between this check and the spawn: a close either came before it, or finds the child to kill.
      if (this.#closed) {
        status = "killed";
      } else {
        writeSync(log, `+ ${run.command}\n`);
        exitCode = await this.#shell(repo, run, work, log);
        status = this.#closed ? "killed" : exitCode === 0 ? "success" : "failure";
      }
    } catch (error) {
      writeSync(log, `${error instanceof Error ? error.message : String(error)}\n`);
      status = "error";
    } finally {
      closeSync(log);
      await rm(work, { recursive: true, force: true });
    }
    this.#finish(repo, run, status, exitCode);
  }

  /** The command's exit code; null when it was killed (timeout or shutdown). */
  #shell(repo: Repo, run: CiRun, cwd: string, log: number): Promise<number | null> {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? cwd,
      CI: "woodpecker",
      CI_REPO: fullName(repo),
      CI_COMMIT_SHA: run.sha,
      CI_COMMIT_SOURCE_BRANCH: run.branch,
      CI_COMMIT_PULL_REQUEST: String(run.pullNumber),
      CI_PIPELINE_EVENT: "pull_request",
      CI_PIPELINE_NUMBER: String(run.id),
    };
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout kills whatever the script started too.
      const child = spawn("sh", ["-c", run.command], {
        cwd,
        env,
        stdio: ["ignore", log, log],
        detached: true,
      });
      this.#running = child;
      // Killed with the process that runs the forge, should it exit first; ended with its step, as CI does.
      track(child, { group: true });
      const timer = setTimeout(() => {
        writeSync(log, `\nlocal forge: killed after ${this.#options.timeoutMs} ms\n`);
        this.#kill();
      }, this.#options.timeoutMs);
      child.on("error", (error) => {
        clearTimeout(timer);
        this.#running = null;
        reject(error);
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        end(child);
        this.#running = null;
        resolve(code);
      });
    });
  }

  #kill(): void {
    const pid = this.#running?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  #finish(repo: Repo, run: CiRun, status: CiStatus, exitCode: number | null): void {
    run.status = status;
    run.exitCode = exitCode;
    run.finishedAt = this.#store.now();
    this.#report(repo, run);
    this.#store.save();
  }

  #report(repo: Repo, run: CiRun): void {
    const { state, description } = REPORTED[run.status];
    const targetUrl = `${this.#render.url}/ci/logs/${run.id}`;
    addStatus(this.#store, repo, run.sha, { state, context: CI_CONTEXT, targetUrl, description }, this.#bot);
  }
}
