/** What the runner API client (./api.ts) throws, apart from a caller's own abort. */
export class ApiError extends Error {
  /** The HTTP status, or `NETWORK` (0) when no answer came (connection refused, reset, timed out). */
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** The Worker refused the runner token: nothing this process can fix by retrying. */
export class UnauthorizedError extends ApiError {
  override name = "UnauthorizedError";
}

/** The job's lease was taken away (expired and re-leased, or unknown): stop and report nothing more. */
export class LeaseLostError extends ApiError {
  override name = "LeaseLostError";
}

export const NETWORK = 0;
/** A job call's answers that mean the job is no longer ours (fenced). */
export const LEASE_LOST = new Set([403, 404, 409]);
