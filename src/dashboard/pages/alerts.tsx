/**
 * The factory's alerts (docs/supervisor.md#the-operator-channel), as the AlertDO keeps them: those open now and
 * the latest resolved, each with who reported it (a project's supervisor, the watchdog's look at a project) and
 * when it opened and resolved; and how the operator's channels are doing, or that none is configured.
 */
import type { AlertChannelState, AlertsView } from "../../contracts/alert-object.ts";
import { type OpenAlert, type ResolvedAlert, sourceOf } from "../../domain/alerts.ts";
import { formatDuration, plural } from "../format.ts";
import { When } from "../layout.tsx";
import { healthPath } from "./health.tsx";

const SOURCE_NAMES = { supervisor: "supervisor of", watchdog: "watchdog on", backfill: "backfill of" };

function Source(props: { source: string }) {
  const known = sourceOf(props.source);
  if (!known) return <code>{props.source}</code>;
  return (
    <a href={healthPath(known.project)}>
      {SOURCE_NAMES[known.by]} {known.project}
    </a>
  );
}

function Sources(props: { sources: string[] }) {
  return (
    <ul class="sources">
      {props.sources.map((source) => (
        <li>
          <Source source={source} />
        </li>
      ))}
    </ul>
  );
}

function Channels(props: { channels: AlertChannelState[] }) {
  if (props.channels.length === 0)
    return (
      <p class="quiet channels">
        No operator channel is configured (<code>ALERT_WEBHOOK_URL</code>, or email): alerts are told to no
        one outside this page and <code>GET /api/v1/alerts</code>.
      </p>
    );
  return (
    <ul class="channels">
      {props.channels.map((c) => (
        <li>
          <strong>{c.channel}</strong>:{" "}
          {c.waiting === 0 ? "nothing waiting" : `${plural(c.waiting, "message")} waiting`}
          {c.lastError && <span class="error-text"> · last error: {c.lastError}</span>}
        </li>
      ))}
    </ul>
  );
}

/** Open alerts, or resolved ones with when and by which report they resolved and how long they were open. */
function AlertTable(props: {
  entries: (OpenAlert | ResolvedAlert)[];
  kind: "open" | "resolved";
  now: number;
}) {
  const { now } = props;
  const resolvedColumns = props.kind === "resolved";
  return (
    <table class={`alerts alerts-${props.kind}`}>
      <thead>
        <tr>
          <th>Priority</th>
          <th>Alert</th>
          <th>Reported by</th>
          <th>Opened</th>
          {resolvedColumns && (
            <>
              <th>Resolved</th>
              <th>Open for</th>
            </>
          )}
        </tr>
      </thead>
      <tbody>
        {props.entries.map((entry) => (
          <tr>
            <td>
              <span class={`priority priority-${entry.alert.priority}`}>{entry.alert.priority}</span>
            </td>
            <td>
              <strong class="title">{entry.alert.title}</strong>
              {/* The operator's words: a runner's host figures may be in them. */}
              {entry.alert.text && <div class="text">{entry.alert.text}</div>}
              <small class="quiet key">{entry.alert.key}</small>
            </td>
            <td>
              <Sources sources={entry.sources} />
            </td>
            <td class="opened">
              <When at={entry.openedAt} now={now} />
            </td>
            {"resolvedAt" in entry && (
              <>
                <td class="resolved">
                  <When at={entry.resolvedAt} now={now} />, by <Source source={entry.resolvedBy} />
                </td>
                <td>{formatDuration(entry.resolvedAt - entry.openedAt)}</td>
              </>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AlertsPage(props: { view: AlertsView; now: number }) {
  const { open, resolved, channels } = props.view;
  return (
    <>
      <Channels channels={channels} />
      <h2>
        Open <span class="count">{open.length}</span>
      </h2>
      {open.length === 0 ? (
        <p class="quiet">No alert is open.</p>
      ) : (
        <AlertTable entries={open} kind="open" now={props.now} />
      )}
      <h2>
        Resolved <span class="count">{resolved.length}</span>
      </h2>
      {resolved.length === 0 ? (
        <p class="quiet">None resolved yet.</p>
      ) : (
        <AlertTable entries={resolved} kind="resolved" now={props.now} />
      )}
    </>
  );
}
