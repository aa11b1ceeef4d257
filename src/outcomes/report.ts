/** An outcomes report of one project or of all, for the window a query names (the API's and the dashboard's). */
import type { Env } from "../env.ts";
import { zodMessage } from "../validation.ts";
import { type Outcomes, outcomes } from "./outcomes.ts";
import { outcomeRows } from "./queries.ts";
import { windowOf, windowQuerySchema } from "./window.ts";

export type ReportQuery = ReturnType<typeof windowQuerySchema.parse>;

/** The query (`?from&to&format&table`) parsed, or why it is refused, in one line. */
export function reportQuery(raw: Record<string, string>): ReportQuery | { error: string } {
  const query = windowQuerySchema.safeParse(raw);
  return query.success ? query.data : { error: zodMessage(query.error) };
}

export async function outcomesReport(
  env: Env,
  project: string | null,
  query: ReportQuery,
  now = Date.now(),
): Promise<Outcomes | { error: string }> {
  const window = windowOf(query, now);
  if ("error" in window) return window;
  return outcomes(await outcomeRows(env, project, window, now), window, project);
}
