/** `status` and `runner token`: the whole factory at a glance, and a token for a new runner. */
import { z } from "zod";
import { ago, formatTime } from "../../src/dashboard/format.ts";
import { STATES } from "../../src/domain/lifecycle.ts";
import { command } from "../command.ts";
import { table } from "../output.ts";
import { registrationTokenSchema, statusSchema } from "../schemas.ts";

export const status = command({
  name: "status",
  args: [],
  usage: "status",
  summary: "projects with their issues per state, and runners with their jobs",
  input: z.object({}),
  async run(_, ctx) {
    const answer = await ctx.api.call("GET", "/status", statusSchema);
    const now = Date.now();
    const projects = answer.projects.map((p) => [
      p.id,
      p.repo ?? "(not registered)",
      String(p.total),
      STATES.filter((state) => p.states[state])
        .map((state) => `${state} ${p.states[state]}`)
        .join(", "),
    ]);
    const runners = answer.runners.map((r) => [
      r.name,
      r.version,
      ago(r.lastSeenAt, now),
      r.jobs.map((j) => `${j.project}#${j.number} ${j.kind}`).join(", ") || "idle",
    ]);
    const text = [
      projects.length ? table(["PROJECT", "REPO", "ISSUES", "BY STATE"], projects) : "no projects",
      "",
      runners.length ? table(["RUNNER", "VERSION", "SEEN", "JOBS"], runners) : "no runners",
    ].join("\n");
    ctx.print(text, answer);
  },
});

export const runnerToken = command({
  name: "runner token",
  args: [],
  usage: "runner token [--ttl <seconds>]",
  summary: "a one-time registration token for a new runner (default: valid for an hour)",
  options: { ttl: { type: "string" } },
  input: z.object({ ttl: z.coerce.number().int().min(60).max(604_800).optional() }),
  async run({ ttl }, ctx) {
    const body = ttl === undefined ? {} : { ttlSeconds: ttl };
    const answer = await ctx.api.call("POST", "/runners/tokens", registrationTokenSchema, body);
    ctx.print(`${answer.token}\none-time; expires ${formatTime(answer.expiresAt)}`, answer);
  },
});
