import type { ProjectSummary } from "../../api/project-summaries.ts";
import { STATES } from "../../domain/lifecycle.ts";
import { StackedBars } from "../charts.tsx";
import { formatDay, formatUsd, plural } from "../format.ts";
import { StateBadge } from "../layout.tsx";
import { APPROVAL_STATES } from "../queries.ts";

export type DailyCost = { day: number; usd: number }[];

export function Overview(props: { projects: ProjectSummary[]; cost: Map<string, DailyCost> }) {
  const waiting = props.projects.reduce(
    (sum, p) => sum + APPROVAL_STATES.reduce((n, state) => n + (p.states[state] ?? 0), 0),
    0,
  );
  return (
    <>
      <p>
        <a href="/dashboard/approvals">{waiting} waiting for a human</a> (approvals and escalations)
      </p>
      {props.projects.length === 0 && <p>No projects yet: register one with `conveyor project add`.</p>}
      {props.projects.map((project) => (
        <section class="project">
          <h2>
            <a href={`/dashboard/projects/${project.id}`}>{project.id}</a>{" "}
            <small>
              {project.repo ? `${project.forge} · ${project.repo}` : "not registered"} ·{" "}
              {plural(project.total, "issue")}
            </small>
          </h2>
          <p class="chips">
            {STATES.filter((state) => project.states[state]).map((state) => (
              <a href={`/dashboard/projects/${project.id}/states/${state}`} class="chip">
                <StateBadge state={state} /> {project.states[state]}
              </a>
            ))}
          </p>
          <CostChart days={props.cost.get(project.id) ?? []} />
        </section>
      ))}
    </>
  );
}

function CostChart(props: { days: DailyCost }) {
  const spent = props.days.reduce((sum, d) => sum + d.usd, 0);
  return (
    <StackedBars
      label={`USD per day (UTC), last ${props.days.length} days: ${formatUsd(spent)}`}
      series={[{ name: "USD", color: "#3b6ea8" }]}
      bars={props.days.map((d) => ({ label: formatDay(d.day), values: [d.usd] }))}
      format={formatUsd}
      labelEvery={5}
    />
  );
}
