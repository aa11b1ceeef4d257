/**
 * `mirror backfill` and `mirror status`: the project's mirror of its open issues and pull requests
 * (docs/agents.md), filled from the forge at registration and again when the operator asks.
 */
import { z } from "zod";
import { relativeTime } from "../../src/dashboard/format.ts";
import { type Context, command, projectOf } from "../command.ts";
import { backfillSchema } from "../schemas.ts";

export const mirrorBackfill = command({
  name: "mirror backfill",
  args: [],
  usage: "mirror backfill --project <id>",
  summary:
    "read every open issue and pull request from the forge into the mirror, within the rate limit (unless a backfill is under way)",
  input: z.object({}),
  async run(_, ctx) {
    await show(ctx, "POST");
  },
});

export const mirrorStatus = command({
  name: "mirror status",
  args: [],
  usage: "mirror status --project <id>",
  summary:
    "where the mirror's backfill stands: running, waiting for the rate limit, done, refused by the forge",
  input: z.object({}),
  async run(_, ctx) {
    await show(ctx, "GET");
  },
});

async function show(ctx: Context, method: "GET" | "POST") {
  const id = projectOf(ctx);
  const status = await ctx.api.call(method, `/projects/${id}/backfill`, backfillSchema);
  const now = Date.now();
  const when = (at: number | null) => (at === null ? "" : relativeTime(at, now));
  const line =
    status.phase === "idle"
      ? `${id}: never backfilled`
      : status.phase === "done"
        ? `${id}: backfilled ${when(status.finishedAt)} (${status.listed} open items, pass ${status.pass})`
        : `${id}: backfill ${status.phase} since ${when(status.startedAt)}, pass ${status.pass}, ${status.listed} read` +
          (status.nextAt === null ? "" : `, next step ${when(status.nextAt)}`);
  ctx.print([line, status.reason].filter(Boolean).join("\n"), status);
}
