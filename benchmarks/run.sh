#!/usr/bin/env bash
# cqflux benchmarks: builds the benchmarks module, compiles and runs the C baselines, runs JMH,
# prints one table of ratios (Java/C, reactor/SPI, per wait strategy) and writes
#   benchmarks/results/<UTC date-time>/   jmh.json, c-*.txt, summary.md, jmh-output.txt
#   benchmarks/results/latest.md          the summary of this run (quoted by docs/performance.md);
#                                         a --quick run writes results/latest-quick.md instead, so a
#                                         smoke run never replaces the figures of a full one
#
# Usage: benchmarks/run.sh [--quick] [jmh options...]
#   --quick        smoke run (~2 min): 1 short warm-up, 2 short measurements, fewer C iterations
#   jmh options    passed to JMH, e.g. a regexp to select benchmarks ('FabricSpi.*') or -p size=8
# Needs: JAVA_HOME set to a JDK >= 25 (./cqflux bench does that), gcc, libfabric-dev.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmarks"

QUICK=()
C_QUICK=()
LATEST=latest.md
JMH_ARGS=()
for a in "$@"; do
  case "$a" in
    --quick) QUICK=(--quick); C_QUICK=(-q); LATEST=latest-quick.md ;;
    -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) JMH_ARGS+=("$a") ;;
  esac
done
# A filtered run must not replace the full-run summary that docs/performance.md quotes.
if [ ${#JMH_ARGS[@]} -gt 0 ] && [ "$LATEST" = latest.md ]; then
  LATEST=latest-filtered.md
fi

: "${JAVA_HOME:?set JAVA_HOME to a JDK >= 25 (./cqflux bench does)}"
JAVA="$JAVA_HOME/bin/java"
command -v gcc >/dev/null || { echo "run.sh: gcc is missing (apt-get install gcc)" >&2; exit 1; }
[ -r /usr/include/rdma/fabric.h ] || { echo "run.sh: libfabric headers are missing (apt-get install libfabric-dev)" >&2; exit 1; }

# Loading libfabric.so.1 (Debian 12, libfabric 1.17) also loads libinfinipath.so.4 (a DT_NEEDED of
# the psm provider build), whose ELF constructor replaces the process's SIGSEGV, SIGBUS, SIGILL,
# SIGABRT, SIGINT and SIGTERM handlers with its own backtrace printer unless IPATH_NO_BACKTRACE is
# set. HotSpot uses SIGSEGV itself (safepoint polls, implicit null checks), so the next such trap
# kills the JVM with "java:PID terminated with signal 11 at PC=... Backtrace:" -- seen here every
# time in the BUSY_POLL fabric benchmarks before the transport guarded against it. The fabric
# transport now restores the JVM's handlers itself; this stays as a second guard (harmless), and
# the JMH forks inherit it.
export IPATH_NO_BACKTRACE=1

STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
OUT="$BENCH/results/$STAMP"
mkdir -p "$OUT" "$BENCH/target/c"

echo "== build (mvnw -P bench package)"
(cd "$ROOT" && ./mvnw -B -q -P bench -pl benchmarks -am package -DskipTests)

echo "== C baselines (gcc -O2)"
for prog in eventfd_loop_bench fabric_rma_bench; do
  gcc -O2 -Wall -o "$BENCH/target/c/$prog" "$BENCH/c/$prog.c" -lfabric -lpthread
done
# One at a time, nothing else of ours running: the machine may have only 2 cores.
"$BENCH/target/c/eventfd_loop_bench" ${C_QUICK[@]+"${C_QUICK[@]}"} | tee "$OUT/c-eventfd.txt"
"$BENCH/target/c/fabric_rma_bench" ${C_QUICK[@]+"${C_QUICK[@]}"} | tee "$OUT/c-fabric.txt"

# JUCX beside the fabric benchmarks (issue 13): OpenUCX's Java binding on UCX's tcp transport over
# lo, busy-polling; needs Debian's libucx0 (Maven Central's JUCX jar carries no UCX). Its figures go
# to jucx.txt in the C baselines' format, which plot_svg.py draws beside C and cqflux.
if [ -e /usr/lib/x86_64-linux-gnu/libucp.so.0 ] || [ -e /lib/x86_64-linux-gnu/libucp.so.0 ]; then
  echo "== JUCX (UCX_TLS=tcp UCX_NET_DEVICES=lo)"
  UCX_TLS=tcp UCX_NET_DEVICES=lo UCX_LOG_LEVEL=error "$JAVA" --enable-native-access=ALL-UNNAMED \
    -cp "$BENCH/target/classes:$BENCH/target/lib/*" io.cqflux.benchmarks.JucxBench \
    ${C_QUICK[@]+5000} | tee "$OUT/jucx.txt" || echo "run.sh: JUCX run failed; going on without it" >&2
else
  echo "== JUCX skipped: libucp.so.0 missing (apt-get install libucx0)"
fi

# JUCX's figures are in the C baselines' format: Report divides cqflux by them (issue 13's goals).
JUCX_C=()
if [ -s "$OUT/jucx.txt" ]; then
  JUCX_C=(--c "$OUT/jucx.txt")
fi

echo "== JMH"
"$JAVA" -cp "$BENCH/target/classes:$BENCH/target/lib/*" \
  io.cqflux.benchmarks.BenchMain --out "$OUT" --latest "$BENCH/results/$LATEST" \
  --c "$OUT/c-eventfd.txt" --c "$OUT/c-fabric.txt" ${JUCX_C[@]+"${JUCX_C[@]}"} \
  ${QUICK[@]+"${QUICK[@]}"} ${JMH_ARGS[@]+"${JMH_ARGS[@]}"} 2>&1 | tee "$OUT/jmh-output.txt"
status=${PIPESTATUS[0]}
echo "== results: $OUT (summary: benchmarks/results/$LATEST)"
exit "$status"
