/**
 * The vault against real parts: the ProjectDO's storage and alarm, D1, the Messages-API stand-in as the
 * classifier, the local forge and the IssueDO of a merge held for protected paths.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { VaultItem } from "../../src/domain/vault.ts";
import { projectStub } from "../../src/project-stub.ts";
import type { VaultItemView } from "../../src/vault/queries.ts";
import { formFields, page, post, sessionCookie } from "./dashboard-support.ts";
import { control, critic, firstPush, type Loop, loopProject, report, send, until } from "./support/review.ts";
import { expireOnAlarm } from "./support/vault.ts";
import { commentDelivery, OPERATOR, reviewDelivery } from "./support/webhooks.ts";

/** What the classifier answers for the project's next requests, in order (the last repeats). */
const classifier = (loop: Loop, answers: unknown[]) =>
  control("critic", { key: `${loop.repo}#vault`, answers });
const verdict = (v: string, reason: string) => ({ report: { verdict: v, reason } });

let keys = 0;
/** An agent run's output in the vault, classified (the ProjectDO's outbox drained). */
async function requested(loop: Loop, title = "Delete the stale release branches") {
  const stub = projectStub(env, loop.project);
  const { id } = await stub.vaultRequest({
    key: `test:${keys++}`,
    kind: "agent_output",
    requester: { type: "agent_run", runId: "run_1", output: 0 },
    title,
    payload: { branches: ["release-1", "release-2"] },
  });
  await stub.drain();
  return { id, item: await stub.vaultItem(id) };
}

const api = (path: string, init: RequestInit = {}) =>
  SELF.fetch(`https://conveyor.test/api/v1${path}`, {
    ...init,
    headers: { ...OPERATOR, "content-type": "application/json" },
  });

/** An issue whose change touches a protected path, approved by the critic: its merge waits in the vault. */
async function heldMerge(loop: Loop) {
  const { number } = await firstPush(loop, {
    "src/parser.ts": "export const parse = 1;\n",
    ".woodpecker.yml": "steps: []\n",
  });
  await critic(loop, number, [report("APPROVE", "Good.")]);
  const held = await until(
    loop,
    number,
    (v) => v.state === "awaiting_approval" && v.vaultItem !== null && v.outbox.length === 0,
  );
  await projectStub(env, loop.project).drain();
  return { number, held, itemId: held.vaultItem ?? "" };
}

describe("classifying a request", () => {
  it("ask leaves it pending for a human, with the verdict and its reason recorded", async () => {
    const loop = await loopProject("vault-ask");
    await classifier(loop, [verdict("ask", "deleting branches is irreversible")]);
    const { id, item } = await requested(loop);
    expect(id).toBe("v1");
    expect(item).toMatchObject({
      state: "pending",
      verdict: { verdict: "ask", reason: "deleting branches is irreversible" },
    });
    expect(item?.audit.map((e) => [e.action, e.by])).toEqual([
      ["requested", "agent run run_1 (output 0)"],
      ["classified", "policy"],
    ]);
    // The classifier's call is spent like a session's: an agent run's item is the project's alone (issue 0).
    const stub = projectStub(env, loop.project);
    await stub.drain();
    const spent = await env.DB.prepare("SELECT id, number, source, usd FROM usage WHERE project_id = ?")
      .bind(loop.project)
      .first<{ usd: number }>();
    expect(spent).toMatchObject({ id: `classifier:${loop.project}:v1`, number: 0, source: "classifier" });
    expect(spent?.usd).toBeGreaterThan(0);
    expect((await stub.dispatchStatus()).spentTodayUsd).toBeCloseTo(spent?.usd ?? 0, 10);
  });

  it("reject is decided by the policy at once", async () => {
    const loop = await loopProject("vault-reject");
    await classifier(loop, [verdict("reject", "it deletes a protected branch")]);
    const { item } = await requested(loop);
    expect(item).toMatchObject({ state: "rejected" });
    expect(item?.audit.at(-1)).toMatchObject({
      action: "rejected",
      by: "policy",
      reason: "it deletes a protected branch",
    });
  });

  it("approve asks a human by default, and approves only a kind the project lets it", async () => {
    const strict = await loopProject("vault-strict");
    await classifier(strict, [verdict("approve", "routine cleanup")]);
    expect((await requested(strict)).item).toMatchObject({
      state: "pending",
      verdict: { verdict: "approve" },
    });

    const lenient = await loopProject("vault-lenient", { vault: { autoApprove: ["agent_output"] } });
    await classifier(lenient, [verdict("approve", "routine cleanup")]);
    const { item } = await requested(lenient);
    // Its agent run is gone (there is none here): nothing to fire, so it stays approved.
    expect(item).toMatchObject({ state: "approved" });
    expect(item?.audit.at(-1)).toMatchObject({ action: "approved", by: "policy" });
  });

  it.each([
    ["text instead of a verdict", { text: "Sure, go ahead!" }],
    ["an invalid verdict", verdict("yes", "fine")],
  ])("%s is read as ask, never as approval", async (_name, answer) => {
    const loop = await loopProject("vault-garbage", { vault: { autoApprove: ["agent_output"] } });
    await classifier(loop, [answer]);
    const { item } = await requested(loop);
    expect(item?.state).toBe("pending");
    expect(item?.verdict).toMatchObject({ verdict: "ask", reason: expect.stringMatching(/^classifier: /) });
  });

  it("the same key requests once; the list surfaces show it from D1", async () => {
    const loop = await loopProject("vault-once");
    await classifier(loop, [verdict("ask", "unsure")]);
    const stub = projectStub(env, loop.project);
    const request = {
      key: "same",
      kind: "action_step" as const,
      requester: { type: "issue" as const, issue: 9, step: "rotate" },
      title: "Rotate the deploy key",
      payload: { key: "deploy" },
    };
    const first = await stub.vaultRequest(request);
    expect(await stub.vaultRequest(request)).toEqual(first);
    await stub.drain();
    const listed = (await (await api(`/projects/${loop.project}/vault`)).json()) as {
      items: VaultItemView[];
    };
    expect(listed.items.map((i) => [i.id, i.state, i.title])).toEqual([
      ["v1", "pending", "Rotate the deploy key"],
    ]);
    expect(listed.items[0]?.payload).toEqual({ key: "deploy" });
    const pending = (await (await api("/vault")).json()) as { items: VaultItemView[] };
    expect(pending.items.filter((i) => i.project === loop.project).map((i) => i.id)).toEqual(["v1"]);
    expect((await api(`/projects/${loop.project}/vault?state=bogus`)).status).toBe(400);
    expect((await api("/projects/no-such-project/vault")).status).toBe(404);
  });
});

describe("a merge held for protected paths", () => {
  it("waits in the vault; the operator's approval through the API merges it once, however often sent", async () => {
    const loop = await loopProject("vault-merge");
    const { number, held, itemId } = await heldMerge(loop);
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(false);
    const item = await projectStub(env, loop.project).vaultItem(itemId);
    expect(item).toMatchObject({
      kind: "protected_merge",
      state: "pending",
      requester: { type: "issue", issue: number },
    });
    // The model stand-in had no verdict queued: the classifier failed, and a human is asked.
    expect(item?.verdict?.verdict).toBe("ask");
    const notice = (await loop.forge.listComments(number)).find((c) =>
      c.body.startsWith("**Conveyor needs a human.**"),
    );
    expect(notice?.body).toContain(`/conveyor approve ${itemId}`);

    const approve = () =>
      api(`/projects/${loop.project}/vault/${itemId}/approve`, { method: "POST", body: "{}" });
    const [first, second] = await Promise.all([approve(), approve()]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    const refused = (await (first.status === 409 ? first : second).json()) as { error: string };
    // Approved, and fired once the issue acts on it (the merge).
    expect(refused.error).toMatch(new RegExp(`^${itemId} (is already|was) approved by operator`));
    expect((await approve()).status).toBe(409);

    const merged = await until(loop, number, (v) => v.state === "merged" && v.outbox.length === 0);
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(true);
    const decisions = merged.history.filter((h) => h.event === "vault_decision");
    expect(decisions.map((h) => [h.outcome, h.from, h.to])).toEqual([
      ["applied", "awaiting_approval", "merging"],
    ]);
    const fired = (await projectStub(env, loop.project).vaultItem(itemId)) as VaultItem | null;
    expect(fired?.audit.map((e) => [e.action, e.by])).toEqual([
      ["requested", `issue #${number}`],
      ["classified", "policy"],
      ["approved", "operator"],
      ["fired", "operator"],
    ]);
  });

  it("a writer's approving review (the forge's webhook) decides the same vault item: one audit trail", async () => {
    const loop = await loopProject("vault-review");
    const { number, held, itemId } = await heldMerge(loop);
    await control("user", { repo: loop.repo, login: "visitor", level: "read" });
    await control("user", { repo: loop.repo, login: "maintainer", level: "write" });
    const approving = (login: string) =>
      reviewDelivery(loop, held.prNumber ?? 0, {
        kind: "approved",
        by: login,
        body: "LGTM",
        headSha: held.headSha ?? "",
      });
    // A reader's review is shown on the issue, not obeyed (docs/operating.md#people-on-the-pull-request).
    expect(await (await approving("visitor")).json()).toEqual({ accepted: true, events: 1 });
    expect((await projectStub(env, loop.project).vaultItem(itemId))?.state).toBe("pending");
    expect(await (await approving("maintainer")).json()).toEqual({ accepted: true, events: 1 });
    await until(loop, number, (v) => v.state === "merged" && v.outbox.length === 0);
    const item = await projectStub(env, loop.project).vaultItem(itemId);
    expect(item?.state).toBe("fired");
    expect(item?.audit.filter((e) => e.action === "approved")).toEqual([
      expect.objectContaining({ by: "maintainer" }),
    ]);
    const reject = await api(`/projects/${loop.project}/vault/${itemId}/reject`, {
      method: "POST",
      body: JSON.stringify({ reason: "too late" }),
    });
    expect(reject.status).toBe(409);
  });

  it("is withdrawn when the issue stops waiting on it: approving it then is refused, nothing fires", async () => {
    const loop = await loopProject("vault-withdrawn");
    const { number, itemId } = await heldMerge(loop);
    await send(loop, number, { type: "abandon", by: "operator" });
    await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    const item = await projectStub(env, loop.project).vaultItem(itemId);
    expect(item?.state).toBe("withdrawn");
    expect(item?.audit.at(-1)).toMatchObject({
      action: "withdrawn",
      by: `issue #${number}`,
      reason: "the issue is abandoned (abandon): it no longer waits for the vault",
    });
    const late = await api(`/projects/${loop.project}/vault/${itemId}/approve`, { method: "POST" });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: string }).error).toBe(
      `${itemId} was withdrawn: the issue is abandoned (abandon): it no longer waits for the vault`,
    );
    expect((await projectStub(env, loop.project).vaultItem(itemId))?.audit.map((e) => e.action)).toEqual([
      "requested",
      "classified",
      "withdrawn",
    ]);
  });

  it("an approval its issue no longer waits for is withdrawn with the issue's reason, never fired", async () => {
    const loop = await loopProject("vault-stale");
    await classifier(loop, [verdict("ask", "unsure")]);
    const stub = projectStub(env, loop.project);
    // A held merge's item whose issue has moved on (here: an issue that never held a merge).
    const { id } = await stub.vaultRequest({
      key: "stale-merge",
      kind: "protected_merge",
      requester: { type: "issue", issue: 9 },
      title: "Merge pull request #3 of #9",
      payload: { pr: 3 },
    });
    await stub.drain();
    const res = await api(`/projects/${loop.project}/vault/${id}/approve`, { method: "POST" });
    expect(res.status).toBe(200);
    await stub.drain();
    const item = await stub.vaultItem(id);
    expect(item?.state).toBe("withdrawn");
    expect(item?.audit.map((e) => e.action)).toEqual(["requested", "classified", "approved", "withdrawn"]);
    expect(item?.audit.at(-1)?.reason).toMatch(
      /^issue #9 no longer waits on it: vault_decision does not apply/,
    );
  });

  it("rejected by a writer's /conveyor reject: abandoned with a comment naming who and why", async () => {
    const loop = await loopProject("vault-rejected");
    const { number, itemId } = await heldMerge(loop);
    await control("user", { repo: loop.repo, login: "maintainer", level: "write" });
    const res = await commentDelivery(
      loop,
      number,
      "maintainer",
      `/conveyor reject ${itemId} pins an unreviewed image`,
    );
    expect(res.status).toBe(202);
    const view = await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    expect(view.reason).toBe("the merge was rejected by maintainer: pins an unreviewed image");
    const notes = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(
      notes.some((b) =>
        b.includes(`(vault item ${itemId}) was rejected by maintainer: pins an unreviewed image`),
      ),
    ).toBe(true);
    expect((await loop.forge.getPullRequest(view.prNumber ?? 0)).merged).toBe(false);
  });

  it("a non-writer's /conveyor approve is refused with one reply and changes nothing; a writer's merges", async () => {
    const loop = await loopProject("vault-writers");
    const { number, held, itemId } = await heldMerge(loop);
    await control("user", { repo: loop.repo, login: "visitor", level: "read" });
    await control("user", { repo: loop.repo, login: "maintainer", level: "write" });
    const refused = await commentDelivery(loop, number, "visitor", `/conveyor approve ${itemId}`);
    expect(await refused.json()).toEqual({ accepted: true, events: 1 });
    await until(loop, number, (v) => v.outbox.length === 0);
    const replies = (await loop.forge.listComments(number)).filter((c) => c.body.startsWith("@visitor "));
    expect(replies.map((c) => c.body)).toEqual([expect.stringContaining("only users with write access")]);
    expect((await projectStub(env, loop.project).vaultItem(itemId))?.state).toBe("pending");
    expect((await until(loop, number, () => true)).state).toBe("awaiting_approval");

    const unknown = await commentDelivery(loop, number, "maintainer", "/conveyor approve v99");
    expect(unknown.status).toBe(202);
    await until(loop, number, (v) => v.outbox.length === 0);
    const answered = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(answered).toContainEqual(
      expect.stringMatching(/^@maintainer cannot approve v99: no vault item v99/),
    );

    await commentDelivery(loop, number, "maintainer", `/conveyor approve ${itemId}`);
    await until(loop, number, (v) => v.state === "merged");
    expect((await loop.forge.getPullRequest(held.prNumber ?? 0)).merged).toBe(true);
  });

  it("the dashboard lists it and its form decides it; a post without the CSRF token changes nothing", async () => {
    const loop = await loopProject("vault-dashboard");
    const { number, itemId } = await heldMerge(loop);
    const cookie = await sessionCookie();
    const html = await (await page("/dashboard/approvals", cookie)).text();
    expect(html).toContain(`${itemId} Merge pull request #`);
    // Listed once: as the vault's item, naming its issue and what approving does, not also as a held merge
    // with a second Approve / Reject of its own.
    const issueLink = `href="/dashboard/projects/${loop.project}/issues/${number}"`;
    expect(html.split(issueLink)).toHaveLength(2);
    expect(html).not.toContain(`action="/dashboard/projects/${loop.project}/issues/${number}/actions"`);
    expect(html).toMatch(/<dt>merges<\/dt><dd>pull request #\d+ at <code>[0-9a-f]{12}<\/code>/);
    // The issue's page names the item and decides it with the vault's form, not the issue's own buttons.
    const issuePage = await (
      await page(`/dashboard/projects/${loop.project}/issues/${number}`, cookie)
    ).text();
    expect(issuePage).toContain(
      `<dt>vault item</dt><dd><a href="/dashboard/vault?project=${loop.project}#vault-${itemId}">${itemId}</a>`,
    );
    expect(issuePage).toContain(`action="/dashboard/projects/${loop.project}/vault/${itemId}"`);
    expect(issuePage).not.toContain(
      'value="approve" class="action-approve">Approve</button></form><h2>Session',
    );
    const action = `/dashboard/projects/${loop.project}/vault/${itemId}`;
    const fields = formFields(html, action);
    const forged = await post(action, cookie, { ...fields, csrf: "", decision: "approve" });
    expect(forged.status).toBe(403);
    expect((await projectStub(env, loop.project).vaultItem(itemId))?.state).toBe("pending");

    const res = await post(action, cookie, { ...fields, decision: "reject", reason: "not this week" });
    expect(res.status).toBe(303);
    const item = await projectStub(env, loop.project).vaultItem(itemId);
    expect(item?.audit.at(-1)).toMatchObject({ action: "rejected", by: "operator", reason: "not this week" });
    const view = await until(loop, number, (v) => v.state === "abandoned");
    expect(view.reason).toBe("the merge was rejected by operator: not this week");
    // Decided, it is on the vault page with its audit trail.
    await projectStub(env, loop.project).drain();
    const history = await (
      await page(`/dashboard/vault?project=${loop.project}&state=rejected`, cookie)
    ).text();
    expect(history).toContain(`id="vault-${itemId}"`);
    expect(history).toMatch(
      /<strong>requested<\/strong> by issue #\d+.*<strong>rejected<\/strong> by operator: not this week/s,
    );
  });

  it("expires unanswered on the project's alarm: the issue is abandoned, saying so", async () => {
    const loop = await loopProject("vault-expiry", { vault: { expiryMs: 1_000 } });
    const { number, itemId } = await heldMerge(loop);
    // The deadline passes; the alarm armed for it expires the item.
    const stub = await expireOnAlarm(loop.project, itemId);
    expect((await stub.vaultItem(itemId))?.state).toBe("expired");
    const view = await until(loop, number, (v) => v.state === "abandoned" && v.outbox.length === 0);
    expect(view.reason).toBe("the merge was not approved before its vault item expired");
    const notes = (await loop.forge.listComments(number)).map((c) => c.body);
    expect(
      notes.some((b) => b.startsWith(`The merge of this change (vault item ${itemId}) was not approved`)),
    ).toBe(true);
    const late = await api(`/projects/${loop.project}/vault/${itemId}/approve`, { method: "POST" });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { error: string }).error).toMatch(/expired at .* with nobody deciding/);
  });
});
