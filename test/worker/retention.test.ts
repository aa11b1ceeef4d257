import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HISTORY_KEPT } from "../../durable-objects/issue/retention.ts";
import { pruneProject } from "../../src/cron/retention.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { loadProject } from "../../src/projects/store.ts";
import { freshProject, registerProject } from "./support/webhooks.ts";

const DAY = 24 * 60 * 60_000;

describe("retention", () => {
  it("an IssueDO prunes history older than the project's retention from its alarm, keeping the newest", async () => {
    const project = freshProject("retain-do");
    const stub = issueStub(env, project, 1);
    const send = (id: string, event: Parameters<typeof stub.apply>[0]["event"]) =>
      stub.apply({
        id,
        project,
        number: 1,
        cause: { kind: "system", id: "t" },
        event,
        limits: { maxCiFixes: 3, maxCriticIterations: 3, maxHumanRounds: 5, maxUpdates: 3, retentionDays: 7 },
      });
    await send("triage", { type: "triage", blockers: [] });
    // Rejected events are history too: a queued issue re-gated without change.
    for (let i = 0; i < HISTORY_KEPT + 10; i++)
      await send(`again-${i}`, { type: "dependencies", blockers: [] });
    await stub.drain();

    // Time passes: every entry but the last two is older than a week.
    const now = Date.now();
    const alarm = await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE history SET at = ? WHERE seq <= (SELECT MAX(seq) FROM history) - 2",
        now - 8 * DAY,
      );
      // What the alarm is armed for once the clock reads such entries: right away.
      await state.storage.deleteAlarm();
      return state.storage.getAlarm();
    });
    expect(alarm).toBeNull();
    // A wake-up arms the alarm for the oldest prunable entry, now due.
    await evictDurableObject(stub);
    await stub.view();
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const history = (await stub.view())?.history ?? [];
    expect(history).toHaveLength(HISTORY_KEPT);
    expect(history.at(-1)?.eventId).toBe(`again-${HISTORY_KEPT + 9}`);
  });

  it("the cron deletes a project's old deliveries and transitions, and nothing else", async () => {
    const id = freshProject("retain-d1");
    const other = freshProject("retain-other");
    await registerProject(id, "forgejo", "acme/retain", { retentionDays: 30 });
    const project = await loadProject(env, id);
    if (!project) throw new Error("not registered");
    const now = Date.now();
    for (const [projectId, age, key] of [
      [id, 31 * DAY, "old"],
      [id, 29 * DAY, "recent"],
      [other, 31 * DAY, "other"],
    ] as const) {
      await env.DB.prepare(
        "INSERT INTO deliveries (id, project_id, content_key, event, number, outcome, received_at) VALUES (?, ?, ?, 'issues', 1, 'processed', ?)",
      )
        .bind(`${projectId}-${key}`, projectId, key, now - age)
        .run();
      await env.DB.prepare(
        `INSERT INTO transitions (project_id, number, seq, from_state, to_state, event, event_id, cause_kind, cause_id, outcome, at)
         VALUES (?, 1, ?, 'new', 'queued', 'triage', ?, 'system', 't', 'applied', ?)`,
      )
        .bind(projectId, age, key, now - age)
        .run();
    }

    await pruneProject(env, project, now);

    const left = async (table: string, column: string) =>
      (
        await env.DB.prepare(
          `SELECT project_id, ${column} AS at FROM ${table} WHERE project_id IN (?, ?) ORDER BY at`,
        )
          .bind(id, other)
          .all<{ project_id: string; at: number }>()
      ).results.map((r) => [r.project_id, Math.round((now - r.at) / DAY)]);
    expect(await left("deliveries", "received_at")).toEqual([
      [other, 31],
      [id, 29],
    ]);
    expect(await left("transitions", "at")).toEqual([
      [other, 31],
      [id, 29],
    ]);
  });
});
