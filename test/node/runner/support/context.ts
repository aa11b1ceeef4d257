import { join } from "node:path";
import { RunnerApi } from "../../../../runner/api.ts";
import { ClaudeDriver } from "../../../../runner/drivers/claude.ts";
import type { AgentResult, Driver } from "../../../../runner/drivers/driver.ts";
import { type GitCredential, Workspace } from "../../../../runner/git/workspace.ts";
import { Holdings } from "../../../../runner/holdings.ts";
import type { JobContext } from "../../../../runner/job.ts";
import { Logger } from "../../../../runner/log.ts";
import { WorkDirLayout } from "../../../../runner/paths.ts";
import { Secrets } from "../../../../runner/redact.ts";
import { sandboxGit } from "../../../../runner/sandbox/sandbox-git.ts";
import { Sandbox } from "../../../../runner/sandbox/session-sandbox.ts";
import type { AgentRun, Job } from "../../../../src/runner-api/contract.ts";

export const REPO = "acme/widgets";

export function makeJob(overrides: Partial<Job> & { id: string; cloneUrl: string }): Job {
  const { id, cloneUrl, ...rest } = overrides;
  const number = rest.issue?.number ?? 7;
  return {
    id,
    kind: "implement",
    attempt: 1,
    project: "demo",
    issue: { number, title: "Add a greeting", body: "Please add greeting.txt saying hello." },
    repo: { fullName: REPO, cloneUrl, defaultBranch: "main" },
    branch: `conveyor/${number}`,
    headSha: null,
    iteration: 1,
    sessionId: null,
    instructions: null,
    budget: { maxTurns: 20, usdRemaining: 10 },
    sandbox: { allowedDomains: [], projectSettings: false },
    promptCacheTtl: "5m",
    ...rest,
  };
}

export type TestContext = JobContext & { lines: Record<string, unknown>[] };

/** A job context on `workDir` talking to `workerUrl` with `token`; log lines are kept in `lines`. */
export function jobContext(options: {
  workDir: string;
  workerUrl: string;
  token: string;
  driver: (layout: WorkDirLayout) => Driver;
  credential?: GitCredential;
  secrets?: string[];
}): TestContext {
  const workspace = new Workspace({
    workDir: options.workDir,
    credential: options.credential,
    worktreeGit: sandboxGit(testSandbox()),
  });
  const layout = new WorkDirLayout(workspace.workDir);
  const secrets = new Secrets();
  secrets.add(options.token, ...(options.secrets ?? []));
  const lines: Record<string, unknown>[] = [];
  return {
    api: new RunnerApi(options.workerUrl, options.token),
    workspace,
    driver: options.driver(layout),
    holdings: new Holdings(layout.heldDir),
    layout,
    log: new Logger({
      level: "debug",
      secrets,
      write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    }),
    secrets,
    lines,
  };
}

/** Tests run sessions as the runner does: in bubblewrap, the model behind the proxy. */
export function testSandbox(model: { baseUrl?: string; apiKey?: string } = {}): Sandbox {
  return new Sandbox({ mode: "bubblewrap", model, secretFiles: [] });
}

/**
 * One agent run through the runner's Claude driver: the real Agent SDK binary in bubblewrap, its model behind
 * the proxy in front of `baseUrl` (the stand-in), its worktree `<root>/wt` and HOME `<root>/home`.
 */
export function runAgentIn(
  root: string,
  baseUrl: string,
  agent: Omit<AgentRun, "runId">,
  budget: Job["budget"] = { maxTurns: 10, usdRemaining: 1 },
): Promise<AgentResult> {
  const driver = new ClaudeDriver({ sandbox: testSandbox({ baseUrl, apiKey: "sk-ant-test-agent-run" }) });
  return driver.runAgent({
    job: makeJob({ id: "agent-job", cloneUrl: "http://127.0.0.1:9/x.git", kind: "agent", budget }),
    agent: { runId: "run-1", ...agent },
    worktree: join(root, "wt"),
    home: join(root, "home"),
    readOnly: [],
    signal: new AbortController().signal,
    log: new Logger({ level: "error", secrets: new Secrets() }),
    onSession: () => {},
    onUsage: () => {},
    onActivity: () => {},
  });
}
