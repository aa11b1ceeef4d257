/**
 * Outcomes (src/outcomes): what the factory delivered over a window, of one project or of all, as plots over
 * the days and the window's figures; the same data as CSV beside it.
 */
import type { DayFigures, Outcomes } from "../../outcomes/outcomes.ts";
import { Lines, type Series, StackedBars } from "../charts.tsx";
import { formatDuration, formatRatio, formatUsd, plural } from "../format.ts";
import { StateBadge } from "../layout.tsx";

export const outcomesPath = (project: string | null) =>
  project ? `/dashboard/projects/${project}/outcomes` : "/dashboard/outcomes";

const BLUE = "#3b6ea8";
const ORANGE = "#e0a030";
const GREEN = "#5aa469";
const RED = "#b0577a";

const one = (name: string, color = BLUE): Series[] => [{ name, color }];
const hours = (ms: number) => `${(ms / 3_600_000).toFixed(1)} h`;
const rounds = (n: number) => n.toFixed(1);
const count = (n: number) => String(Math.round(n));
const percent = (ratio: number) => formatRatio(ratio);
const orNone = (value: number | null, format: (v: number) => string) =>
  value === null ? "–" : format(value);

type Figure = (d: DayFigures) => number | null;

/** A plot over the days: bars of one figure, or a line per figure (`rate`: on a 0–100 % scale). */
type DayPlot = { label: string; format: (value: number) => string } & (
  | { name: string; color: string; bar: (d: DayFigures) => number }
  | { lines: [name: string, color: string, pick: Figure][]; rate?: boolean }
);

const DAY_PLOTS: DayPlot[] = [
  { label: "Issues merged per day", name: "merged", color: GREEN, bar: (d) => d.merged, format: count },
  {
    label: "Label → merged, of the issues merged that day (p50, p90)",
    lines: [
      ["p50", BLUE, (d) => d.leadTimeP50Ms],
      ["p90", ORANGE, (d) => d.leadTimeP90Ms],
    ],
    format: hours,
  },
  {
    label: "First-pass CI rate: merged issues whose first CI result was green",
    lines: [["first pass", GREEN, (d) => d.firstPassCiRate]],
    format: percent,
    rate: true,
  },
  {
    label: "Critic and human rounds per merged issue",
    lines: [
      ["critic", BLUE, (d) => d.criticRoundsPerIssue],
      ["human", RED, (d) => d.humanRoundsPerIssue],
    ],
    format: rounds,
  },
  { label: "Escalations per day", name: "escalations", color: RED, bar: (d) => d.escalations, format: count },
  {
    label: "Escalation rate: finished issues that escalated on the way",
    lines: [["escalated", RED, (d) => d.escalationRate]],
    format: percent,
    rate: true,
  },
  { label: "Cost per day (USD)", name: "USD", color: BLUE, bar: (d) => d.costUsd, format: formatUsd },
  {
    label: "Cost per merged issue (USD, its whole life)",
    lines: [["per merged issue", ORANGE, (d) => d.costPerMergedUsd]],
    format: formatUsd,
  },
  {
    label: "Cache-hit ratio: cache read / (input + cache read + cache write)",
    lines: [["cache hit", GREEN, (d) => d.cacheHitRatio]],
    format: percent,
    rate: true,
  },
];

export function OutcomesPage(props: { report: Outcomes; projects: string[] }) {
  const { report } = props;
  const { days, totals } = report;
  const labelEvery = Math.max(1, Math.ceil(days.length / 10));
  // MM-DD, as the overview's cost chart labels its days.
  const day = (d: DayFigures) => d.day.slice(5);
  const path = outcomesPath(report.project);
  const csv = (table: string) => `${path}.csv?from=${report.from}&to=${report.to}&table=${table}`;
  return (
    <>
      <form method="get" action={path} class="window">
        <label>
          from <input type="date" name="from" value={report.from} />
        </label>
        <label>
          to <input type="date" name="to" value={report.to} />
        </label>
        <button type="submit">Show</button>
        <span class="quiet">
          UTC days · CSV: <a href={csv("days")}>per day</a> · <a href={csv("waiting")}>per state</a> ·{" "}
          <a href={csv("causes")}>escalation causes</a>
        </span>
      </form>
      {report.project === null && props.projects.length > 0 && (
        <p class="chips">
          {props.projects.map((p) => (
            <a href={outcomesPath(p)}>{p}</a>
          ))}
        </p>
      )}
      <dl class="facts totals">
        <dt>merged</dt>
        <dd>
          {plural(totals.merged, "issue")} ({totals.finished} finished)
        </dd>
        <dt>label → merged</dt>
        <dd>
          p50 {orNone(totals.leadTimeP50Ms, formatDuration)} · p90{" "}
          {orNone(totals.leadTimeP90Ms, formatDuration)}
        </dd>
        <dt>first-pass CI</dt>
        <dd>{formatRatio(totals.firstPassCiRate)}</dd>
        <dt>rounds per merged issue</dt>
        <dd>
          critic {orNone(totals.criticRoundsPerIssue, rounds)} · human{" "}
          {orNone(totals.humanRoundsPerIssue, rounds)}
        </dd>
        <dt>escalations</dt>
        <dd>
          {totals.escalations} · {formatRatio(totals.escalationRate)} of finished issues escalated
        </dd>
        <dt>cost</dt>
        <dd>
          {formatUsd(totals.costUsd)} · {orNone(totals.costPerMergedUsd, formatUsd)} per merged issue
        </dd>
        <dt>cache hit</dt>
        <dd>{formatRatio(totals.cacheHitRatio)}</dd>
      </dl>
      <div class="charts">
        {DAY_PLOTS.map((plot) =>
          "bar" in plot ? (
            <StackedBars
              label={plot.label}
              series={one(plot.name, plot.color)}
              bars={days.map((d) => ({ label: day(d), values: [plot.bar(d)] }))}
              format={plot.format}
              labelEvery={labelEvery}
            />
          ) : (
            <Lines
              label={plot.label}
              series={plot.lines.map(([name, color]) => ({ name, color }))}
              points={days.map((d) => ({ label: day(d), values: plot.lines.map(([, , pick]) => pick(d)) }))}
              format={plot.format}
              labelEvery={labelEvery}
              {...(plot.rate && { max: 1 })}
            />
          ),
        )}
        <StackedBars
          label="Where the factory waits: time in each state, summed over every issue"
          series={one("time", ORANGE)}
          bars={report.waiting.map((w) => ({
            label: w.state.replace("awaiting_", "wait ").replace(/_/g, " "),
            values: [w.ms],
          }))}
          format={hours}
        />
      </div>
      <h2>Escalation causes</h2>
      {report.escalationCauses.length === 0 ? (
        <p class="quiet">No escalation in the window.</p>
      ) : (
        <table class="causes">
          <thead>
            <tr>
              <th>Cause</th>
              <th>Escalations</th>
            </tr>
          </thead>
          <tbody>
            {report.escalationCauses.map((c) => (
              <tr>
                <td>
                  {c.label} <small>{c.cause}</small>
                </td>
                <td>{c.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Where the factory waits</h2>
      <table class="waiting numbers">
        <thead>
          <tr>
            <th>State</th>
            <th>Time, summed</th>
          </tr>
        </thead>
        <tbody>
          {report.waiting.map((w) => (
            <tr>
              <td>
                <StateBadge state={w.state} />
              </td>
              <td>{formatDuration(w.ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
