/** A project's agents (with the definitions that do not parse), and one agent's runs with their outputs. */

import type { AgentProblem } from "../../agents/catalog.ts";
import type { AgentDefinition } from "../../agents/definition.ts";
import { describeOutput, type KeptDecision } from "../../agents/held-outputs.ts";
import type { AgentRunView } from "../../contracts/project-object.ts";
import { formatUsd } from "../format.ts";
import { When } from "../layout.tsx";

export const agentsPath = (project: string) => `/dashboard/projects/${project}/agents`;
export const agentPath = (project: string, name: string) => `${agentsPath(project)}/${name}`;

type Listed = Pick<AgentDefinition, "name" | "source" | "description" | "schedule" | "enabled"> & {
  lastRun: AgentRunView | null;
};

export function Agents(props: {
  project: string;
  agents: Listed[];
  problems: AgentProblem[];
  error: string | null;
  now: number;
}) {
  return (
    <>
      {props.error && <p class="error">{props.error}</p>}
      {props.problems.map((p) => (
        <p class="error">
          {p.name} ({p.source}) does not run: {p.error}
        </p>
      ))}
      <table>
        <thead>
          <tr>
            <th>Agent</th>
            <th>Source</th>
            <th>Schedule</th>
            <th>Enabled</th>
            <th>Last run</th>
          </tr>
        </thead>
        <tbody>
          {props.agents.map((agent) => (
            <tr>
              <td>
                <a href={agentPath(props.project, agent.name)}>{agent.name}</a>{" "}
                <small>{agent.description}</small>
              </td>
              <td>{agent.source}</td>
              <td>{agent.schedule ?? <span class="quiet">none</span>}</td>
              <td>{agent.enabled ? "yes" : "no"}</td>
              <td>
                {agent.lastRun ? (
                  <>
                    {agent.lastRun.status} <When at={agent.lastRun.createdAt} now={props.now} />
                  </>
                ) : (
                  <span class="quiet">never</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function outcome(decision: KeptDecision): string {
  if (decision.status === "rejected") return `rejected: ${decision.reason}`;
  if (decision.applied) return "applied";
  if (decision.failed) return `failed: ${decision.failed}`;
  return decision.vault ? `waiting in the vault (${decision.vault})` : "accepted, not applied yet";
}

export function AgentRunsPage(props: { name: string; runs: AgentRunView[]; now: number }) {
  if (props.runs.length === 0) return <p>{props.name} has not run yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Run</th>
          <th>Queued</th>
          <th>Trigger</th>
          <th>Status</th>
          <th>Cost</th>
          <th>Outputs</th>
        </tr>
      </thead>
      <tbody>
        {props.runs.map((run) => (
          <tr>
            <td>
              <small>{run.id}</small>
            </td>
            <td>
              <When at={run.createdAt} now={props.now} />
            </td>
            <td>{run.trigger}</td>
            <td>
              {run.status}
              {run.error && <small> {run.error}</small>}
            </td>
            <td>{formatUsd(run.costUsd)}</td>
            <td>
              {run.decisions === null ? (
                <span class="quiet">none yet</span>
              ) : (
                <ol>
                  {run.decisions.map((decision) => (
                    <li>
                      {describeOutput(decision.output)} — {outcome(decision)}
                    </li>
                  ))}
                </ol>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
