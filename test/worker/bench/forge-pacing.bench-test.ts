/**
 * 10 000 deliveries over 500 issues of one GitHub project (the local forge, GitHub's documented secondary
 * limits, no scaling): each delivery a lifecycle event whose effect posts a comment. While they are
 * delivered and two minutes on, the forge records when each content-creating request arrives; the busiest
 * minute must stay within GitHub's 80, and no effect may have failed for it (the rest wait their turn in
 * their outboxes). It takes about 7 minutes on the 2-core VM.
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { issueStub } from "../../../src/issue-stub.ts";
import { githubProjectWithIssues } from "../support/github-project.ts";
import { control } from "../support/review.ts";

const ISSUES = 500;
const DELIVERIES = 10_000;
const WATCH_MS = 120_000;
const emit = (figure: object) => console.log(JSON.stringify(figure));

it("keeps content-creating requests within GitHub's per-minute limit under 10 000 deliveries", {
  timeout: 600_000,
}, async () => {
  const { loop, numbers } = await githubProjectWithIssues("pacing-bench", ISSUES);
  const started = Date.now();
  for (let at = 0; at < DELIVERIES; at += ISSUES) {
    await Promise.all(
      numbers.map((number, i) =>
        issueStub(env, loop.project, number).apply({
          id: `delivery-${at + i}`,
          project: loop.project,
          number,
          cause: { kind: "system", id: "bench" },
          event: { type: "reply", thread: number, text: `Delivery ${at + i}` },
        }),
      ),
    );
  }
  await new Promise((resolve) => setTimeout(resolve, WATCH_MS));

  type Write = { method: string; path: string; at: number; refused: boolean };
  const creates = (await control<Write[]>("writes", { repo: loop.repo }))
    .filter((write) => write.method === "POST" && write.at >= started)
    .map((write) => write.at)
    .sort((a, b) => a - b);
  let busiest = 0;
  for (let i = 0, j = 0; j < creates.length; j++) {
    while ((creates[j] ?? 0) - (creates[i] ?? 0) >= 60_000) i++;
    busiest = Math.max(busiest, j - i + 1);
  }
  const views = await Promise.all(numbers.slice(0, 50).map((n) => issueStub(env, loop.project, n).view()));
  const failed = views.flatMap((view) => view?.deadLetters ?? []).length;
  emit({ name: "forge_creates_busiest_minute", value: busiest, unit: "requests", target: 80 });
  const minutes = (Date.now() - started) / 60_000;
  emit({ name: "forge_creates_per_minute_average", value: creates.length / minutes, unit: "requests" });
  emit({ name: "forge_pacing_dead_letters", value: failed, unit: "effects", target: 0 });
  expect(busiest).toBeLessThanOrEqual(80);
  expect(failed).toBe(0);
});
