/** What a revise session is told about red CI: the failing statuses, and their logs where a CI API gives them. */
import { type CiVerdict, clip, MAX_CI_EXCERPT_CHARS } from "../domain/ci-verdict.ts";
import type { WoodpeckerApi } from "./woodpecker-api.ts";
import { woodpeckerLogs } from "./woodpecker-logs.ts";

export async function redExcerpt(
  red: Extract<CiVerdict, { kind: "red" }>,
  woodpecker: WoodpeckerApi | null,
): Promise<string> {
  const logs = woodpecker
    ? await woodpeckerLogs(
        woodpecker,
        red.failing.map((check) => check.url ?? null),
      )
    : null;
  if (!logs) return clip(red.excerpt, MAX_CI_EXCERPT_CHARS);
  // A log's end says why it failed: the start of a long one is what gives way.
  const room = MAX_CI_EXCERPT_CHARS - red.excerpt.length - 2;
  return clip(`${red.excerpt}\n\n${clip(logs, room, "end")}`, MAX_CI_EXCERPT_CHARS);
}
