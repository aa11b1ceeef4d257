/** The timeline: every event recorded, and a red CI result's failing checks with their links. */
import type { HistoryEntry } from "../../contracts/issue-object.ts";
import { CAUSE_TEXT } from "../../domain/ci-rerun.ts";
import type { FailedCheck } from "../../domain/ci-verdict.ts";
import type { ForgeLinks } from "../../forge/web-links.ts";
import { formatDuration, formatTime } from "../format.ts";
import { StateBadge } from "../layout.tsx";

/** Each entry with how long after the one before it it came. */
export function History(props: { entries: HistoryEntry[]; empty: string; links: ForgeLinks | null }) {
  if (props.entries.length === 0) return <p class="quiet">{props.empty}</p>;
  return (
    <table class="timeline">
      <thead>
        <tr>
          <th>#</th>
          <th>When</th>
          <th>After</th>
          <th>Event</th>
          <th>Edge</th>
          <th>Reason</th>
          <th>Cause</th>
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry, i) => (
          <tr class={entry.outcome}>
            <td>{entry.seq}</td>
            <td>{formatTime(entry.at)}</td>
            <td>{i === 0 ? "" : `+${formatDuration(entry.at - (props.entries[i - 1]?.at ?? entry.at))}`}</td>
            <td>
              {entry.event}
              {entry.ci && <span class={`ci-${entry.ci.result}`}> {entry.ci.result}</span>}
            </td>
            <td>
              {entry.outcome === "applied" ? (
                <>
                  {entry.from} → <StateBadge state={entry.to} />
                </>
              ) : (
                // Rejected, or parked until a later state takes it.
                `${entry.outcome} in ${entry.from}`
              )}
            </td>
            <td>
              {entry.reason ?? ""}
              {entry.ci && entry.ci.checks.length > 0 && <FailedChecks checks={entry.ci.checks} />}
            </td>
            <td>
              {entry.cause.kind} <small>{entry.cause.id}</small>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Each failing check: its name, what it reported and why, whether the infrastructure failed it (what a CI
 * re-run is for), and its page (where its log is).
 */
function FailedChecks(props: { checks: FailedCheck[] }) {
  return (
    <ul class="checks">
      {props.checks.map((check) => (
        <li>
          <strong class="check">{check.name}</strong>: {check.outcome}
          {check.description && <> — {check.description}</>}
          {check.cause && <em class="cause"> ({CAUSE_TEXT[check.cause]})</em>}
          {check.url && (
            <>
              {" "}
              <a href={check.url} class="log" rel="noreferrer">
                log
              </a>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}
