/**
 * The soak's picture: one SVG of small panels, one per measure (RSS, JS heap used, event-loop delay
 * p99, Redis memory and keys, Postgres size), a line per process or store, minutes on the x axis and
 * the warm-up shaded. Written by hand: a few polylines need no charting library, and an SVG opens in
 * any browser.
 */

export interface Series {
  label: string;
  points: ReadonlyArray<{ t: number; value: number }>;
}

export interface Panel {
  title: string;
  unit: string;
  series: Series[];
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const W = 560;
const H = 260;
const PAD = { left: 64, right: 16, top: 28, bottom: 70 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Round steps for an axis: 1, 2 or 5 times a power of ten, about `count` of them over [lo, hi]. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function panelSvg(panel: Panel, x0: number, y0: number, spanMs: number, warmupMs: number): string {
  const all = panel.series.flatMap((s) => s.points.map((p) => p.value)).filter(Number.isFinite);
  let lo = all.length ? Math.min(...all) : 0;
  let hi = all.length ? Math.max(...all) : 1;
  if (lo > 0 && lo < hi * 0.5) lo = 0;
  if (hi === lo) hi = lo + 1;
  const pad = (hi - lo) * 0.05;
  lo = lo === 0 ? 0 : lo - pad;
  hi += pad;
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const sx = (t: number) => x0 + PAD.left + (spanMs > 0 ? (t / spanMs) * iw : 0);
  const sy = (v: number) => y0 + PAD.top + ih - ((v - lo) / (hi - lo)) * ih;
  const parts: string[] = [];
  parts.push(`<text x="${x0 + PAD.left}" y="${y0 + 18}" font-size="13" font-weight="bold">${esc(panel.title)} (${esc(panel.unit)})</text>`);
  if (warmupMs > 0 && spanMs > 0) {
    const wx = sx(Math.min(warmupMs, spanMs));
    parts.push(`<rect x="${sx(0)}" y="${y0 + PAD.top}" width="${wx - sx(0)}" height="${ih}" fill="#f2f2f2"/>`);
    parts.push(`<text x="${sx(0) + 4}" y="${y0 + PAD.top + 12}" font-size="10" fill="#888">warm-up</text>`);
  }
  for (const v of ticks(lo, hi)) {
    const y = sy(v);
    parts.push(`<line x1="${sx(0)}" x2="${sx(spanMs)}" y1="${y}" y2="${y}" stroke="#e0e0e0"/>`);
    parts.push(`<text x="${x0 + PAD.left - 6}" y="${y + 4}" font-size="10" text-anchor="end">${v}</text>`);
  }
  for (const m of ticks(0, spanMs / 60_000, 6)) {
    const x = sx(m * 60_000);
    parts.push(`<text x="${x}" y="${y0 + PAD.top + ih + 14}" font-size="10" text-anchor="middle">${m}</text>`);
  }
  parts.push(`<text x="${sx(spanMs)}" y="${y0 + PAD.top + ih + 14}" font-size="10" text-anchor="end" dy="12">min</text>`);
  parts.push(`<rect x="${sx(0)}" y="${y0 + PAD.top}" width="${iw}" height="${ih}" fill="none" stroke="#999"/>`);
  panel.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.filter((p) => Number.isFinite(p.value)).map((p) => `${sx(p.t).toFixed(1)},${sy(p.value).toFixed(1)}`);
    if (pts.length) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts.join(' ')}"/>`);
    const lx = x0 + PAD.left + (i % 4) * 125;
    const ly = y0 + H - 34 + Math.floor(i / 4) * 14;
    parts.push(`<rect x="${lx}" y="${ly - 8}" width="10" height="3" fill="${color}"/><text x="${lx + 14}" y="${ly - 3}" font-size="10">${esc(s.label)}</text>`);
  });
  return parts.join('\n');
}

/** The whole picture: panels two to a row. */
export function renderChart(opts: { title: string; panels: Panel[]; spanMs: number; warmupMs: number }): string {
  const cols = 2;
  const rows = Math.ceil(opts.panels.length / cols);
  const width = cols * W;
  const height = rows * H + 30;
  const body = opts.panels.map((p, i) => panelSvg(p, (i % cols) * W, 30 + Math.floor(i / cols) * H, opts.spanMs, opts.warmupMs)).join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="20" font-size="15" font-weight="bold">${esc(opts.title)}</text>`,
    body,
    '</svg>',
    '',
  ].join('\n');
}
