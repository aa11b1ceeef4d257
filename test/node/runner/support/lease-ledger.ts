import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Claim, claimResponse, heartbeatResponse } from "../../../../src/runner-api/contract.ts";
import { reportRequest, reportResponse } from "../../../../src/runner-api/report-contract.ts";
import { maxOverlap } from "./observe.ts";

/** One lease as the Worker granted it; expiries on the Worker's clock, the rest on this process's. */
export type Lease = {
  jobId: string;
  kind: Claim["job"]["kind"];
  issue: number;
  attempt: number;
  /** The bearer token of the runner it went to. */
  runner: string;
  token: string;
  /** `leaseExpiresAt` of the claim: the lease started `leaseMs` (the claim's) before it. */
  firstExpiry: number;
  /** When the Worker granted it, on the Worker's clock: `firstExpiry` less the claim's `leaseMs`. */
  grantedAt: number;
  /** The latest `leaseExpiresAt` the Worker granted it, by the claim or a heartbeat. */
  lastExpiry: number;
  /** Heartbeats the Worker answered (alone, or in a report): the first confirms the lease (an unconfirmed one is taken back early). */
  heartbeats: number;
  /** When the claim's answer passed. */
  answeredAt: number;
  /** When the runner's `complete` or `fail` left; null while it runs or if it never ended (expired). */
  endedAt: number | null;
  end: "complete" | "fail" | null;
  /** Job calls under this lease the Worker refused (403, 404, 409): the lease was not current. */
  refused: number;
};

const JOB_ROUTE = /^\/runner\/v1\/jobs\/[^/]+\/(heartbeat|events|complete|fail)$/;

/**
 * A transparent proxy in front of the Worker's runner API that keeps the ledger of the leases it granted, from
 * its own answers: what tests assert about leases (never two at once for a job, slots) comes from the Worker,
 * not from what runners say about themselves. A runner that hangs up mid-poll hangs up on the Worker too.
 */
/** A claim the runner hung up on before its answer came (it was killed mid-poll): sent and hung up, this clock. */
export type HungUpClaim = { sentAt: number; hungUpAt: number };

export class LeaseLedger {
  readonly leases: Lease[] = [];
  readonly hungUpClaims: HungUpClaim[] = [];
  #url = "";
  readonly #target: string;
  readonly #server = createServer((req, res) => void this.#forward(req, res));

  private constructor(target: string) {
    this.#target = target;
  }

  static async start(workerUrl: string): Promise<LeaseLedger> {
    const ledger = new LeaseLedger(workerUrl);
    await new Promise<void>((resolve) => ledger.#server.listen(0, "127.0.0.1", resolve));
    ledger.#url = `http://127.0.0.1:${(ledger.#server.address() as AddressInfo).port}`;
    return ledger;
  }

  get url(): string {
    return this.#url;
  }

  of(jobId: string): Lease[] {
    return this.leases.filter((lease) => lease.jobId === jobId);
  }

  /**
   * The most leases open at once, each from its claim's answer to its `complete` or `fail` (or forever): inside
   * its span on the Worker, which granted it before the answer and released it after the call, so no overlap is
   * counted that the Worker did not have.
   */
  maxConcurrent(): number {
    return maxOverlap(
      this.leases.map((l) => ({ start: l.answeredAt, end: l.endedAt ?? Number.POSITIVE_INFINITY })),
    );
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const hangUp = new AbortController();
    let hungUpAt = 0;
    res.on("close", () => {
      if (!res.writableEnded) hungUpAt = Date.now();
      hangUp.abort();
    });
    const sentAt = Date.now();
    let status: number;
    let text: string;
    try {
      const response = await fetch(new URL(req.url ?? "/", this.#target), {
        method: req.method ?? "GET",
        headers: {
          "content-type": req.headers["content-type"] ?? "application/json",
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        },
        ...(req.method === "POST" ? { body } : {}),
        signal: hangUp.signal,
      });
      status = response.status;
      text = await response.text();
    } catch {
      if (hangUp.signal.aborted && new URL(req.url ?? "/", "http://ledger").pathname === "/runner/v1/claim")
        this.hungUpClaims.push({ sentAt, hungUpAt });
      res.destroy();
      return;
    }
    this.#record(req, body, status, text, sentAt);
    res.writeHead(status, text ? { "content-type": "application/json" } : {}).end(text);
  }

  #renewed(lease: Lease, expiresAt: number): void {
    lease.lastExpiry = expiresAt;
    lease.heartbeats++;
  }

  #record(req: IncomingMessage, body: string, status: number, text: string, sentAt: number): void {
    const path = new URL(req.url ?? "/", "http://ledger").pathname;
    if (path === "/runner/v1/claim" && status === 200) {
      const { job, leaseToken, leaseExpiresAt, leaseMs } = claimResponse.parse(JSON.parse(text));
      this.leases.push({
        jobId: job.id,
        kind: job.kind,
        issue: job.issue.number,
        attempt: job.attempt,
        runner: req.headers.authorization?.replace(/^Bearer /, "") ?? "",
        token: leaseToken,
        firstExpiry: leaseExpiresAt,
        grantedAt: leaseExpiresAt - (leaseMs ?? 0),
        lastExpiry: leaseExpiresAt,
        heartbeats: 0,
        answeredAt: Date.now(),
        endedAt: null,
        end: null,
        refused: 0,
      });
      return;
    }
    if (path === "/runner/v1/report" && status === 200) {
      const { jobs } = reportRequest.parse(JSON.parse(body));
      reportResponse.parse(JSON.parse(text)).jobs.forEach((answer, i) => {
        const lease = this.leases.find((l) => l.token === jobs[i]?.leaseToken);
        if (!lease) return;
        if (!answer.ok)
          lease.refused += Number(answer.status === 403 || answer.status === 404 || answer.status === 409);
        else if (answer.lease) this.#renewed(lease, answer.lease.leaseExpiresAt);
      });
      return;
    }
    const route = JOB_ROUTE.exec(path)?.[1];
    const token = route && (JSON.parse(body) as { leaseToken?: string }).leaseToken;
    const lease = token && this.leases.find((l) => l.token === token);
    if (!lease) return;
    if (status === 403 || status === 404 || status === 409) lease.refused++;
    else if (route === "heartbeat" && status === 200) {
      this.#renewed(lease, heartbeatResponse.parse(JSON.parse(text)).leaseExpiresAt);
    } else if ((route === "complete" || route === "fail") && status < 300) {
      lease.end = route;
      lease.endedAt = sentAt;
    }
  }
}
