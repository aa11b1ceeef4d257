import type { listRunners } from "../../runner-api/registry.ts";
import { issuePath, When } from "../layout.tsx";

type Runner = Awaited<ReturnType<typeof listRunners>>[number];

export function Runners(props: { runners: Runner[]; now: number }) {
  if (props.runners.length === 0)
    return <p>No runners registered: `conveyor runner token` makes a token for one.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Runner</th>
          <th>Version</th>
          <th>Sandbox</th>
          <th>Last seen</th>
          <th>Current jobs</th>
        </tr>
      </thead>
      <tbody>
        {props.runners.map((runner) => (
          <tr>
            <td>
              {runner.name} <small>{runner.id}</small>
            </td>
            <td>{runner.version}</td>
            <td>
              {runner.sandbox === "none" ? (
                <strong class="unsafe">OFF (--unsafe-no-sandbox)</strong>
              ) : (
                (runner.sandbox ?? "unknown")
              )}
            </td>
            <td>
              <When at={runner.lastSeenAt} now={props.now} />
            </td>
            <td>
              {runner.jobs.length === 0
                ? "idle"
                : runner.jobs.map((job) => (
                    <span class="job">
                      <a href={issuePath(job.project, job.number)}>
                        {job.project}#{job.number}
                      </a>{" "}
                      {job.kind}
                      {job.attempt > 1 ? ` (attempt ${job.attempt})` : ""}
                    </span>
                  ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
