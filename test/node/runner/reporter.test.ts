import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunnerApi } from "../../../runner/api.ts";
import { REPORT_ATTEMPTS, Reporter } from "../../../runner/reporter.ts";
import { makeJob } from "./support/context.ts";
import { FakeWorker } from "./support/fake-worker.ts";

/** Quick retries: what is tested is how long the reporter keeps trying, counted in attempts. */
const BACKOFF = { baseMs: 5, maxMs: 20, jitter: 0 };

let worker: FakeWorker;

beforeEach(async () => {
  worker = await FakeWorker.start();
});

afterEach(async () => {
  expect(worker.violations).toEqual([]);
  await worker.close();
});

async function leased(held: () => boolean) {
  const api = new RunnerApi(worker.url, worker.issueToken());
  worker.enqueue(makeJob({ id: "job-1", cloneUrl: "https://forge.test/acme/widgets.git" }));
  const claim = await api.claim({ waitMs: 0, holding: [] });
  if (!claim) throw new Error("nothing to claim");
  return new Reporter({
    api,
    jobId: claim.job.id,
    leaseToken: claim.leaseToken,
    redact: (text) => text,
    onLost: () => {},
    warn: () => {},
    leaseHeld: held,
    backoff: BACKOFF,
  });
}

describe("the job's last word", () => {
  it("is sent again for as long as the lease can be valid, past the reporter's usual attempts", async () => {
    const reporter = await leased(() => true);
    worker.failing.add("complete");
    const done = reporter.complete({ phase: "awaiting_ci", headSha: "abc1234" });
    await worker.waitFor(() => worker.callsOf("complete").length > 2 * REPORT_ATTEMPTS);
    worker.failing.delete("complete");
    await done;
    expect(worker.outcome("job-1")).toMatchObject({ kind: "complete", body: { phase: "awaiting_ci" } });
  });

  it("is given up once the lease cannot be valid any more", async () => {
    let held = true;
    const reporter = await leased(() => held);
    worker.failing.add("complete");
    const done = reporter.complete({ phase: "done" });
    await worker.waitFor(() => worker.callsOf("complete").length > REPORT_ATTEMPTS);
    held = false;
    await done;
    const tries = worker.callsOf("complete").length;
    expect(worker.outcomes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 10 * BACKOFF.maxMs));
    expect(worker.callsOf("complete")).toHaveLength(tries);
  });
});
