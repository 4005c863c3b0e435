/** A hand-written SVG line chart (no plotting dependency): consumer lag over time, one line per run. */
export interface Series {
  label: string;
  points: { x: number; y: number }[];
}

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c"];

export function lineChartSvg(
  series: Series[],
  opts: { title: string; xLabel: string; yLabel: string; width?: number; height?: number },
): string {
  const width = opts.width ?? 720;
  const height = opts.height ?? 360;
  const m = { left: 70, right: 150, top: 40, bottom: 50 };
  const all = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
  const xMax = niceCeil(Math.max(1, ...all.map((p) => p.x)));
  const yMax = niceCeil(Math.max(1, ...all.map((p) => p.y)));
  const px = (x: number) => m.left + (x / xMax) * (width - m.left - m.right);
  const py = (y: number) => height - m.bottom - (y / yMax) * (height - m.top - m.bottom);
  const ticks = (max: number) => Array.from({ length: 6 }, (_, i) => (max * i) / 5);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2 - m.right / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(opts.title)}</text>`,
  ];
  for (const t of ticks(yMax)) {
    out.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${py(t)}" y2="${py(t)}" stroke="#e5e7eb"/>`);
    out.push(
      `<text x="${m.left - 8}" y="${py(t) + 4}" text-anchor="end">${Math.round(t).toLocaleString("en-US")}</text>`,
    );
  }
  for (const t of ticks(xMax))
    out.push(`<text x="${px(t)}" y="${height - m.bottom + 18}" text-anchor="middle">${+t.toFixed(1)}</text>`);
  out.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${height - m.bottom}" stroke="#111"/>`);
  out.push(
    `<line x1="${m.left}" x2="${width - m.right}" y1="${height - m.bottom}" y2="${height - m.bottom}" stroke="#111"/>`,
  );
  out.push(
    `<text x="${(m.left + width - m.right) / 2}" y="${height - 12}" text-anchor="middle">${escape(opts.xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(18 ${(m.top + height - m.bottom) / 2}) rotate(-90)" text-anchor="middle">${escape(opts.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const d = s.points
      .filter((p) => Number.isFinite(p.y))
      .map((p, k) => `${k ? "L" : "M"}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`)
      .join(" ");
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    out.push(
      `<line x1="${width - m.right + 15}" x2="${width - m.right + 35}" y1="${m.top + 10 + i * 20}" y2="${m.top + 10 + i * 20}" stroke="${color}" stroke-width="3"/>`,
    );
    out.push(`<text x="${width - m.right + 40}" y="${m.top + 14 + i * 20}">${escape(s.label)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n");
}

function niceCeil(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
