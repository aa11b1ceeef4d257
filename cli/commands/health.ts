/** `health`: the supervisor's findings (docs/supervisor.md), of one project or of every project. */
import { z } from "zod";
import { healthHeadline, relativeTime } from "../../src/dashboard/format.ts";
import { command } from "../command.ts";
import { table } from "../output.ts";
import { healthSchema, projectListSchema } from "../schemas.ts";

export const health = command({
  name: "health",
  args: [],
  usage: "health [--project <id>]",
  summary:
    "the supervisor's findings (P0 most urgent) with their forge issues; every project without --project",
  input: z.object({}),
  async run(_, ctx) {
    const ids = ctx.project
      ? [ctx.project]
      : (await ctx.api.call("GET", "/projects", projectListSchema)).projects.map((p) => p.id);
    const answers = [];
    for (const id of ids) answers.push(await ctx.api.call("GET", `/projects/${id}/health`, healthSchema));
    const now = Date.now();
    const text = answers.map((h) => {
      const checked = h.checkedAt === null ? "" : ` (checked ${relativeTime(h.checkedAt, now)})`;
      const head = `${h.project}: ${healthHeadline(h)}${checked}`;
      const rows = h.findings.map((f) => [
        f.priority,
        f.check,
        f.subject,
        f.forgeIssue === null ? "" : `#${f.forgeIssue}`,
        relativeTime(f.openedAt, now),
        f.detail ? `${f.summary} ${f.detail}` : f.summary,
      ]);
      return [
        head,
        h.error && `the last check failed: ${h.error}`,
        rows.length > 0 && table(["PRIORITY", "CHECK", "SUBJECT", "ISSUE", "SINCE", "FINDING"], rows),
      ]
        .filter((line): line is string => typeof line === "string" && line !== "")
        .join("\n");
    });
    ctx.print(text.join("\n\n") || "no projects", ctx.project ? answers[0] : { projects: answers });
  },
});
