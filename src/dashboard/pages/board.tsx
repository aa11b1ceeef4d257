import { plural } from "../format.ts";
import { StateBadge } from "../layout.tsx";
import type { IssueCard } from "../queries.ts";
import { agentsPath } from "./agents.tsx";
import { healthPath } from "./health.tsx";
import { IssueCardView } from "./issue-card.tsx";
import { outcomesPath } from "./outcomes.tsx";
import { vaultPath } from "./vault.tsx";

export type Column = { state: string; count: number; issues: IssueCard[] };

export const statePath = (project: string, state: string) => `/dashboard/projects/${project}/states/${state}`;

/** One column per lifecycle state: its count and its most recently moved issues. */
export function Board(props: { project: string; repo: string | null; columns: Column[]; now: number }) {
  const total = props.columns.reduce((sum, c) => sum + c.count, 0);
  return (
    <>
      <p>
        {props.repo ?? "not registered"} · {plural(total, "issue")} ·{" "}
        <a href={agentsPath(props.project)}>agents</a> · <a href={healthPath(props.project)}>health</a> ·{" "}
        <a href={outcomesPath(props.project)}>outcomes</a> ·{" "}
        <a href={vaultPath({ project: props.project })}>vault</a>
      </p>
      <div class="board">
        {props.columns.map((column) => (
          <section class={column.count === 0 ? "column empty" : "column"}>
            <h2>
              <a href={statePath(props.project, column.state)}>
                <StateBadge state={column.state} /> <span class="count">{column.count}</span>
              </a>
            </h2>
            <ol>
              {column.issues.map((issue) => (
                <li>
                  <IssueCardView issue={issue} now={props.now} />
                </li>
              ))}
            </ol>
            {column.count > column.issues.length && (
              <a class="more" href={statePath(props.project, column.state)}>
                all {column.count} →
              </a>
            )}
          </section>
        ))}
      </div>
    </>
  );
}

/** A state's issues, a page at a time, newest first. */
export function StateList(props: {
  project: string;
  state: string;
  issues: IssueCard[];
  total: number;
  next: string | null;
  now: number;
}) {
  return (
    <>
      <p>
        <a href={`/dashboard/projects/${props.project}`}>← board</a> · {plural(props.total, "issue")} in{" "}
        <StateBadge state={props.state} />
      </p>
      <ol class="list">
        {props.issues.map((issue) => (
          <li>
            <IssueCardView issue={issue} now={props.now} />
          </li>
        ))}
      </ol>
      {props.next && (
        <a class="more" href={`${statePath(props.project, props.state)}?before=${props.next}`}>
          older →
        </a>
      )}
    </>
  );
}
