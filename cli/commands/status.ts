/**
 * `status`, `runner token` and `runner revoke`: the whole factory at a glance, a token for a new runner, and
 * the end of one.
 */
import { z } from "zod";
import { formatTime, relativeTime } from "../../src/dashboard/format.ts";
import { STATES } from "../../src/domain/lifecycle.ts";
import { projectIdSchema } from "../../src/projects/config.ts";
import { describePressure } from "../../src/runner-api/pressure.ts";
import { command } from "../command.ts";
import { table, usd } from "../output.ts";
import { registrationTokenSchema, statusSchema } from "../schemas.ts";

export const status = command({
  name: "status",
  args: [],
  usage: "status",
  summary:
    "projects with their issues per state and model spend (today, UTC / in all), and runners with their jobs",
  input: z.object({}),
  async run(_, ctx) {
    const answer = await ctx.api.call("GET", "/status", statusSchema);
    const now = Date.now();
    const projects = answer.projects.map((p) => [
      p.id,
      p.repo ?? "(not registered)",
      String(p.total),
      p.costUsd === undefined ? "" : `${usd(p.todayUsd ?? 0)} / ${usd(p.costUsd)}`,
      STATES.filter((state) => p.states[state])
        .map((state) => `${state} ${p.states[state]}`)
        .join(", "),
    ]);
    const runners = answer.runners.map((r) => [
      r.name,
      r.version,
      r.sandbox === "none" ? "NONE (unsafe)" : (r.sandbox ?? "unknown"),
      relativeTime(r.lastSeenAt, now),
      [
        r.presence?.status === "offline" && "offline",
        r.pressure && r.presence?.status !== "offline" && `holding back: ${describePressure(r.pressure)}`,
        r.jobs.map((j) => `${j.project}#${j.number} ${j.kind}`).join(", "),
      ]
        .filter(Boolean)
        .join(" · ") || "idle",
    ]);
    const text = [
      projects.length
        ? table(["PROJECT", "REPO", "ISSUES", "COST TODAY / ALL", "BY STATE"], projects)
        : "no projects",
      "",
      runners.length ? table(["RUNNER", "VERSION", "SANDBOX", "SEEN", "JOBS"], runners) : "no runners",
    ].join("\n");
    ctx.print(text, answer);
  },
});

export const runnerToken = command({
  name: "runner token",
  args: [],
  usage: "runner token [--ttl <seconds>] [--projects <id,id,...>]",
  summary:
    "a one-time registration token for a new runner (default: valid for an hour); --projects binds the runner to those projects",
  options: { ttl: { type: "string" }, projects: { type: "string" } },
  input: z.object({
    ttl: z.coerce.number().int().min(60).max(604_800).optional(),
    projects: z
      .string()
      .transform((list) => list.split(",").map((id) => id.trim()))
      .pipe(z.array(projectIdSchema).min(1))
      .optional(),
  }),
  async run({ ttl, projects }, ctx) {
    const body = { ...(ttl !== undefined && { ttlSeconds: ttl }), ...(projects && { projects }) };
    const answer = await ctx.api.call("POST", "/runners/tokens", registrationTokenSchema, body);
    const bound = answer.projects ? `; binds the runner to ${answer.projects.join(", ")}` : "";
    ctx.print(`${answer.token}\none-time; expires ${formatTime(answer.expiresAt)}${bound}`, answer);
  },
});

export const runnerRevoke = command({
  name: "runner revoke",
  args: ["id"],
  usage: "runner revoke <runner id>",
  summary: "revoke a runner: its token stops working and the jobs it holds are requeued",
  input: z.object({ id: z.string().min(1).max(100) }),
  async run({ id }, ctx) {
    await ctx.api.call("DELETE", `/runners/${encodeURIComponent(id)}`, z.null());
    ctx.print(`revoked ${id}`, { revoked: id });
  },
});
