/** Small inline SVG bar charts drawn on the server: no script; colours are attributes, so CSP needs no inline style. */

export type Series = { name: string; color: string };
export type Bar = { label: string; values: number[]; note?: string };

const WIDTH = 640;
const HEIGHT = 170;
const PAD = { left: 64, right: 8, top: 16, bottom: 24 };

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
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const max = Math.max(0, ...bars.map((bar) => bar.values.reduce((a, b) => a + b, 0)));
  const scale = (value: number) => (max === 0 ? 0 : (value / max) * plotHeight);
  const slot = plotWidth / Math.max(bars.length, 1);
  const barWidth = Math.max(2, Math.min(48, slot * 0.7));
  const baseline = PAD.top + plotHeight;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label}>
        <line x1={PAD.left} y1={baseline} x2={WIDTH - PAD.right} y2={baseline} stroke="#999" />
        <text x={PAD.left - 6} y={PAD.top + 4} text-anchor="end">
          {format(max)}
        </text>
        <text x={PAD.left - 6} y={baseline} text-anchor="end">
          {format(0)}
        </text>
        {bars.map((bar, i) => {
          const x = PAD.left + i * slot + (slot - barWidth) / 2;
          let top = baseline;
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
              {i % labelEvery === 0 && (
                <text x={x + barWidth / 2} y={HEIGHT - 6} text-anchor="middle">
                  {bar.label}
                </text>
              )}
            </g>
          );
        })}
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
