// Geometry of the review health chart: reviewed correctness over time as a line, and its 95%
// Wilson confidence band as a filled area between the lower and upper bounds. Pure numbers in,
// SVG path text out, so the drawing is checked without a browser.

export interface HealthPoint {
  /** Milliseconds since the epoch. */
  t: number;
  value: number;
  lower: number;
  upper: number;
}

export interface ChartBox {
  width: number;
  height: number;
  /** Room kept for the axes' labels. */
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export interface ChartGeometry {
  line: string;
  band: string;
  /** Where each point is drawn, for the markers and their titles. */
  points: { x: number; y: number }[];
  /** y of 0, 0.5 and 1 for the axis labels. */
  ticks: { value: number; y: number }[];
  t0: number;
  t1: number;
}

const round = (n: number) => Math.round(n * 10) / 10;

export function healthGeometry(points: HealthPoint[], box: ChartBox): ChartGeometry {
  const plotW = box.width - box.left - box.right;
  const plotH = box.height - box.top - box.bottom;
  const t0 = points.length > 0 ? Math.min(...points.map((p) => p.t)) : 0;
  const t1 = points.length > 0 ? Math.max(...points.map((p) => p.t)) : 1;
  const span = t1 - t0 || 1;
  const x = (t: number) => round(box.left + (points.length === 1 ? plotW / 2 : ((t - t0) / span) * plotW));
  const y = (v: number) => round(box.top + (1 - Math.min(1, Math.max(0, v))) * plotH);
  const placed = points.map((p) => ({ x: x(p.t), y: y(p.value) }));
  const line = placed.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
  const upper = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t)},${y(p.upper)}`);
  const lower = [...points].reverse().map((p) => `L${x(p.t)},${y(p.lower)}`);
  const band = points.length > 0 ? `${upper.join(' ')} ${lower.join(' ')} Z` : '';
  const ticks = [0, 0.5, 1].map((value) => ({ value, y: y(value) }));
  return { line, band, points: placed, ticks, t0, t1 };
}
