#!/usr/bin/env python3
"""Draws load.sh's results.tsv as an SVG: req/s and p99 latency against concurrency, one line per
endpoint (records over RDMA beside the HTTP-only baseline). Standard library only.

    plot.py results.tsv out.svg "caption"
"""
import math
import sys

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
out, caption = sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
series = {}
for name, c, rps, p50, p99, err in rows:
    series.setdefault(name, []).append((int(c), float(rps or 0), float(p50 or 0), float(p99 or 0)))
colors = {"post-records": "#c0392b", "post-baseline": "#e6a09a", "get-records": "#2c6fbb", "get-baseline": "#9dbfe6"}
dash = {"post-baseline": "6,4", "get-baseline": "6,4"}
W, H, M = 440, 300, 60
conc = sorted({p[0] for s in series.values() for p in s})
xs = {c: M + (W - M - 20) * (i / max(1, len(conc) - 1)) for i, c in enumerate(conc)}


def panel(ox, title, idx, unit, log):
    vals = [p[idx] for s in series.values() for p in s if p[idx] > 0]
    hi = max(vals) if vals else 1
    lo = min(vals) if vals else 1
    if log:
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
        y = lambda v: H - 40 - (H - 80) * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        ticks = [10 ** e for e in range(int(math.log10(lo)), int(math.log10(hi)) + 1)]
    else:
        lo, hi = 0, hi * 1.1
        y = lambda v: H - 40 - (H - 80) * v / hi
        ticks = [hi * k / 4 for k in range(5)]
    g = [f'<g transform="translate({ox},0)">', f'<text x="{W/2}" y="20" text-anchor="middle" font-weight="bold">{title}</text>']
    g.append(f'<line x1="{M}" y1="{H-40}" x2="{W-10}" y2="{H-40}" stroke="#333"/><line x1="{M}" y1="40" x2="{M}" y2="{H-40}" stroke="#333"/>')
    for t in ticks:
        g.append(f'<line x1="{M-4}" y1="{y(t):.1f}" x2="{W-10}" y2="{y(t):.1f}" stroke="#ddd"/>'
                 f'<text x="{M-6}" y="{y(t)+4:.1f}" text-anchor="end" font-size="10">{t:g}</text>')
    for c, x in xs.items():
        g.append(f'<text x="{x:.1f}" y="{H-25}" text-anchor="middle" font-size="10">{c}</text>')
    g.append(f'<text x="{W/2}" y="{H-8}" text-anchor="middle" font-size="11">connections (wrk -c)</text>')
    g.append(f'<text x="14" y="{H/2}" transform="rotate(-90 14 {H/2})" text-anchor="middle" font-size="11">{unit}</text>')
    for name, pts in series.items():
        pts = sorted(pts)
        d = " ".join(f"{'M' if i == 0 else 'L'}{xs[p[0]]:.1f},{y(p[idx]):.1f}" for i, p in enumerate(pts))
        g.append(f'<path d="{d}" fill="none" stroke="{colors.get(name, "#555")}" stroke-width="2" stroke-dasharray="{dash.get(name, "")}"/>')
        for p in pts:
            g.append(f'<circle cx="{xs[p[0]]:.1f}" cy="{y(p[idx]):.1f}" r="3" fill="{colors.get(name, "#555")}"/>')
    g.append("</g>")
    return "\n".join(g)


legend = []
for i, name in enumerate(series):
    legend.append(f'<line x1="{70 + i*200}" y1="{H+12}" x2="{95 + i*200}" y2="{H+12}" stroke="{colors.get(name, "#555")}" '
                  f'stroke-width="2" stroke-dasharray="{dash.get(name, "")}"/><text x="{100 + i*200}" y="{H+16}" font-size="11">{name}</text>')
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2*W}" height="{H+50}" font-family="sans-serif" font-size="12">',
       '<rect width="100%" height="100%" fill="white"/>',
       panel(0, "throughput", 1, "requests/s", False),
       panel(W, "p99 latency", 3, "ms (log)", True),
       "\n".join(legend),
       f'<text x="{W}" y="{H+40}" text-anchor="middle" font-size="10" fill="#555">{caption}</text>',
       "</svg>"]
open(out, "w").write("\n".join(svg))
