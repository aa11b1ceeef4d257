/**
 * From a `labeled backlog` webhook's send to the runner's session sending its first model request, on the
 * whole local factory (`startDemo`: local forge, Worker, one runner long-polling, the Messages-API stand-in):
 * the forge's webhook, the Worker's triage and enqueue, the runner's claim, its warm mirror and worktree, the
 * sandbox, the agent's start. Each session escalates at once, so the runner is idle again for the next trial.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDemo } from "../../demo/orchestrator.ts";
import { bash, type Rule, text } from "../support/model/script.ts";
import { emit, percentile } from "./load.ts";
import { treeRss } from "./proc.ts";

const IMPLEMENT = /^Implement issue #(\d+) of /m;

const ESCALATE: Rule[] = [
  {
    when: IMPLEMENT,
    steps: [
      bash(`printf 'PHASE:escalate\\nbench: nothing to do\\n' > "$CONVEYOR_PHASE_FILE"`),
      text("Escalated: a benchmark issue."),
    ],
  },
];

/** Whether a request of issue `number`'s session came (the prompt names the issue). */
const started = (requests: readonly { body: Record<string, unknown> | undefined }[], number: number) =>
  requests.some((r) => JSON.stringify(r.body ?? {}).includes(`Implement issue #${number} of `));

/** Its p50: label → the session's first model request, ms. */
export async function benchLabelToSessionStart({
  trials = 10,
  warmup = 2,
  timeoutMs = 60_000,
  idleMs = 4_000,
} = {}): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-label-session-"));
  const demo = await startDemo({ dataDir, model: { kind: "stand-in" }, script: ESCALATE });
  try {
    const model = demo.model;
    if (!model) throw new Error("the stand-in did not start");
    const maintainer = demo.sample.client(demo.sample.accounts.maintainer);
    const times: number[] = [];
    // The runner's process tree (the runner, and a session's sandbox and Claude Code while one runs).
    const idleRss: number[] = [];
    const sessionRss: number[] = [];
    for (let i = 0; i < warmup + trials; i++) {
      if (i >= warmup) idleRss.push(treeRss(demo.runner.pid).bytes);
      const sent = performance.now();
      // The label comes with the issue, from a writer: its `opened` webhook queues it.
      const { number } = await maintainer.createIssue({
        title: `Bench ${i}`,
        body: "Nothing.",
        labels: ["backlog"],
      });
      while (!started(model.requests, number)) {
        if (performance.now() - sent > timeoutMs)
          throw new Error(`issue #${number}: no session within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 2));
      }
      if (i >= warmup) {
        times.push(performance.now() - sent);
        // Its first request is out: the session's sandbox and agent are up.
        sessionRss.push(treeRss(demo.runner.pid).bytes);
      }
      // Idle again: the escalation's comment is the session's last effect.
      await new Promise((r) => setTimeout(r, idleMs));
    }
    const sorted = [...times].sort((a, b) => a - b);
    emit({ name: "label_to_session_start_p50", value: percentile(sorted, 50), unit: "ms", target: "< 1000" });
    emit({ name: "label_to_session_start_p99", value: percentile(sorted, 99), unit: "ms" });
    const idle = percentile(idleRss, 50);
    emit({ name: "runner_rss_idle", value: idle / 2 ** 20, unit: "MiB" });
    emit({
      name: "runner_rss_per_session",
      value: (percentile(sessionRss, 50) - idle) / 2 ** 20,
      unit: "MiB",
    });
    return percentile(sorted, 50);
  } finally {
    await demo.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLabelToSessionStart();
