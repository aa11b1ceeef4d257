/** What a revise session is told about red CI: the failing statuses, and their logs where a CI API gives them. */
import { type CiVerdict, clip, MAX_CI_EXCERPT_CHARS } from "../domain/ci-verdict.ts";
import type { Env } from "../env.ts";
import { loadSecrets, type Project } from "../projects/store.ts";
import { woodpeckerLogs } from "./woodpecker-logs.ts";

export async function redExcerpt(
  env: Env,
  project: Project,
  red: Extract<CiVerdict, { kind: "red" }>,
): Promise<string> {
  const url = project.settings.ci.woodpeckerUrl;
  const token = url ? (await loadSecrets(env, project.id))?.woodpeckerToken : undefined;
  const logs =
    url && token
      ? await woodpeckerLogs(
          { url, token },
          red.failing.map((check) => check.url ?? null),
        )
      : null;
  if (!logs) return clip(red.excerpt, MAX_CI_EXCERPT_CHARS);
  // A log's end says why it failed: the start of a long one is what gives way.
  const room = MAX_CI_EXCERPT_CHARS - red.excerpt.length - 2;
  return clip(`${red.excerpt}\n\n${clip(logs, room, "end")}`, MAX_CI_EXCERPT_CHARS);
}
