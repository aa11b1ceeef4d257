/** `npm run bench`: starts the local Worker and prints one JSON object per figure. */
import { startLocalWorker } from "../support/worker.ts";
import { benchIngest } from "./ingest.ts";

const worker = await startLocalWorker();
try {
  await benchIngest(worker.url);
} finally {
  await worker.stop();
}
