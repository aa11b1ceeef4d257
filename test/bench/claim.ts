/** Jobs out: how soon a long-polling runner gets a job that was just enqueued on the local Worker. */
import { RunnerApi } from "../../runner/api.ts";
import { sleep } from "../../runner/sleep.ts";
import { benchProject } from "./forge-project.ts";
import { emit, percentile } from "./load.ts";

/**
 * A runner long-polls `claim`; once its poll waits in the ProjectDO, an operator triages a ready issue. Measured:
 * from the triage's answer (the event is recorded; the issue's outbox then enqueues the job) to the job
 * arriving at the runner: the woken poll's empty answer and the claim that follows it. Each job is completed (failed) before the next trial, so the slot is free
 * again. The project's forge is the local one, where the issues' labels and comments land: a forge that
 * refuses them would leave every issue retrying in the background, a load that grows with each trial.
 */
export async function benchClaimLatency(url: string, { trials = 200, warmup = 10 } = {}): Promise<void> {
  const project = "bench-claim";
  const bench = await benchProject(url, project, { parallel: 1 });
  try {
    const { operator } = bench;
    const api = new RunnerApi(url);
    const registrationToken = await operator.registrationToken();
    api.token = (await api.register({ registrationToken, name: "bench", version: "bench" })).token;

    const latenciesMs: number[] = [];
    for (let i = 0; i < warmup + trials; i++) {
      const number = await bench.issue(`Bench ${i}`);
      let arrivedAt = 0;
      const claiming = claimJob(api, project).then((claim) => {
        arrivedAt = performance.now();
        return claim;
      });
      // Long enough for the poll to be waiting in the ProjectDO, not on its way there.
      await sleep(50);
      await operator.triage(project, number);
      const answeredAt = performance.now();
      const claim = await claiming;
      if (claim?.job.issue.number !== number)
        throw new Error(`claimed ${claim?.job.issue.number}, not ${number}`);
      if (i >= warmup) latenciesMs.push(arrivedAt - answeredAt);
      await api.complete(claim.job.id, { leaseToken: claim.leaseToken, phase: "failed", reason: "bench" });
    }
    emit({ name: "claim_latency_p50", value: percentile(latenciesMs, 50), unit: "ms" });
    emit({ name: "claim_latency_p99", value: percentile(latenciesMs, 99), unit: "ms", target: "< 50" });
  } finally {
    await bench.close();
  }
}

/**
 * As the runner claims: a long poll woken by a new job answers without it (a claim that waited leases nothing,
 * its runner may have hung up meanwhile), and the runner's next claim, at once, takes it.
 */
async function claimJob(api: RunnerApi, project: string) {
  for (;;) {
    const claim = await api.claim({ waitMs: 10_000, holding: [], projects: [project] });
    if (claim) return claim;
  }
}
