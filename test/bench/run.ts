/** `npm run bench`: starts the local Worker and prints one JSON object per figure. */
import { startLocalWorker } from "../support/worker.ts";
import { benchClaimLatency } from "./claim.ts";
import { benchDashboard } from "./dashboard.ts";
import { benchIngest } from "./ingest.ts";
import { benchJobStart } from "./job-start.ts";

const worker = await startLocalWorker();
try {
  // First, on a quiet Worker: the claim bench's issues may still deliver forge effects after it returns.
  await benchIngest(worker.url);
  await benchClaimLatency(worker.url);
} finally {
  await worker.stop();
}
await benchJobStart();
// Starts its own Worker, seeded with 10 000 issues.
await benchDashboard();
