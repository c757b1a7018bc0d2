#!/usr/bin/env python3
"""Latency per operation and size, C against cqflux (and JUCX when the run has it), as an SVG.

Reads one run's raw results (results/<stamp>/jmh.json, c-fabric.txt and, when present,
jucx.txt with lines "jucx.<put_flush|get>.<size>.lat.mean <value> us") and draws grouped bars,
one panel per wait strategy. Runs with C repeats (c-fabric.1.txt, c-fabric.2.txt, ...; jucx.R.txt)
give each C and JUCX figure as its median over the repeats, as the report does.
Needs only python3 (no gnuplot, no matplotlib).

    benchmarks/plot_svg.py [results/<stamp>] [out.svg]   (default: newest run, docs/img/latency-per-op.svg)
"""
import json
import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))


def newest_run():
    runs = sorted(d for d in os.listdir(os.path.join(BENCH, "results"))
                  if os.path.isfile(os.path.join(BENCH, "results", d, "jmh.json")))
    return os.path.join(BENCH, "results", runs[-1])


def read_pairs(path):
    out = {}
    if os.path.isfile(path):
        for line in open(path):
            p = line.split()
            if len(p) >= 2:
                try:
                    out[p[0]] = float(p[1])
                except ValueError:
                    pass
    return out


def read_repeats(run, stem):
    """stem.txt (a run before C repeats), else the median over stem.1.txt, stem.2.txt, ..."""
    single = os.path.join(run, stem + ".txt")
    if os.path.isfile(single):
        return read_pairs(single)
    values = {}
    r = 1
    while os.path.isfile(os.path.join(run, "%s.%d.txt" % (stem, r))):
        for k, v in read_pairs(os.path.join(run, "%s.%d.txt" % (stem, r))).items():
            values.setdefault(k, []).append(v)
        r += 1
    out = {}
    for k, vs in values.items():
        vs.sort()
        h = len(vs) // 2
        out[k] = vs[h] if len(vs) % 2 else (vs[h - 1] + vs[h]) / 2
    return out


def jmh_score(jmh, bench, size, strategy):
    for b in jmh:
        prm = b.get("params", {})
        if prm.get("blockSpin", "default") != "default":
            continue  # a -p blockSpin=N comparison run: the plot shows the library's default
        if b["benchmark"].endswith(bench) and prm.get("size") == size and prm.get("strategy") == strategy:
            return b["primaryMetric"]["score"]
    return None


def series(run):
    jmh = json.load(open(os.path.join(run, "jmh.json")))
    c = read_repeats(run, "c-fabric")
    jucx = read_repeats(run, "jucx")
    panels = []
    for strategy, mode in (("BUSY_POLL", "busy"), ("BLOCKING", "epoll")):
        groups = []
        for op, size, label in (("write", "8", "write 8 B"), ("write", "4096", "write 4 KiB"),
                                ("read", "8", "read 8 B"), ("read", "4096", "read 4 KiB")):
            bars = [
                ("C (libfabric)", c.get("fabric.%s.%s.%s.lat.mean" % (op, size, mode))),
                ("cqflux SPI + loop", jmh_score(jmh, "FabricSpiBenchmarks.%sLatency" % op, size, strategy)),
                ("cqflux write() Mono", jmh_score(jmh, "ReactorBenchmarks.writeLatency", size, strategy)
                 if op == "write" else None),
                ("JUCX (UCX tcp)", jucx.get("jucx.%s.%s.lat.mean" % ("put_flush" if op == "write" else "get", size))
                 if mode == "busy" else None),
            ]
            groups.append((label, bars))
        panels.append(("%s (C: %s)" % (strategy, "busy poll" if mode == "busy" else "epoll"), groups))
    return panels


COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52"]


def svg(run, panels):
    width, panel_h, top = 980, 300, 60
    height = top + len(panels) * (panel_h + 50) + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="DejaVu Sans, sans-serif" '
           'font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="24" text-anchor="middle" font-size="15">Mean latency per operation, fabric/tcp on '
           '127.0.0.1, one operation in flight (%s)</text>' % (width / 2, os.path.basename(run.rstrip("/")))]
    names = [name for name, _ in panels[0][1][0][1]]
    for i, name in enumerate(names):
        x = 80 + i * 210
        out.append('<rect x="%d" y="36" width="12" height="12" fill="%s"/>' % (x, COLOURS[i]))
        out.append('<text x="%d" y="46">%s</text>' % (x + 18, name))
    for pi, (title, groups) in enumerate(panels):
        y0 = top + pi * (panel_h + 50) + 20
        vals = [v for _, bars in groups for _, v in bars if v is not None]
        vmax = max(vals) * 1.15 if vals else 1.0
        left, right, plot_h = 70, width - 20, panel_h - 40
        out.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>' % (left, y0 - 4, title))
        for t in range(6):
            v = vmax * t / 5
            y = y0 + plot_h - plot_h * t / 5
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (left, y, right, y))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>' % (left - 6, y + 4, v))
        out.append('<text x="18" y="%d" transform="rotate(-90 18 %d)" text-anchor="middle">µs per operation</text>'
                   % (y0 + plot_h / 2, y0 + plot_h / 2))
        gw = (right - left) / len(groups)
        for gi, (label, bars) in enumerate(groups):
            bw = gw * 0.8 / len(bars)
            for bi, (_, v) in enumerate(bars):
                x = left + gi * gw + gw * 0.1 + bi * bw
                if v is None:
                    out.append('<text x="%.1f" y="%d" font-size="9" fill="#999" text-anchor="middle">n/a</text>'
                               % (x + bw / 2, y0 + plot_h - 3))
                    continue
                h = plot_h * v / vmax
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                           % (x, y0 + plot_h - h, bw - 2, h, COLOURS[bi]))
                out.append('<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle">%.1f</text>'
                           % (x + bw / 2, y0 + plot_h - h - 3, v))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (left + gi * gw + gw / 2,
                                                                                 y0 + plot_h + 16, label))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else newest_run()
    dest = sys.argv[2] if len(sys.argv) > 2 else os.path.join(BENCH, "..", "docs", "img", "latency-per-op.svg")
    with open(dest, "w") as f:
        f.write(svg(run, series(run)))
    print("plot_svg.py: wrote " + dest)


if __name__ == "__main__":
    main()
