#!/usr/bin/env bash
# Issue 13's fabric goals measured in pairs (./cqflux bench paired): every figure runs as C
# (c/fabric_rma_bench.c -f <figure>) and as cqflux's reactive API (FabricPairedBench), back to back
# in alternating order, several times, and each ratio is taken within one pair. The JMH run divides
# by C figures taken minutes away from it, and on 2 vCPUs both sides drift by up to 40 % over
# minutes; a pair's two sides are seconds apart. Writes
#   benchmarks/results/<UTC date-time>-paired/   (ignored by git) paired.txt (one line per run, load average per pair),
#                                                summary.md, output.txt
#   benchmarks/results/latest-paired.md          the summary of this run (with -f, -r or -b: latest-paired-filtered.md)
#
# Usage: benchmarks/run-paired.sh [-P pairs] [-n iterations] [-w warm-up] [-f figure-regex] [-r rcq] [-b batch]
#   -P pairs        pairs per figure (default 8; even and at least 4, so that each side runs first as often)
#   -n iterations   operations measured per latency run (default 20000; throughput: 5 x that)
#   -f regex        only the figures it matches, e.g. 'read\.4096\..*' (names: FabricPairedBench.FIGURES)
#   -w warm-up      operations before each measured cqflux run (default 5000)
#   -r rcq          cqflux's connections with a receive CQ of rcq entries (0: none, the default)
#   -b batch        the loops' completion batch (Cqflux.Builder.batchSize; default 32)
# About 4 min on 2 cores with the defaults. Needs: JAVA_HOME -> JDK >= 25, gcc, libfabric-dev.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmarks"
case "${1:-}" in -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
LATEST=latest-paired.md
for a in "$@"; do
  case "$a" in -f|-r|-b) LATEST=latest-paired-filtered.md ;; esac # a subset or a variant
done

: "${JAVA_HOME:?set JAVA_HOME to a JDK >= 25 (./cqflux bench does)}"
command -v gcc >/dev/null || { echo "run-paired.sh: gcc is missing (apt-get install gcc)" >&2; exit 1; }
[ -r /usr/include/rdma/fabric.h ] || { echo "run-paired.sh: libfabric headers are missing (apt-get install libfabric-dev)" >&2; exit 1; }
export IPATH_NO_BACKTRACE=1 # see run.sh

STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
OUT="$BENCH/results/$STAMP-paired"
mkdir -p "$OUT" "$BENCH/target/c"

echo "== build (mvnw -P bench package)"
(cd "$ROOT" && ./mvnw -B -q -P bench -pl benchmarks -am package -DskipTests)
gcc -O2 -Wall -o "$BENCH/target/c/fabric_rma_bench" "$BENCH/c/fabric_rma_bench.c" -lfabric -lpthread

echo "== pairs: $(uptime)"
set +e # the bench's own status, not the pipeline's first failure, decides what follows
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$BENCH/target/classes:$BENCH/target/lib/*" \
  io.cqflux.benchmarks.FabricPairedBench -c "$BENCH/target/c/fabric_rma_bench" --out "$OUT" "$@" 2>&1 \
  | grep --line-buffered -v 'transport fabric/tcp chosen' | tee "$OUT/output.txt"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -eq 0 ]; then
  { echo "# cqflux and C in pairs (fabric/tcp)"; echo
    echo "Run $STAMP; raw results in \`$STAMP-paired/\`. $(grep -m1 '^# ' "$OUT/paired.txt" | sed 's/^# //')."
    echo "Load average at each pair's start: $(grep '^# pair' "$OUT/paired.txt" | sed 's/.*load average //' | paste -sd';' | sed 's/;/; /g')."
    echo; cat "$OUT/summary.md"; } >"$BENCH/results/$LATEST"
  echo "== results: $OUT (summary: benchmarks/results/$LATEST)"
else
  echo "== failed (status $status); what ran is in $OUT" >&2
fi
exit "$status"
