/** An issue waiting for CI, and Gitea's commit statuses: what CI webhook tests set up and send. */
import { env } from "cloudflare:test";
import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import { control, type Loop, loopProject, services } from "./review.ts";
import { deliver, freshProject, pretty, registerProject } from "./webhooks.ts";

/** An issue the forge has (its labels and comments are real calls), taken to awaiting_ci at `sha`. */
export async function awaitingCi(project: string, number: number, sha: string, repo: string) {
  for (let created = 0; created < number; ) {
    const res = await fetch(`${services.forgeApiUrl}/repos/${repo}/issues`, {
      method: "POST",
      headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "An issue" }),
    });
    created = ((await res.json()) as { number: number }).number;
  }
  const issue = issueStub(env, project, number);
  const events: LifecycleEvent[] = [
    { type: "triage", blockers: [] },
    { type: "dispatched", jobId: "job-1", runnerId: "runner-1" },
    { type: "phase", phase: "awaiting_ci", headSha: sha, branch: `conveyor/${number}`, sessionId: "sess-1" },
  ];
  for (const [i, event] of events.entries()) {
    await issue.apply({ id: `setup-${i}`, project, number, cause: { kind: "system", id: "test" }, event });
  }
  await issue.drain();
  return issue;
}

/**
 * Gitea's `status` payload (modules/structs/hook.go CommitStatusPayload): a trigger, whatever it says. Two
 * statuses of one context differ in their id and link (`extra`), as two pipelines' do.
 */
export const statusPayload = (
  loop: Loop,
  sha: string,
  context: string,
  state: string,
  extra: { id?: number; target_url?: string; description?: string } = {},
) =>
  pretty({
    commit: { id: sha, message: "change", url: "" },
    context,
    created_at: "2026-11-22T10:00:00Z",
    description: state,
    id: 17,
    repository: {
      ...JSON.parse(env.WEBHOOK_FIXTURES["gitea/pull_request.synchronized.json"] ?? "{}").repository,
      full_name: loop.repo,
    },
    sender: { id: 1, login: "woodpecker", username: "woodpecker" },
    sha,
    state,
    target_url: `${services.forgeUrl}/ci/logs/1`,
    updated_at: "2026-11-22T10:01:00Z",
    ...extra,
  });

/** A commit status on the forge, as a CI reports it (`target_url`: its pipeline's page). */
export async function postStatus(
  loop: Loop,
  sha: string,
  status: { context: string; state: string; description?: string; target_url?: string },
) {
  const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/statuses/${sha}`, {
    method: "POST",
    headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
    body: JSON.stringify({ description: status.state, target_url: "http://ci.example/1", ...status }),
  });
  if (res.status !== 201) throw new Error(`status: ${res.status} ${await res.text()}`);
}

/** A Gitea status delivery. */
export const STATUS_DELIVERY = { forge: "gitea", event: { grouped: "", type: "status" } } as const;

/**
 * A repository on the local forge (which answers GitHub's checks and Actions APIs) and a GitHub project for
 * it, with the tokens of three apps that post check runs (`github-actions` is GitHub Actions).
 */
export async function githubProject(name: string, settings: object = {}) {
  const project = freshProject(name);
  const { fullName: repo } = await control<{ fullName: string }>("repo", {
    name: project,
    files: { "README.md": "# demo\n" },
  });
  await registerProject(project, "github", repo, {
    forgeToken: services.conveyorToken,
    ci: { kind: "github-actions" },
    ...settings,
  });
  const app = async (login: string) =>
    (await control<{ token: string }>("user", { repo, login, level: "write" })).token;
  return {
    project,
    repo,
    actions: await app("actions-app"),
    circle: await app("circleci-app"),
    githubActions: await app("github-actions"),
  };
}

type Run = {
  name: string;
  status?: string;
  conclusion?: string;
  output?: { title: string; summary: string };
};

/** Posts (or, with `id`, updates) a check run as the app whose token it is. */
export async function checkRun(repo: string, token: string, sha: string, run: Run, id?: number) {
  const res = await fetch(`${services.forgeApiUrl}/repos/${repo}/check-runs${id ? `/${id}` : ""}`, {
    method: id ? "PATCH" : "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ head_sha: sha, ...run }),
  });
  if (!res.ok) throw new Error(`check run: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: number }).id;
}

/** GitHub's delivery of `fixture`, about `sha`: a trigger, whatever it says. */
export const checkHook = (
  gh: { project: string; repo: string },
  event: "check_suite" | "check_run",
  fixture: string,
  sha: string,
) => {
  const body = JSON.parse(env.WEBHOOK_FIXTURES[fixture] ?? "{}");
  body[event].head_sha = sha;
  body.repository.full_name = gh.repo;
  return deliver(gh.project, { forge: "github", event }, pretty(body));
};

/**
 * A Gitea project whose CI is a Woodpecker with an API (the stand-in, test/support/woodpecker.ts) and a token
 * for it; the forge's own CI does not run: the test posts every status.
 */
export const woodpeckerLoop = (name: string) =>
  loopProject(
    name,
    {
      forge: "gitea",
      ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*", woodpeckerUrl: services.woodpeckerUrl },
      woodpeckerToken: "wp-token",
    },
    { forgeCi: false },
  );
