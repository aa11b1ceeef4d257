/**
 * The failing steps' logs from Woodpecker's API (`GET /api/repos/{repo_id}/pipelines/{number}` and
 * `/logs/{number}/{step_id}`), for the revise session's CI excerpt. The pipeline is found from the commit
 * status's target URL (`<server>/repos/<repo_id>/pipeline/<number>[/<workflow>]`). Any failure returns null:
 * the excerpt then keeps the target URL.
 */
import { z } from "zod";
import { woodpeckerPipeline } from "../domain/ci-rerun.ts";
import { type WoodpeckerApi, woodpeckerCall } from "./woodpecker-api.ts";

const FAILING = new Set(["failure", "error", "killed"]);
const MAX_STEPS = 2;
const TAIL_LINES = 60;

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

export async function woodpeckerLogs(
  api: WoodpeckerApi,
  targetUrls: readonly (string | null)[],
): Promise<string | null> {
  const pipeline = targetUrls.map((url) => woodpeckerPipeline(api.url, url)).find((found) => found !== null);
  if (!pipeline) return null;
  const { repoId, number } = pipeline;
  const get = (path: string) => woodpeckerCall(api, "GET", repoId, path);
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
