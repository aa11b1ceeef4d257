/**
 * Writes to a GitHub forge paced per token within its secondary limits (here scaled down: 4 content-creating
 * requests a second), and its refusals over them (403 with Retry-After) waited out: effects put back, none
 * lost, none sent twice. The local forge records when every write arrived.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IssueView } from "../../src/contracts/issue-object.ts";
import { issueStub } from "../../src/issue-stub.ts";
import { githubProjectWithIssues } from "./support/github-project.ts";
import { control, type Loop } from "./support/review.ts";

type Write = { method: string; path: string; at: number; refused: boolean };
const PACING = { creates: [{ count: 4, windowMs: 1_000 }], writeSpacingMs: 0 };

const githubProject = (name: string, count: number) =>
  githubProjectWithIssues(name, count, { forgePacing: PACING });

/** One reply on each issue at once: a comment effect each, all wanting the forge in the same moment. */
async function replyOnEach(loop: Loop, numbers: number[]) {
  await Promise.all(
    numbers.map((number) =>
      issueStub(env, loop.project, number).apply({
        id: `reply-${number}`,
        project: loop.project,
        number,
        cause: { kind: "system", id: "test" },
        event: { type: "reply", thread: number, text: `Reply to #${number}` },
      }),
    ),
  );
}

/** Delivers each issue's due effects until its outbox is empty (paced ones come due at their turn). */
async function settled(loop: Loop, numbers: number[]): Promise<IssueView[]> {
  const deadline = Date.now() + 25_000;
  return Promise.all(
    numbers.map(async (number) => {
      const stub = issueStub(env, loop.project, number);
      for (;;) {
        await stub.drain();
        const view = await stub.view();
        if (view && view.outbox.length === 0) return view;
        if (Date.now() > deadline) throw new Error(`#${number} not settled: ${JSON.stringify(view?.outbox)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
}

const commentWrites = async (loop: Loop) =>
  (await control<Write[]>("writes", { repo: loop.repo })).filter(
    (write) => write.method === "POST" && write.path.endsWith("/comments"),
  );

describe("a token's pacer", () => {
  it("grants concurrent writers turns so that no window holds more than its count", async () => {
    const pacer = env.PACERS.get(env.PACERS.idFromName("concurrent-writers"));
    const { count, windowMs } = PACING.creates[0] ?? { count: 0, windowMs: 0 };
    const answers = await Promise.all(
      Array.from({ length: 13 }, () => pacer.acquire("create", PACING, 60_000)),
    );
    const turns = answers.map((answer) => ("at" in answer ? answer.at : Number.NaN)).sort((a, b) => a - b);
    expect(turns.filter(Number.isNaN)).toEqual([]);
    for (let i = count; i < turns.length; i++)
      expect((turns[i] ?? 0) - (turns[i - count] ?? 0)).toBeGreaterThanOrEqual(windowMs);
    // Writers that would wait longer than they accept are named a time and not counted.
    expect(await pacer.acquire("create", PACING, 100)).toEqual({ retryAt: turns[12] });
  });
});

describe("pacing writes to GitHub per token", () => {
  it("keeps content-creating requests within the limit when every issue posts at once", async () => {
    const { loop, human, numbers } = await githubProject("paced", 16);
    const start = Date.now();
    await replyOnEach(loop, numbers);
    const views = await settled(loop, numbers);

    const arrivals = (await commentWrites(loop)).map((write) => write.at).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(numbers.length);
    // The i-th write's turn is no earlier than floor(i / count) windows after the first; a write reaches the
    // forge after its turn, however late (exact spacing of the turns is the pacer's own test below).
    const { count, windowMs } = PACING.creates[0] ?? { count: 0, windowMs: 0 };
    arrivals.forEach((at, i) => {
      expect(at - start).toBeGreaterThanOrEqual(Math.floor(i / count) * windowMs);
    });
    for (const number of numbers) {
      const comments = (await human.listComments(number)).filter((c) =>
        c.body.startsWith(`Reply to #${number}`),
      );
      expect(comments).toHaveLength(1);
    }
    expect(views.flatMap((view) => view.deadLetters)).toEqual([]);
  });

  it("waits out a 403 with Retry-After: every writer of the token held back, none lost or sent twice", async () => {
    const { loop, human, numbers } = await githubProject("refused", 5);
    await control("refuse-writes", { repo: loop.repo, count: 2, retryAfterSeconds: 3 });
    // The first two post and are refused; the others want to post while the forge's wait runs.
    await replyOnEach(loop, numbers.slice(0, 2));
    for (let refused = 0; refused < 2; await new Promise((resolve) => setTimeout(resolve, 50)))
      refused = (await commentWrites(loop)).filter((write) => write.refused).length;
    await replyOnEach(loop, numbers.slice(2));
    const views = await settled(loop, numbers);

    const writes = await commentWrites(loop);
    const firstRefusal = writes.find((write) => write.refused)?.at ?? 0;
    expect(writes.filter((write) => write.refused)).toHaveLength(2);
    // Every writer of the token held back until the forge's wait was over.
    const after = writes.filter((write) => !write.refused).map((write) => write.at - firstRefusal);
    expect(after.filter((ms) => ms < 3_000)).toEqual([]);
    expect(after).toHaveLength(numbers.length);
    for (const number of numbers) {
      const comments = (await human.listComments(number)).filter((c) =>
        c.body.startsWith(`Reply to #${number}`),
      );
      expect(comments).toHaveLength(1);
    }
    expect(views.flatMap((view) => view.deadLetters)).toEqual([]);
    expect(views.flatMap((view) => view.history).filter((h) => h.event === "effect_failed")).toEqual([]);
  });
});
