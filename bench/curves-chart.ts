/** A line chart as SVG (no dependencies): one or more series over the same x values, each with its own y axis scale. */

export interface Series {
  name: string;
  values: ReadonlyArray<number | undefined>;
}

const COLOURS = ['#4c78a8', '#e45756', '#54a24b', '#f58518'];
const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * `xs` are drawn evenly spaced (the curves' steps are 1, 10, 50 ... or 1, 2, 4 ... : evenly spaced
 * reads better than a linear axis); each series is scaled to its own maximum and labelled with its
 * values, so two units (µs and ms) share one plot.
 */
export function renderLines(title: string, xLabel: string, xs: ReadonlyArray<number | string>, series: readonly Series[]): string {
  const width = 760;
  const height = 360;
  const left = 60;
  const right = 40;
  const top = 50 + series.length * 16;
  const bottom = 50;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const x = (i: number): number => left + (xs.length === 1 ? plotW / 2 : (i * plotW) / (xs.length - 1));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="20" font-weight="bold">${escape(title)}</text>`,
    `<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#888"/>`,
    `<text x="${left + plotW / 2}" y="${height - 12}" text-anchor="middle">${escape(xLabel)}</text>`,
  ];
  xs.forEach((v, i) => parts.push(`<text x="${x(i).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${escape(String(v))}</text>`));
  series.forEach((s, k) => {
    const colour = COLOURS[k % COLOURS.length]!;
    const max = Math.max(...s.values.map((v) => v ?? 0), 1e-9);
    const y = (v: number): number => top + plotH - (v / max) * plotH;
    parts.push(`<rect x="10" y="${30 + k * 16}" width="12" height="10" fill="${colour}"/><text x="28" y="${39 + k * 16}">${escape(s.name)} (scaled to its maximum, ${max.toFixed(max >= 100 ? 0 : 1)})</text>`);
    const points = s.values.map((v, i) => (v === undefined ? undefined : `${x(i).toFixed(1)},${y(v).toFixed(1)}`)).filter((p): p is string => p !== undefined);
    parts.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.join(' ')}"/>`);
    s.values.forEach((v, i) => {
      if (v === undefined) return;
      parts.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colour}"/>`);
      parts.push(`<text x="${(x(i) + 4).toFixed(1)}" y="${(y(v) - 6 - k * 12).toFixed(1)}" fill="${colour}">${v.toFixed(v >= 100 ? 0 : 1)}</text>`);
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
