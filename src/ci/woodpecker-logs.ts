/**
 * The failing steps' logs from Woodpecker's API (`GET /api/repos/{repo_id}/pipelines/{number}` and
 * `/logs/{number}/{step_id}`), for the revise session's CI excerpt. The pipeline is found from the commit
 * status's target URL (`<server>/repos/<repo_id>/pipeline/<number>[/<workflow>]`). Any failure returns null:
 * the excerpt then keeps the target URL.
 */
import { z } from "zod";
import { boundedText } from "../http/bounded.ts";

const FAILING = new Set(["failure", "error", "killed"]);
const MAX_STEPS = 2;
const TAIL_LINES = 60;
/** Each API call's deadline, body included: the excerpt waits on it. */
const TIMEOUT_MS = 15_000;
/** A log's JSON (base64 lines) beyond this is not read: the excerpt then keeps the target URL. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

const pipelineSchema = z.object({
  workflows: z
    .array(
      z.object({
        name: z.string(),
        children: z
          .array(z.object({ id: z.number().int(), name: z.string(), state: z.string() }))
          .default([]),
      }),
    )
    .default([]),
});

const logSchema = z.array(
  z.object({
    line: z.number().int(),
    // Go encodes the []byte as base64; null for an empty line.
    data: z.string().nullable(),
    type: z.number().int(),
  }),
);

export type WoodpeckerApi = {
  url: string;
  token: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  maxBodyBytes?: number;
};

export async function woodpeckerLogs(
  api: WoodpeckerApi,
  targetUrls: readonly (string | null)[],
): Promise<string | null> {
  const base = api.url.replace(/\/+$/, "");
  const pipeline = targetUrls
    .map((url) =>
      url?.startsWith(`${base}/`) ? /\/repos\/(\d+)\/pipeline\/(\d+)/.exec(url.slice(base.length)) : null,
    )
    .find((match) => match !== null);
  if (!pipeline) return null;
  const [, repoId, number] = pipeline;
  const get = async (path: string): Promise<unknown> => {
    const res = await (api.fetch ?? fetch)(`${base}/api/repos/${repoId}${path}`, {
      headers: { authorization: `Bearer ${api.token}`, accept: "application/json" },
      // Covers the body's reading too: a server that stalls mid-body is cut off as well.
      signal: AbortSignal.timeout(api.timeoutMs ?? TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`woodpecker ${path}: ${res.status}`);
    }
    return JSON.parse(await boundedText(res, api.maxBodyBytes ?? MAX_BODY_BYTES));
  };
  try {
    const { workflows } = pipelineSchema.parse(await get(`/pipelines/${number}`));
    const failed = workflows
      .flatMap((w) =>
        w.children.filter((s) => FAILING.has(s.state)).map((step) => ({ workflow: w.name, step })),
      )
      .slice(0, MAX_STEPS);
    if (failed.length === 0) return null;
    const parts: string[] = [];
    for (const { workflow, step } of failed) {
      const lines = logSchema
        .parse(await get(`/logs/${number}/${step.id}`))
        .map((entry) => decode(entry.data));
      parts.push(
        [`--- ${workflow} / ${step.name} (${step.state}) ---`, ...lines.slice(-TAIL_LINES)].join("\n"),
      );
    }
    return parts.join("\n");
  } catch {
    return null;
  }
}

function decode(data: string | null): string {
  if (!data) return "";
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes).replace(/\r?\n$/, "");
}
