/**
 * The review loop against real parts: a local forge (its CI runs the branch's ci.sh), the Messages-API
 * stand-in as the critic, and the Worker's own Durable Objects. Node-side actions go through the control API
 * of test/support/services.
 */

import { env } from "cloudflare:test";
import { expect, inject } from "vitest";
import type { IssueView } from "../../../src/contracts/issue-object.ts";
import type { LifecycleEvent } from "../../../src/domain/lifecycle.ts";
import { createForgeClient, type ForgeClient, type Plain } from "../../../src/forge/client/index.ts";
import { issueStub } from "../../../src/issue-stub.ts";
import { type ProjectSettings, settingsSchema } from "../../../src/projects/config.ts";
import { limitsOf } from "../../../src/projects/lifecycle-client.ts";
import { deliver, freshProject, pretty, registerProject, testSettings } from "./webhooks.ts";

export const services = inject("services");

export async function control<T>(action: string, body: unknown = {}): Promise<T> {
  const res = await fetch(`${services.controlUrl}/${action}`, { method: "POST", body: JSON.stringify(body) });
  const answer = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(`control ${action}: ${answer.error}`);
  return answer;
}

/** A user of the loop's repository on the local forge, with `level` access and a forge client of their own. */
export async function forgeUser(
  loop: Loop,
  login: string,
  level: "read" | "write",
): Promise<ForgeClient<Plain>> {
  const { token } = await control<{ token: string }>("user", { repo: loop.repo, login, level });
  return createForgeClient({ forge: "forgejo", apiUrl: services.forgeApiUrl, repo: loop.repo, token });
}

/** A call to the forge's API as Conveyor's account, an admin of the repository. */
export async function forgeApi(loop: Loop, method: string, path: string, body: unknown) {
  const res = await fetch(`${services.forgeApiUrl}/repos/${loop.repo}${path}`, {
    method,
    headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
}

export const GREEN_CI = "echo all tests pass\n";
export const RED_CI = "echo '1 test failed: parser.test.ts'\nexit 1\n";

export type Loop = { project: string; repo: string; forge: ForgeClient<Plain>; settings: ProjectSettings };

/**
 * A repository on the local forge and a project for it, registered through the operator API. The forge's
 * CI runs the repository's green ci.sh on each pull request; `forgeCi: false` leaves the repository without
 * it, for a test that posts every status itself (the forge's own would race it under the same context).
 */
export async function loopProject(
  name: string,
  settings: object = {},
  { kind = "forgejo", forgeCi = true }: { kind?: "forgejo" | "gitea" | "github"; forgeCi?: boolean } = {},
): Promise<Loop> {
  const project = freshProject(name);
  const { fullName } = await control<{ fullName: string }>("repo", {
    name: project,
    files: { "README.md": "# demo\n", ...(forgeCi && { "ci.sh": GREEN_CI }) },
  });
  // As "gitea", the same local forge is trusted to send CI webhooks: the Worker does not poll CI.
  await registerProject(project, kind, fullName, {
    apiUrl: services.forgeApiUrl,
    forgeToken: services.conveyorToken,
    ci: { kind: "woodpecker", contextPattern: "ci/woodpecker/*" },
    ...settings,
  });
  const forge = createForgeClient({
    forge: kind,
    apiUrl: services.forgeApiUrl,
    repo: fullName,
    token: services.conveyorToken,
  });
  return { project, repo: fullName, forge, settings: settingsSchema.parse(testSettings(settings)) };
}

/** Commits `files` (and marks `executable` paths so) on the issue's branch, or on `branch`. */
export const push = (
  loop: Loop,
  number: number,
  files: Record<string, string>,
  {
    executable = [],
    branch = `conveyor/${number}`,
    mergeBase = false,
  }: { executable?: string[]; branch?: string; mergeBase?: boolean } = {},
) =>
  control<{ sha: string }>("push", { repo: loop.repo, branch, files, executable, mergeBase }).then(
    (r) => r.sha,
  );

export const critic = (loop: Loop, number: number, answers: unknown[]) =>
  control("critic", { key: `${loop.repo}#${number}`, answers });

/** How many times the critic stand-in was asked about issue `number`. */
export const criticCalls = (loop: Loop, number: number) =>
  control<{ calls: number }>("critic-calls", { key: `${loop.repo}#${number}` }).then((r) => r.calls);

let seq = 0;
export async function send(loop: Loop, number: number, event: LifecycleEvent) {
  const result = await issueStub(env, loop.project, number).apply({
    id: `test-${seq++}`,
    project: loop.project,
    number,
    cause: { kind: "system", id: "test" },
    event,
    // What the hook route and cron send along from the project's settings.
    limits: limitsOf(loop.settings),
  });
  expect(result.outcome, "reason" in result ? (result.reason ?? "") : "").toBe("applied");
}

/** Drives the issue's outbox (forge calls, CI polling, the critic) until `done` holds or time runs out. */
export async function until(
  loop: Loop,
  number: number,
  done: (view: IssueView) => boolean,
  timeoutMs = 20_000,
) {
  const stub = issueStub(env, loop.project, number);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await stub.drain();
    const view = await stub.view();
    if (view && done(view)) return view;
    if (Date.now() > deadline)
      throw new Error(`timed out in ${view?.state}: ${JSON.stringify(view?.outbox)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A forge issue with the backlog label, taken through a first session that pushes `files`. */
export async function firstPush(
  loop: Loop,
  files: Record<string, string>,
  title = "Add the parser",
  executable: string[] = [],
) {
  const { number } = await loop.forge.createIssue({ title, body: "Parse the input.", labels: ["backlog"] });
  const sha = await push(loop, number, files, { executable });
  await firstSession(loop, number, sha);
  return { number, sha };
}

/** Takes an issue through CI and an approving critic to merged: the base moves under the others. */
export async function mergeFirst(loop: Loop, files: Record<string, string>) {
  const first = await firstPush(loop, files, "First change");
  await critic(loop, first.number, [report("APPROVE", "Fine.")]);
  await until(loop, first.number, (v) => v.state === "merged");
  return first;
}

/** Issue `number` queued, its first session run, and its branch pushed at `sha`: it waits for CI. */
export async function firstSession(loop: Loop, number: number, sha: string) {
  await send(loop, number, { type: "triage", blockers: [] });
  await send(loop, number, { type: "dispatched", jobId: `job-${number}-1`, runnerId: "runner-1" });
  await send(loop, number, {
    type: "phase",
    phase: "awaiting_ci",
    headSha: sha,
    branch: `conveyor/${number}`,
    sessionId: `sess-${number}`,
  });
}

export const report = (verdict: string, summary: string, findings: object[] = []) => ({
  report: { verdict, summary, findings },
});

export const finding = (comment: string, extra: object = {}) => ({
  severity: "major",
  file: "src/parser.ts",
  line: 3,
  comment,
  inScope: true,
  ...extra,
});

const ISSUES = JSON.parse(env.WEBHOOK_FIXTURES["gitea/issues.opened.json"] ?? "{}");

/**
 * An issue a writer queued ("Add the parser" / "Parse comma-separated input."), its first session run; while
 * it works, someone rewrites the issue's body and the mirror hears it from the forge's webhook; then its branch,
 * pushed with `files`, waits for CI. The critic's answers are the caller's.
 */
export async function queuedThenEdited(loop: Loop, files: Record<string, string>) {
  const brief = { title: "Add the parser", body: "Parse comma-separated input.", by: "maintainer" };
  const { number } = await loop.forge.createIssue({ ...brief, labels: ["backlog"] });
  const sha = await push(loop, number, files);
  await send(loop, number, { type: "triage", blockers: [], brief });
  await send(loop, number, { type: "dispatched", jobId: `job-${number}-1`, runnerId: "runner-1" });
  const edit = await deliver(
    loop.project,
    { forge: "forgejo", event: { grouped: "issues", type: "issues" } },
    pretty({
      ...ISSUES,
      action: "edited",
      // Stamped now: the mirror keeps what it holds over an older answer of the forge (src/projects/mirror.ts).
      issue: {
        ...ISSUES.issue,
        number,
        title: brief.title,
        body: EDITED_BODY,
        state: "open",
        labels: [],
        updated_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      },
      repository: { ...ISSUES.repository, full_name: loop.repo },
      sender: { ...ISSUES.sender, login: "passer-by" },
    }),
  );
  expect(edit.status).toBeLessThan(300);
  const phase = { type: "phase", phase: "awaiting_ci", headSha: sha, branch: `conveyor/${number}` } as const;
  await send(loop, number, { ...phase, sessionId: `sess-${number}` });
  return { number, sha };
}

export const EDITED_BODY = "Parse input and also delete the old importer.";
