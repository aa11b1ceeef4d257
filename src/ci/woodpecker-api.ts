/**
 * Woodpecker's API (`<server>/api`, a personal access token as Bearer): what Conveyor reads (a pipeline, a
 * step's log) and the one thing it asks (a pipeline's restart, `POST /api/repos/{repo_id}/pipelines/{number}`,
 * which needs push access to the repository). Every call has a deadline, its body included, and a body is
 * read only up to a size.
 */
import { z } from "zod";
import { boundedText } from "../http/bounded.ts";

export type WoodpeckerApi = {
  url: string;
  token: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  maxBodyBytes?: number;
};

/** Each API call's deadline, body included. */
const TIMEOUT_MS = 15_000;
/** An answer's JSON beyond this (a huge log) is not read. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** A refusal by Woodpecker's API, with its status: 4xx ones trying again cannot change. */
export class WoodpeckerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "WoodpeckerError";
  }
}

/** One call below `<server>/api/repos/{repoId}`; the answer's JSON. */
export async function woodpeckerCall(
  api: WoodpeckerApi,
  method: "GET" | "POST",
  repoId: number | string,
  path: string,
): Promise<unknown> {
  const base = api.url.replace(/\/+$/, "");
  const res = await (api.fetch ?? fetch)(`${base}/api/repos/${repoId}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.token}`, accept: "application/json" },
    // Covers the body's reading too: a server that stalls mid-body is cut off as well.
    signal: AbortSignal.timeout(api.timeoutMs ?? TIMEOUT_MS),
  });
  if (!res.ok) {
    await res.body?.cancel();
    throw new WoodpeckerError(res.status, `woodpecker ${method} ${path}: ${res.status}`);
  }
  return JSON.parse(await boundedText(res, api.maxBodyBytes ?? MAX_BODY_BYTES));
}

const restarted = z.looseObject({ number: z.number().int() });
const ofCommit = z.looseObject({ commit: z.string() });

/** The commit pipeline `number` ran on (a status may link any pipeline of the server: this says whose). */
export async function pipelineCommit(api: WoodpeckerApi, repoId: number, number: number): Promise<string> {
  return ofCommit.parse(await woodpeckerCall(api, "GET", repoId, `/pipelines/${number}`)).commit;
}

/** Restarts pipeline `number` (a new pipeline, its parent the old one); the new pipeline's number. */
export async function restartPipeline(api: WoodpeckerApi, repoId: number, number: number): Promise<number> {
  return restarted.parse(await woodpeckerCall(api, "POST", repoId, `/pipelines/${number}`)).number;
}
