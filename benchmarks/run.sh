#!/usr/bin/env bash
# cqflux benchmarks: builds the benchmarks module, compiles and runs the C baselines, runs JMH,
# prints one table of ratios (Java/C, reactor/SPI, per wait strategy) and writes
#   benchmarks/results/<UTC date-time>/   (ignored by git) jmh.json, c-*.R.txt, jucx.R.txt, loadavg.txt, summary.md,
#                                         jmh-output.txt
#   benchmarks/results/latest.md          the summary of this run (quoted by docs/performance.md);
#                                         a --quick run writes results/latest-quick.md instead, so a
#                                         smoke run never replaces the figures of a full one
#
# Usage: benchmarks/run.sh [--quick] [--repeats=N] [jmh options...]
#   --quick        smoke run (~2 min): 1 short warm-up, 2 short measurements, fewer C iterations,
#                  and a single C repeat (before JMH) unless --repeats says otherwise
#   --repeats=N    run the C baselines (and JUCX) N times (default 3): N-1 before JMH, the last
#                  after it, so drift during the JMH run shows; with N=1 once, before JMH
#   jmh options    passed to JMH, e.g. a regexp to select benchmarks ('FabricSpi.*') or -p size=8
# Needs: JAVA_HOME set to a JDK >= 25 (./cqflux bench does that), gcc, libfabric-dev.
#
# C repeats (benchmarks/c-repeat.sh): repeat R writes c-eventfd.R.txt, c-fabric.R.txt and jucx.R.txt
# (R = 1, 2, 3) and a line "R before-jmh|after-jmh <UTC start> <load average 1, 5, 15 min>" to
# loadavg.txt. The report divides by each C figure's median over the repeats and shows the ratio's
# min-max against each repeat alone: one run of the C programs is too noisy on 2 vCPUs to carry a
# ratio (fabric.read.8.busy.lat.mean: 9.34 then 6.85 us in two back-to-back runs at load 1.3).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmarks"

QUICK=()
C_QUICK=()
LATEST=latest.md
JMH_ARGS=()
REPEATS=
for a in "$@"; do
  case "$a" in
    --quick) QUICK=(--quick); C_QUICK=(-q); LATEST=latest-quick.md ;;
    --repeats=*) REPEATS=${a#--repeats=} ;;
    -h|--help) sed -n '2,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) JMH_ARGS+=("$a") ;;
  esac
done
# A filtered run must not replace the full-run summary that docs/performance.md quotes.
if [ ${#JMH_ARGS[@]} -gt 0 ] && [ "$LATEST" = latest.md ]; then
  LATEST=latest-filtered.md
fi
# C repeats: 3 by default (2 before JMH, 1 after), 1 for --quick.
if [ -z "$REPEATS" ]; then
  if [ ${#QUICK[@]} -gt 0 ]; then REPEATS=1; else REPEATS=3; fi
fi
case "$REPEATS" in
  [1-9]|[1-9][0-9]) ;;
  *) echo "run.sh: --repeats=$REPEATS: want a whole number from 1 to 99" >&2; exit 2 ;;
esac

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
# The C baselines and JUCX, each repeat by c-repeat.sh (one program at a time, nothing else of
# ours running: the machine may have only 2 cores). All repeats but the last run now; BenchMain runs
# the last one once JMH is done (--after-jmh), so a load change during JMH shows in the spread.
export JAVA_HOME
BEFORE=$(( REPEATS > 1 ? REPEATS - 1 : 1 ))
for ((r = 1; r <= BEFORE; r++)); do
  "$BENCH/c-repeat.sh" ${C_QUICK[@]+"${C_QUICK[@]}"} "$OUT" "$r" before-jmh
done
AFTER_JMH=()
if [ "$REPEATS" -gt 1 ]; then
  AFTER_JMH=(--after-jmh "$(printf '%q ' "$BENCH/c-repeat.sh" ${C_QUICK[@]+"${C_QUICK[@]}"} "$OUT" "$REPEATS" after-jmh)")
fi

echo "== JMH"
"$JAVA" -cp "$BENCH/target/classes:$BENCH/target/lib/*" \
  io.cqflux.benchmarks.BenchMain --out "$OUT" --latest "$BENCH/results/$LATEST" \
  --c-repeats "$OUT" ${AFTER_JMH[@]+"${AFTER_JMH[@]}"} \
  ${QUICK[@]+"${QUICK[@]}"} ${JMH_ARGS[@]+"${JMH_ARGS[@]}"} 2>&1 | tee "$OUT/jmh-output.txt"
status=${PIPESTATUS[0]}
echo "== results: $OUT (summary: benchmarks/results/$LATEST)"
exit "$status"
