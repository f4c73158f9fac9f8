// A sparkline in SVG: the last values of a series as a line, with a text label that says the
// latest value and the peak (the picture alone tells a screen reader nothing).

export interface SparklineProps {
  values: readonly number[];
  label: string;
  width?: number;
  height?: number;
  /** CSS class for the stroke colour (spark-hit, spark-over, spark-near). */
  tone?: string;
}

export function Sparkline({ values, label, width = 120, height = 28, tone = 'spark-hit' }: SparklineProps) {
  const last = values.length > 0 ? values[values.length - 1]! : 0;
  const peak = values.reduce((a, b) => Math.max(a, b), 0);
  const description = `${label}: ${last} now, peak ${peak} over the last ${values.length} samples`;
  let points = '';
  if (values.length > 1) {
    const step = width / (values.length - 1);
    const scale = peak > 0 ? (height - 2) / peak : 0;
    points = values
      .map((v, i) => `${(i * step).toFixed(1)},${(height - 1 - v * scale).toFixed(1)}`)
      .join(' ');
  }
  return (
    <span class="sparkline">
      <svg
        class={tone}
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={description}
      >
        <title>{description}</title>
        {points ? <polyline points={points} fill="none" stroke-width="1.5" /> : null}
      </svg>
      <span class="spark-value">{last}</span>
    </span>
  );
}
