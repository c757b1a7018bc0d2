#!/usr/bin/env bash
# Plots one benchmark run: 8-byte write latency per wait strategy, C baseline against the
# fabric SPI path and the reactive API, from the same run (results/<stamp>/jmh.json + c-fabric.txt;
# in runs with C repeats, the median of each figure over c-fabric.1.txt, c-fabric.2.txt, ...).
#
#   benchmarks/plot.sh [results/<stamp>] [out.png]     (default: the newest run, docs/img/latency.png)
#
# Needs python3 and gnuplot (apt-get install python3 gnuplot-nox).
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=${1:-$(ls -d "$BENCH"/results/*/ | sort | tail -n 1)}
OUT=${2:-$BENCH/../docs/img/latency.png}
for t in python3 gnuplot; do
  command -v "$t" >/dev/null || { echo "plot.sh: $t not found (apt-get install python3 gnuplot-nox)" >&2; exit 1; }
done
DAT=$(mktemp)
trap 'rm -f "$DAT"' EXIT
python3 - "$RUN" >"$DAT" <<'PY'
import json, sys, os
run = sys.argv[1]
jmh = json.load(open(os.path.join(run, "jmh.json")))
c = {}
files = [os.path.join(run, "c-fabric.txt")]
if not os.path.isfile(files[0]):
    files = []
    while os.path.isfile(os.path.join(run, "c-fabric.%d.txt" % (len(files) + 1))):
        files.append(os.path.join(run, "c-fabric.%d.txt" % (len(files) + 1)))
values = {}
for f in files:
    for line in open(f):
        p = line.split()
        if len(p) >= 2:
            try:
                v = float(p[1])
            except ValueError:
                continue  # an info line such as "fabric.info provider=tcp ..."
            values.setdefault(p[0], []).append(v)
for k, vs in values.items():
    vs.sort()
    h = len(vs) // 2
    c[k] = "%.2f" % (vs[h] if len(vs) % 2 else (vs[h - 1] + vs[h]) / 2)
def score(bench, size, strategy):
    for b in jmh:
        prm = b.get("params", {})
        if prm.get("blockSpin", "default") != "default":
            continue  # a -p blockSpin=N comparison run: the plot shows the library's default
        if b["benchmark"].endswith(bench) and prm.get("size") == size and prm.get("strategy") == strategy:
            return "%.2f" % b["primaryMetric"]["score"]
    return "NaN"
for s, mode in (("BLOCKING", "epoll"), ("BUSY_POLL", "busy"), ("ADAPTIVE", "busy")):
    print(s, c.get("fabric.write.8.%s.lat.mean" % mode, "NaN"),
          score("FabricSpiBenchmarks.writeLatency", "8", s),
          score("ReactorBenchmarks.writeLatency", "8", s),
          score("ReactorBenchmarks.durableWriteLatency", "8", s))
PY
gnuplot <<GP
set terminal pngcairo size 900,480 font "DejaVu Sans,11" noenhanced
set output "$OUT"
set title "8-byte write latency, fabric/tcp on 127.0.0.1, one operation in flight ($(basename "$RUN"))"
set ylabel "µs per operation (mean)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top right
set grid ytics
set yrange [0:*]
plot "$DAT" using 2:xtic(1) title "C baseline (epoll / busy poll)", \
     "" using 3 title "Java: SPI + event loop", \
     "" using 4 title "Java: write() Mono", \
     "" using 5 title "Java: durableWrite() Mono (write + flush)"
GP
echo "plot.sh: wrote $OUT"
