/** `npm run bench`: starts the local Worker and prints one JSON object per figure. */
import { existsSync } from "node:fs";
import { startMiniflareWorker } from "../support/miniflare-worker.ts";
import { startLocalWorker } from "../support/worker.ts";
import { benchClaimLatency } from "./claim.ts";
import { benchClaimToRequest } from "./claim-to-request.ts";
import { benchDashboard } from "./dashboard.ts";
import { benchFleet } from "./fleet.ts";
import { benchIngest } from "./ingest.ts";
import { benchJobStart } from "./job-start.ts";
import { benchLabelToSessionStart } from "./label-to-session.ts";
import { emit } from "./load.ts";
import { benchWorkerMemory } from "./memory.ts";
import { benchOutcomes } from "./outcomes.ts";
import { benchPromptCache } from "./prompt-cache.ts";
import { benchReconciliation } from "./reconcile.ts";
import { benchSandboxStart } from "./sandbox-start.ts";
import { benchSanitizer } from "./sanitizer.ts";
import { benchThroughput } from "./throughput.ts";

// Local D1 and Durable Objects on a memory-backed filesystem where the machine has one: this VM's virtual
// disk took a third of a label delivery's time in fsyncs, a cost of the dev machine (docs/performance.md).
const MEMORY_FS = "/dev/shm";
const stateParent = existsSync(MEMORY_FS) ? MEMORY_FS : undefined;
console.error(`local Worker state in ${stateParent ?? "the temporary directory"}`);
const worker = await startLocalWorker({ stateParent });
try {
  // First, on a quiet Worker: the claim bench's issues may still deliver forge effects after it returns.
  await benchIngest(worker.url);
  await benchClaimLatency(worker.url);
} finally {
  await worker.stop();
}
// A fleet of 1 000 sessions on one project, then 10 000 live issues: each on a Worker of its own, under
// Miniflare directly: wrangler dev's proxy, not Conveyor, ran out of descriptors at a thousand sessions.
const fleetWorker = await startMiniflareWorker({ stateParent });
try {
  await benchFleet(fleetWorker);
} finally {
  await fleetWorker.stop();
}
await benchWorkerMemory({ stateParent });
await benchSanitizer();
await benchJobStart();
// A claim to the first model request with Claude Code started beside the worktree's preparation, and without.
await benchClaimToRequest();
// The runner's driver against the caching stand-in: later rounds of one issue against its first.
await benchPromptCache();
// Starts its own Worker, seeded with 10 000 issues.
await benchDashboard();
// Its own Worker too, seeded with 100 000 edges of history.
await benchOutcomes();
// Worker-side, in workerd: reconciliation's forge calls, 100 projects at once, the cron's subrequests.
await benchReconciliation();
// A bare sandboxed Claude Code start (the floor), then the whole factory (forge, Worker, runner, sandbox,
// stand-in model) from a label to the session's first request, one after the other.
const floorMs = await benchSandboxStart();
const labelMs = await benchLabelToSessionStart();
// How near a session's start from the label is to the agent's own start on this machine (its floor).
emit({
  name: "label_to_first_request_ratio",
  value: labelMs / floorMs,
  unit: "ratio",
  target: "<= 1.3",
  baseline: floorMs,
});
// 50 issues through the whole factory, label to merge, on 2 runners × 4 slots: issues a minute and overhead.
await benchThroughput();
