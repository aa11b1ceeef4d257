import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { z } from "zod";
import {
  claimRequest,
  claimResponse,
  completeRequest,
  eventsRequest,
  failRequest,
  heartbeatRequest,
  heartbeatResponse,
  type Job,
  type RunnerEvent,
  registerRequest,
  registerResponse,
} from "../../../../src/runner-api/contract.ts";
import {
  type ReportAnswer,
  renewedLeaseSchema,
  reportRequest,
  reportResponse,
} from "../../../../src/runner-api/report-contract.ts";

/**
 * A call as the runner made it. A report (`/runner/v1/report`) is recorded as its jobs' calls, each as the
 * route it stands for (`heartbeat` when it renews the lease, else `events`), with the status of its answer.
 */
export type Call = {
  route: "register" | "claim" | "report" | "heartbeat" | "events" | "complete" | "fail";
  jobId?: string;
  body: Record<string, unknown>;
  status: number;
  at: number;
};

export type Outcome =
  | { kind: "complete"; jobId: string; body: z.infer<typeof completeRequest> }
  | { kind: "fail"; jobId: string; body: z.infer<typeof failRequest> };

type Lease = { token: string; expiresAt: number; job: Job };

/**
 * The Worker's clock, taken before any test fakes this process's `Date`: a test that sets the runner's clock
 * wrong must not move the Worker's with it (they are different machines).
 */
const workerNow = Date.now.bind(Date);

const JOB_ROUTE = /^\/runner\/v1\/jobs\/([^/]+)\/(heartbeat|events|complete|fail)$/;

/**
 * The Worker's side of the runner API, in process and in memory: every request is parsed with the contract's
 * schemas (a request that does not parse is answered 400 and recorded in `violations`), every response is
 * built through them. Leases are fenced like the real thing: a call with a token that is not the job's
 * current one is answered 409, and a lease that expired is re-leased with `attempt + 1` on the next claim.
 */
export class FakeWorker {
  readonly calls: Call[] = [];
  readonly violations: string[] = [];
  readonly outcomes: Outcome[] = [];
  readonly events = new Map<string, RunnerEvent[]>();
  readonly registrationToken = `reg-${randomUUID()}`;
  /** Claim requests whose connection is still open: a killed runner's polls close with its sockets. */
  openPolls = 0;
  leaseMs: number;
  /** Cut off: every request's connection is dropped unanswered, as by a network partition. */
  unreachable = false;
  /** Every authenticated call is refused 401, as while the Worker cannot read its runners (then recovers). */
  refusingTokens = false;
  /** As a Worker older than `/runner/v1/report`: it answers 404 there. */
  withoutReport = false;
  /** Routes answered 503, as by a Worker failing on them for a while (heartbeats may still pass). */
  readonly failing = new Set<Call["route"]>();
  #url = "";
  #server = createServer((req, res) => void this.#handle(req, res));
  #queue: Job[] = [];
  #leases = new Map<string, Lease>();
  #cancelled = new Set<string>();
  /** Runner tokens issued so far. */
  readonly tokens = new Set<string>();
  #wakeUp: (() => void)[] = [];

  private constructor(leaseMs: number) {
    this.leaseMs = leaseMs;
  }

  static async start(options: { leaseMs?: number } = {}): Promise<FakeWorker> {
    const worker = new FakeWorker(options.leaseMs ?? 30_000);
    await new Promise<void>((resolve) => worker.#server.listen(0, "127.0.0.1", resolve));
    worker.#url = `http://127.0.0.1:${(worker.#server.address() as AddressInfo).port}`;
    return worker;
  }

  get url(): string {
    return this.#url;
  }

  /** A runner token as if issued by an earlier registration. */
  issueToken(): string {
    const token = `rt-${randomUUID()}`;
    this.tokens.add(token);
    return token;
  }

  enqueue(job: Job): void {
    this.#queue.push(job);
    for (const wake of this.#wakeUp.splice(0)) wake();
  }

  /** The issue was abandoned: the next heartbeat answers `cancelled: true`. */
  cancel(jobId: string): void {
    this.#cancelled.add(jobId);
  }

  /** Takes the lease away, as if it had expired and gone to another runner. */
  revoke(jobId: string): void {
    this.#leases.delete(jobId);
  }

  /** Lets the lease run out now; the next claim re-leases the job with `attempt + 1`. */
  expire(jobId: string): void {
    const lease = this.#leases.get(jobId);
    if (lease) lease.expiresAt = 0;
  }

  leaseToken(jobId: string): string | undefined {
    return this.#leases.get(jobId)?.token;
  }

  callsOf(route: Call["route"], jobId?: string): Call[] {
    return this.calls.filter((c) => c.route === route && (jobId === undefined || c.jobId === jobId));
  }

  outcome(jobId: string): Outcome | undefined {
    return this.outcomes.find((o) => o.jobId === jobId);
  }

  async waitFor<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
    const deadline = workerNow() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value !== undefined && value !== false) return value;
      if (workerNow() > deadline) throw new Error(`fake worker: timed out waiting (${probe.toString()})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): Promise<void> {
    for (const wake of this.#wakeUp.splice(0)) wake();
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const body = await readJson(req);
    const match = JOB_ROUTE.exec(path);
    const route = (match ? match[2] : path.replace("/runner/v1/", "")) as Call["route"];
    const call: Call = {
      route,
      body,
      status: 0,
      at: workerNow(),
      ...(match ? { jobId: decodeURIComponent(match[1] ?? "") } : {}),
    };
    const jobCalls = route === "report" ? reportedCalls(body, call.at) : [call];
    this.calls.push(...jobCalls);
    if (this.unreachable) {
      for (const c of jobCalls) c.status = -1;
      req.socket.destroy();
      return;
    }
    const answer = (status: number, value?: unknown) => {
      // A report's jobs were answered each on its own (#report).
      for (const c of jobCalls) if (c.status === 0) c.status = status;
      if (value === undefined) res.writeHead(status).end();
      else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    };
    if (req.method !== "POST") return answer(405, { error: "POST only" });
    if (route === "register") return answer(...this.#register(body));
    if (this.refusingTokens || !this.tokens.has(req.headers.authorization?.replace(/^Bearer /, "") ?? "")) {
      return answer(401, { error: "unknown runner token" });
    }
    if (route === "claim") {
      let gone = false;
      this.openPolls++;
      res.on("close", () => {
        gone = true;
        this.openPolls--;
      });
      return answer(...(await this.#claim(body, () => gone)));
    }
    if (jobCalls.some((c) => this.failing.has(c.route))) return answer(503, { error: `${route} is failing` });
    if (call.jobId !== undefined && match) return answer(...this.#job(call.jobId, route, body));
    if (route === "report" && !this.withoutReport) return answer(...this.#report(body, jobCalls));
    answer(404, { error: `no route ${path}` });
  }

  #register(body: unknown): [number, unknown] {
    const request = this.#parse(registerRequest, body, "register");
    if (!request) return [400, { error: "bad register request" }];
    if (request.registrationToken !== this.registrationToken)
      return [401, { error: "bad registration token" }];
    return [
      200,
      registerResponse.parse({ runnerId: `runner-${this.tokens.size + 1}`, token: this.issueToken() }),
    ];
  }

  /** Never leases a job to a poll whose runner went away (killed, or stopped claiming). */
  async #claim(body: unknown, gone: () => boolean): Promise<[number, unknown?]> {
    const request = this.#parse(claimRequest, body, "claim");
    if (!request) return [400, { error: "bad claim request" }];
    // The runner holds back: as the Worker does, it is given nothing (src/runner-api/routes.ts).
    if (request.pressure) return [204];
    const deadline = workerNow() + request.waitMs;
    for (;;) {
      if (gone()) return [204];
      this.#requeueExpired();
      const job = this.#queue.shift();
      if (job) {
        const lease = { token: `lease-${randomUUID()}`, expiresAt: workerNow() + this.leaseMs, job };
        this.#leases.set(job.id, lease);
        const leaseMs = this.leaseMs;
        return [
          200,
          claimResponse.parse({ job, leaseToken: lease.token, leaseExpiresAt: lease.expiresAt, leaseMs }),
        ];
      }
      const left = deadline - workerNow();
      if (left <= 0 || !this.#server.listening) return [204];
      await new Promise<void>((resolve) => {
        this.#wakeUp.push(resolve);
        setTimeout(resolve, Math.min(left, 100));
      });
    }
  }

  #requeueExpired(): void {
    for (const [jobId, lease] of this.#leases) {
      if (lease.expiresAt > workerNow()) continue;
      this.#leases.delete(jobId);
      this.#queue.push({ ...lease.job, attempt: lease.job.attempt + 1 });
    }
  }

  /** Each job's part as its own route would answer it; the report answers 200 with every job's answer. */
  #report(body: unknown, jobCalls: Call[]): [number, unknown?] {
    const request = this.#parse(reportRequest, body, "report");
    if (!request) return [400, { error: "bad report request" }];
    const answers = request.jobs.map((item, i): ReportAnswer => {
      const { jobId, leaseToken, heartbeat, events } = item;
      let [status, value] = [204, undefined as unknown];
      if (events.length > 0) [status, value] = this.#job(jobId, "events", { leaseToken, events });
      if (heartbeat && status < 300) [status, value] = this.#job(jobId, "heartbeat", { leaseToken });
      const call = jobCalls[i];
      if (call) call.status = status;
      if (status >= 300) return { jobId, ok: false, status, error: (value as { error: string }).error };
      return { jobId, ok: true, ...(heartbeat && { lease: renewedLeaseSchema.parse(value) }) };
    });
    const response = reportResponse.parse({ jobs: answers });
    return [200, response];
  }

  #job(jobId: string, route: Call["route"], body: unknown): [number, unknown?] {
    const schemas = {
      heartbeat: heartbeatRequest,
      events: eventsRequest,
      complete: completeRequest,
      fail: failRequest,
    };
    const schema: z.ZodType<{ leaseToken: string }> = schemas[route as keyof typeof schemas];
    const request = this.#parse(schema, body, route);
    if (!request) return [400, { error: `bad ${route} request` }];
    const lease = this.#leases.get(jobId);
    if (!lease || lease.token !== request.leaseToken) return [409, { error: "not your lease" }];
    switch (route) {
      case "heartbeat":
        lease.expiresAt = workerNow() + this.leaseMs;
        return [
          200,
          heartbeatResponse.parse({
            leaseExpiresAt: lease.expiresAt,
            leaseMs: this.leaseMs,
            cancelled: this.#cancelled.has(jobId),
          }),
        ];
      case "events": {
        const list = this.events.get(jobId) ?? [];
        list.push(...eventsRequest.parse(body).events);
        this.events.set(jobId, list);
        return [204];
      }
      default:
        this.#leases.delete(jobId);
        this.outcomes.push(
          route === "complete"
            ? { kind: "complete", jobId, body: completeRequest.parse(body) }
            : { kind: "fail", jobId, body: failRequest.parse(body) },
        );
        return [204];
    }
  }

  #parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T | undefined {
    const parsed = schema.safeParse(body);
    if (!parsed.success) this.violations.push(`${what}: ${parsed.error.message}`);
    return parsed.success ? parsed.data : undefined;
  }
}

/** A report's jobs as the calls they stand for (a malformed report stands for none). */
function reportedCalls(body: Record<string, unknown>, at: number): Call[] {
  const jobs = Array.isArray(body.jobs) ? (body.jobs as Record<string, unknown>[]) : [];
  return jobs.map((job) => ({
    route: job.heartbeat === true ? "heartbeat" : "events",
    jobId: String(job.jobId),
    body: job,
    status: 0,
    at,
  }));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}
