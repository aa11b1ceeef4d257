import { writeFile } from "node:fs/promises";
import { TEST_ADMIN_TOKEN } from "../../../support/worker.ts";

export type HistoryEntry = {
  seq: number;
  eventId: string;
  event: string;
  from: string;
  to: string;
  outcome: string;
  cause: { kind: string; id: string };
  at: number;
};

export type IssueView = {
  state: string;
  iteration: number;
  branch: string | null;
  headSha: string | null;
  sessionId: string | null;
  history: HistoryEntry[];
};

/** The operator API of a local Worker (`/api/v1`), as the tests and benchmarks of the runner use it. */
export class Operator {
  readonly url: string;

  constructor(url: string) {
    this.url = url;
  }

  async call<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  /**
   * Registers `project` on `acme/widgets` at `cloneUrl`. Its forge API is port 9, which refuses at once:
   * labels and comments wait in the issues' outboxes, jobs go their own way.
   */
  async registerProject(project: string, cloneUrl: string, settings: Record<string, unknown> = {}) {
    await this.call("PUT", `/api/v1/projects/${project}`, {
      forge: "forgejo",
      apiUrl: "http://127.0.0.1:9/api/v1",
      repo: "acme/widgets",
      cloneUrl,
      webhookSecret: "s".repeat(16),
      forgeToken: "forge-token",
      ...settings,
    });
  }

  async registrationToken(): Promise<string> {
    return (await this.call<{ token: string }>("POST", "/api/v1/runners/tokens", {})).token;
  }

  /** One lifecycle event, as the operator API takes it; with an `id`, sending it again is a duplicate. */
  event(project: string, number: number, event: object, id?: string): Promise<unknown> {
    return this.call("POST", `/api/v1/projects/${project}/issues/${number}/events`, {
      ...(id === undefined ? {} : { id }),
      event,
    });
  }

  /** The issue is ready (no blockers): its implement job is enqueued. */
  triage(project: string, number: number): Promise<unknown> {
    return this.event(project, number, { type: "triage", blockers: [] });
  }

  /** The jobs D1 records as leased, across runners. */
  async leasedJobs(): Promise<{ id: string; number: number }[]> {
    const { runners } = await this.call<{ runners: { jobs: { id: string; number: number }[] }[] }>(
      "GET",
      "/api/v1/runners",
    );
    return runners.flatMap((runner) => runner.jobs);
  }

  issue(project: string, number: number): Promise<IssueView> {
    return this.call<IssueView>("GET", `/api/v1/projects/${project}/issues/${number}`);
  }

  async waitForIssue(project: string, number: number, state: string, timeoutMs = 30_000): Promise<IssueView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const view = await this.issue(project, number);
      if (view.state === state) return view;
      if (Date.now() > deadline) throw new Error(`${project}#${number} is ${view.state}, not ${state}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A runner's config file for the local Worker at `workerUrl`; returns its path. */
export async function writeRunnerConfig(file: string, config: Record<string, unknown>): Promise<string> {
  await writeFile(file, JSON.stringify({ claimWaitMs: 5_000, shutdownGraceMs: 1_000, ...config }));
  return file;
}
