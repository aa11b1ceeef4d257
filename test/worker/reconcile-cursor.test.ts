/**
 * Reconciliation against listings that change while they are paged, as the real forges' do (the local forge
 * pages like GitHub's `sort=updated&direction=asc` and like Gitea's newest-created-first, and lands a change
 * between two pages exactly where a test asks): no lost webhook is passed over.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createForgeClient } from "../../src/forge/client/index.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { cycle } from "./support/reconcile.ts";
import { control, type Loop, loopProject, services } from "./support/review.ts";

const view = (loop: Loop, number: number) => issueStub(env, loop.project, number).view();
/** The forge as a human edits it (no webhook reaches Conveyor: these are the lost ones). */
const human = (loop: Loop) =>
  createForgeClient({
    forge: "forgejo",
    apiUrl: services.forgeApiUrl,
    repo: loop.repo,
    token: services.conveyorToken,
  });
type Change =
  | { kind: "edit"; number: number; body: string }
  | { kind: "close"; number: number }
  | { kind: "create"; title: string; labels: string[] };
const beforePage = (loop: Loop, page: number, action: Change, nextSecond = true) =>
  control("listing", { repo: loop.repo, before: { page, nextSecond, action } });
const pageSize = (loop: Loop, size: number) => control("listing", { repo: loop.repo, pageSize: size });

/** A dependency and an issue blocked on it, triaged by a first cycle; the cursor is then past both. */
async function blockedOnDependency(loop: Loop) {
  const forge = human(loop);
  await forge.ensureLabels(["backlog"]);
  const filler = await forge.createIssue({ title: "Filler", body: "", labels: [] });
  const dep = await forge.createIssue({ title: "Parser", body: "", labels: [] });
  const blocked = await forge.createIssue({
    title: "CLI",
    body: `## Depends on\n- #${dep.number}\n`,
    labels: ["backlog"],
  });
  await cycle(loop);
  expect(await view(loop, blocked.number)).toMatchObject({ state: "blocked" });
  await issueStub(env, loop.project, blocked.number).drain();
  return { forge, filler: filler.number, dep: dep.number, blocked: blocked.number };
}

describe("reconciliation's cursor", () => {
  it("GitHub: an item updated mid-listing slides past no other (keyed pages)", async () => {
    const loop = await loopProject("cursor-github", {}, { kind: "github" });
    const { forge, filler, dep, blocked } = await blockedOnDependency(loop);
    await pageSize(loop, 1);
    // Lost: the filler's edit and the dependency's close. Oldest first, the filler comes first; once its first
    // page is read it is edited again and moves to the end, so an offset page 2 would start past the dependency.
    await forge.editIssueBody(filler, "edited");
    await forge.closeIssue(dep);
    await beforePage(loop, 2, { kind: "edit", number: filler, body: "edited again" });

    await cycle(loop);
    expect(await view(loop, blocked)).toMatchObject({ state: "queued" });
  });

  it("Gitea: an issue opened mid-listing, on a page already read, is listed by the next cycle", async () => {
    const loop = await loopProject("cursor-gitea");
    const { forge, filler } = await blockedOnDependency(loop);
    await pageSize(loop, 1);
    await forge.editIssueBody(filler, "edited");
    // Newest first: the new issue lands on page 1, after it was read; the filler's later edit is read.
    await beforePage(loop, 2, { kind: "create", title: "Opened mid-listing", labels: ["backlog"] }, false);
    await beforePage(loop, 3, { kind: "edit", number: filler, body: "edited again" });
    await cycle(loop);
    const opened = (await forge.listIssuesByLabel("backlog")).find((i) => i.title === "Opened mid-listing");
    if (!opened) throw new Error("not opened");

    await cycle(loop);
    expect(await view(loop, opened.number)).toMatchObject({ state: "queued" });
  });

  it("hears a dependency closed a second time (event ids per occurrence)", async () => {
    const loop = await loopProject("cursor-reclose");
    const { forge, dep, blocked } = await blockedOnDependency(loop);
    await forge.closeIssue(dep);
    await cycle(loop);
    expect(await view(loop, blocked)).toMatchObject({ state: "queued" });
    await issueStub(env, loop.project, blocked).drain();

    // Reopened (its webhook heard: the dependent waits again), then closed again a second later, unheard.
    await fetch(`${services.forgeApiUrl}/repos/${loop.repo}/issues/${dep}`, {
      method: "PATCH",
      headers: { authorization: `token ${services.conveyorToken}`, "content-type": "application/json" },
      body: JSON.stringify({ state: "open" }),
    });
    await cycle(loop);
    expect(await view(loop, blocked)).toMatchObject({ state: "queued" });
    await issueStub(env, loop.project, blocked).apply({
      id: `reopened-${dep}`,
      project: loop.project,
      number: blocked,
      cause: { kind: "system", id: "test" },
      event: { type: "triage", blockers: [`#${dep}`] },
    });
    expect(await view(loop, blocked)).toMatchObject({ state: "blocked" });
    // Its labels follow on the forge and a cycle lists them: then only the dependency's close is news.
    await issueStub(env, loop.project, blocked).drain();
    await cycle(loop);
    await new Promise((later) => setTimeout(later, 1000 - (Date.now() % 1000) + 5));
    await forge.closeIssue(dep);

    await cycle(loop);
    expect(await view(loop, blocked)).toMatchObject({ state: "queued" });
  });
});
