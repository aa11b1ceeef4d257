/** The supervisor's findings (docs/supervisor.md): every project's on `/dashboard/health`, or one project's. */
import type { Health } from "../../contracts/project-object.ts";
import type { ForgeLinks } from "../../forge/web-links.ts";
import { healthHeadline } from "../format.ts";
import { When } from "../layout.tsx";

export const healthPath = (project: string) => `/dashboard/projects/${project}/health`;

export type ProjectHealth = { project: string; health: Health; links: ForgeLinks | null };

export function HealthPage(props: { projects: ProjectHealth[]; now: number }) {
  if (props.projects.length === 0) return <p class="quiet">No projects are registered.</p>;
  return (
    <>
      {props.projects.map((p) => (
        <ProjectHealthSection {...p} now={props.now} />
      ))}
    </>
  );
}

function ProjectHealthSection(props: ProjectHealth & { now: number }) {
  const { project, health, links, now } = props;
  return (
    <section>
      <h2>
        <a href={healthPath(project)}>{project}</a>: <span class="headline">{healthHeadline(health)}</span>
      </h2>
      <p class="meta">
        {health.checkedAt === null ? (
          "not checked yet"
        ) : (
          <>
            checked <When at={health.checkedAt} now={now} />
          </>
        )}
        {health.nextAt !== null && (
          <>
            {" "}
            · next check <When at={health.nextAt} now={now} />
          </>
        )}
      </p>
      {health.error && <p class="error">The last check failed: {health.error}</p>}
      {health.findings.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Priority</th>
              <th>Check</th>
              <th>Subject</th>
              <th>Finding</th>
              <th>Since</th>
              <th>Forge issue</th>
            </tr>
          </thead>
          <tbody>
            {health.findings.map((f) => (
              <tr>
                <td>
                  <span class={`priority priority-${f.priority}`}>{f.priority}</span>
                </td>
                <td>{f.check}</td>
                <td>{f.subject}</td>
                <td>
                  {f.summary}
                  {/* The operator's alone: never on the forge issue. */}
                  {f.detail ? <strong> {f.detail}</strong> : null} <small class="quiet">{f.key}</small>
                </td>
                <td>
                  <When at={f.openedAt} now={now} />
                </td>
                <td>
                  {f.forgeIssue === null ? (
                    <span class="quiet">none</span>
                  ) : links ? (
                    <a href={links.issue(f.forgeIssue)}>#{f.forgeIssue}</a>
                  ) : (
                    `#${f.forgeIssue}`
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
