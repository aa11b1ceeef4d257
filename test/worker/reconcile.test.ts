import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { issueStub } from "../../src/issue-stub.ts";
import { cycle } from "./support/reconcile.ts";
import { type Loop, loopProject } from "./support/review.ts";

/** One reconciliation cycle of this project's Durable Object, reduced to what these tests compare. */
async function cron(loop: Loop) {
  const { dispatched, regated, settled } = await cycle(loop);
  return { dispatched, regated, settled };
}

const view = (loop: Loop, number: number) => issueStub(env, loop.project, number).view();

describe("scheduled reconciliation (webhooks lost)", () => {
  it("dispatches a backlog issue no webhook announced; a second run changes nothing", async () => {
    const loop = await loopProject("cron-dispatch");
    const { number } = await loop.forge.createIssue({ title: "Missed", body: "", labels: ["backlog"] });
    expect(await cron(loop)).toEqual({ dispatched: 1, regated: 0, settled: 0 });
    const first = await view(loop, number);
    expect(first?.state).toBe("queued");
    await issueStub(env, loop.project, number).drain();
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 0, settled: 0 });
    expect((await view(loop, number))?.history).toEqual(first?.history);
  });

  it("regates a blocked issue whose dependency closed without a webhook", async () => {
    const loop = await loopProject("cron-deps");
    const dep = await loop.forge.createIssue({ title: "Parser", body: "", labels: [] });
    const { number } = await loop.forge.createIssue({
      title: "CLI",
      body: `## Depends on\n- #${dep.number}\n`,
      labels: ["backlog"],
    });
    expect(await cron(loop)).toMatchObject({ dispatched: 1 });
    expect(await view(loop, number)).toMatchObject({ state: "blocked", blockers: [`#${dep.number}`] });
    await issueStub(env, loop.project, number).drain();
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 0, settled: 0 });

    await loop.forge.closeIssue(dep.number);
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 1, settled: 0 });
    expect((await view(loop, number))?.state).toBe("queued");
    await issueStub(env, loop.project, number).drain();
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 0, settled: 0 });
  });

  it("settles an issue closed on the forge but live here", async () => {
    const loop = await loopProject("cron-close");
    const { number } = await loop.forge.createIssue({ title: "Gone", body: "", labels: ["backlog"] });
    await cron(loop);
    await issueStub(env, loop.project, number).drain();
    await loop.forge.closeIssue(number);
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 0, settled: 1 });
    expect(await view(loop, number)).toMatchObject({
      state: "abandoned",
      reason: "issue closed on the forge",
    });
    await issueStub(env, loop.project, number).drain();
    expect(await cron(loop)).toEqual({ dispatched: 0, regated: 0, settled: 0 });
  });

  it("a cycle through a closed issue is no cycle: the closed one waits for nothing", async () => {
    const loop = await loopProject("cron-closed-cycle");
    // #1 waits for #2, which once declared it waits for #1; #2 is closed.
    const first = await loop.forge.createIssue({
      title: "CLI",
      body: "## Depends on\n- #2\n",
      labels: ["backlog"],
    });
    const second = await loop.forge.createIssue({
      title: "Parser",
      body: "## Depends on\n- #1\n",
      labels: [],
    });
    expect([first.number, second.number]).toEqual([1, 2]);
    await loop.forge.closeIssue(second.number);
    await cron(loop);
    expect(await view(loop, first.number)).toMatchObject({ state: "queued", blockers: [] });
  });
});
