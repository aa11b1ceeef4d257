/** The critic's report, as its forced tool call must give it, and what Conveyor makes of it. Pure. */
import { z } from "zod";

export const SEVERITIES = ["blocker", "major", "minor", "nit"] as const;

export const findingSchema = z.object({
  severity: z.enum(SEVERITIES),
  file: z.string().max(500),
  line: z.number().int().min(0).nullable(),
  comment: z.string().min(1).max(4_000),
  /** False for a real problem the issue did not ask about: it becomes a tech-debt issue, not a rejection. */
  inScope: z.boolean(),
});
export type Finding = z.infer<typeof findingSchema>;

export const reportSchema = z.object({
  verdict: z.enum(["APPROVE", "REQUEST_CHANGES", "BLOCK"]),
  summary: z.string().min(1).max(4_000),
  findings: z.array(findingSchema).max(50),
});
export type CriticReport = z.infer<typeof reportSchema>;

export type Decision = {
  verdict: CriticReport["verdict"];
  /** What the next session must address. */
  toFix: Finding[];
  /** Out-of-scope findings that become issues labelled tech-debt. */
  techDebt: Finding[];
};

/**
 * Convergence guard: changes are requested only for findings inside the issue's scope. A REQUEST_CHANGES
 * whose findings are all out of scope (or only nits) approves, and the rest is filed as tech debt.
 */
export function decide(report: CriticReport): Decision {
  const techDebt = report.findings.filter((f) => !f.inScope);
  const toFix = report.findings.filter((f) => f.inScope && f.severity !== "nit");
  if (report.verdict === "REQUEST_CHANGES" && toFix.length === 0)
    return { verdict: "APPROVE", toFix, techDebt };
  return { verdict: report.verdict, toFix, techDebt };
}

/** The findings as the revise session reads them. */
export function findingsText(report: CriticReport, toFix: Finding[]): string {
  const lines = toFix.map((f) => `- [${f.severity}] ${f.file}${f.line ? `:${f.line}` : ""}: ${f.comment}`);
  return [`The reviewer requested changes: ${report.summary}`, "", ...lines].join("\n");
}
