/** Small inline SVG charts drawn on the server: no script; colours are attributes, so CSP needs no inline style. */
import type { Child } from "hono/jsx";

export type Series = { name: string; color: string };
export type Bar = { label: string; values: number[]; note?: string };
/** One x position of a line chart: a value per series, null where there is none (a gap in the line). */
export type Point = { label: string; values: (number | null)[] };

const WIDTH = 640;
const HEIGHT = 170;
const PAD = { left: 64, right: 8, top: 16, bottom: 24 };
const PLOT_WIDTH = WIDTH - PAD.left - PAD.right;
const PLOT_HEIGHT = HEIGHT - PAD.top - PAD.bottom;
const BASELINE = PAD.top + PLOT_HEIGHT;

/** The figure around a plot: its axis (0 and the top value), its caption and legend. */
function Frame(props: {
  label: string;
  series: Series[];
  max: number;
  format: (value: number) => string;
  children: Child;
}) {
  const { label, series, max, format } = props;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        <line x1={PAD.left} y1={BASELINE} x2={WIDTH - PAD.right} y2={BASELINE} stroke="#999" />
        <text x={PAD.left - 6} y={PAD.top + 4} text-anchor="end">
          {format(max)}
        </text>
        <text x={PAD.left - 6} y={BASELINE} text-anchor="end">
          {format(0)}
        </text>
        {props.children}
      </svg>
      <figcaption>
        {label}
        {series.length > 1 &&
          series.map((s) => (
            <span class="legend">
              <svg viewBox="0 0 10 10" width="10" height="10" aria-hidden="true">
                <rect width="10" height="10" fill={s.color} />
              </svg>
              {s.name}
            </span>
          ))}
      </figcaption>
    </figure>
  );
}

const XLabel = (props: { x: number; text: string }) => (
  <text x={props.x} y={HEIGHT - 6} text-anchor="middle">
    {props.text}
  </text>
);

/** One bar per entry, its values stacked in series order, each with a tooltip; `note` is written above it. */
export function StackedBars(props: {
  label: string;
  series: Series[];
  bars: Bar[];
  format: (value: number) => string;
  /** Label every n-th bar, for long series such as days. */
  labelEvery?: number;
}) {
  const { label, series, bars, format, labelEvery = 1 } = props;
  const max = Math.max(0, ...bars.map((bar) => bar.values.reduce((a, b) => a + b, 0)));
  const scale = (value: number) => (max === 0 ? 0 : (value / max) * PLOT_HEIGHT);
  const slot = PLOT_WIDTH / Math.max(bars.length, 1);
  const barWidth = Math.max(2, Math.min(48, slot * 0.7));
  return (
    <Frame label={label} series={series} max={max} format={format}>
      {bars.map((bar, i) => {
        const x = PAD.left + i * slot + (slot - barWidth) / 2;
        let top = BASELINE;
        const segments = bar.values.map((value, s) => {
          const height = scale(value);
          top -= height;
          return (
            <rect x={x} y={top} width={barWidth} height={height} fill={series[s]?.color ?? "#888"}>
              <title>{`${bar.label} · ${series[s]?.name ?? ""}: ${format(value)}`}</title>
            </rect>
          );
        });
        return (
          <g>
            {segments}
            {bar.note && (
              <text x={x + barWidth / 2} y={top - 3} text-anchor="middle" class="note">
                {bar.note}
              </text>
            )}
            {i % labelEvery === 0 && <XLabel x={x + barWidth / 2} text={bar.label} />}
          </g>
        );
      })}
    </Frame>
  );
}

/**
 * A line per series over the points, broken where a value is missing, each point a dot with a tooltip. `max`:
 * the top of the scale when it is fixed (a rate's 1), else the largest value.
 */
export function Lines(props: {
  label: string;
  series: Series[];
  points: Point[];
  format: (value: number) => string;
  labelEvery?: number;
  max?: number;
}) {
  const { label, series, points, format, labelEvery = 1 } = props;
  const values = points.flatMap((p) => p.values.filter((v): v is number => v !== null));
  const max = props.max ?? Math.max(0, ...values);
  const slot = PLOT_WIDTH / Math.max(points.length, 1);
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const y = (value: number) => BASELINE - (max === 0 ? 0 : (value / max) * PLOT_HEIGHT);
  return (
    <Frame label={label} series={series} max={max} format={format}>
      {series.map((s, n) => {
        // Runs of consecutive points with a value: one polyline each.
        const runs: [number, number][][] = [[]];
        points.forEach((point, i) => {
          const value = point.values[n];
          if (value === null || value === undefined) runs.push([]);
          else runs.at(-1)?.push([x(i), y(value)]);
        });
        return (
          <g class="series">
            {runs
              .filter((run) => run.length > 1)
              .map((run) => (
                <polyline
                  points={run.map(([px, py]) => `${px},${py}`).join(" ")}
                  fill="none"
                  stroke={s.color}
                />
              ))}
            {points.map((point, i) => {
              const value = point.values[n];
              if (value === null || value === undefined) return null;
              return (
                <circle cx={x(i)} cy={y(value)} r="2.5" fill={s.color}>
                  <title>{`${point.label} · ${s.name}: ${format(value)}`}</title>
                </circle>
              );
            })}
          </g>
        );
      })}
      {points.map((point, i) => (i % labelEvery === 0 ? <XLabel x={x(i)} text={point.label} /> : null))}
    </Frame>
  );
}
