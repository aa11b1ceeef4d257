/**
 * The supervisor's word on the demo factory at the end (docs/supervisor.md): a check run now, through the
 * operator API, as `conveyor health` and the dashboard's health page show it. The findings about the host's
 * own memory, disk and load are this machine's, not the factory's: they are shown, not held against the demo.
 */
import { z } from "zod";
import type { Demo } from "./orchestrator.ts";
import { PROJECT } from "./scenario.ts";

const MACHINE_CHECKS = new Set(["memory", "disk", "load"]);

const healthSchema = z.object({
  checkedAt: z.number().nullable(),
  findings: z.array(
    z.object({ key: z.string(), priority: z.string(), check: z.string(), summary: z.string() }),
  ),
});

export type FactoryHealth = { findings: z.infer<typeof healthSchema>["findings"]; problems: string[] };

export async function factoryHealth(demo: Demo): Promise<FactoryHealth> {
  const res = await fetch(`${demo.worker.url}/api/v1/projects/${PROJECT}/health/check`, {
    method: "POST",
    headers: { authorization: `Bearer ${demo.adminToken}` },
  });
  if (!res.ok) throw new Error(`the supervisor's check: ${res.status} ${await res.text()}`);
  const { findings } = healthSchema.parse(await res.json());
  const problems = findings
    .filter((f) => !MACHINE_CHECKS.has(f.check))
    .map((f) => `the supervisor finds ${f.key} (${f.priority}): ${f.summary}`);
  return { findings, problems };
}

/** One line when healthy, else one per finding. */
export function healthLines({ findings }: FactoryHealth, dashboardUrl: string): string[] {
  if (findings.length === 0) return [`The supervisor finds the factory healthy (${dashboardUrl}).`];
  return [
    `The supervisor's findings (${dashboardUrl}):`,
    ...findings.map((f) => `  ${f.priority} ${f.check}: ${f.summary}`),
  ];
}
