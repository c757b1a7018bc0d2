#!/usr/bin/env bash
# One repeat of the C baselines (and JUCX, when libucx0 is installed), for benchmarks/run.sh, which
# runs it before JMH and has BenchMain run its last repeat after JMH (--after-jmh):
#
#   benchmarks/c-repeat.sh [-q] OUT REPEAT PHASE      (PHASE: before-jmh or after-jmh)
#
# writes OUT/c-eventfd.REPEAT.txt, OUT/c-fabric.REPEAT.txt, OUT/jucx.REPEAT.txt (the programs'
# stdout, "name value unit" lines) and appends one line to OUT/loadavg.txt:
#   REPEAT PHASE <UTC start> <uptime's load average at the start: 1, 5, 15 min>
# -q: the programs' quick settings (fewer iterations). Needs the programs run.sh compiled
# (target/c/), the module's classes (target/classes, target/lib) and JAVA_HOME.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C_QUICK=()
if [ "${1:-}" = -q ]; then
  C_QUICK=(-q)
  shift
fi
[ $# -eq 3 ] || { echo "usage: c-repeat.sh [-q] OUT REPEAT before-jmh|after-jmh" >&2; exit 2; }
OUT=$1 R=$2 PHASE=$3
: "${JAVA_HOME:?set JAVA_HOME to a JDK >= 25 (./cqflux bench does)}"
export IPATH_NO_BACKTRACE=1 # see run.sh

echo "== C baselines, repeat $R ($PHASE): $(uptime)"
echo "$R $PHASE $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uptime | sed 's/.*load average: *//')" >>"$OUT/loadavg.txt"
# One at a time, nothing else of ours running: the machine may have only 2 cores.
"$BENCH/target/c/eventfd_loop_bench" ${C_QUICK[@]+"${C_QUICK[@]}"} | tee "$OUT/c-eventfd.$R.txt"
"$BENCH/target/c/fabric_rma_bench" ${C_QUICK[@]+"${C_QUICK[@]}"} | tee "$OUT/c-fabric.$R.txt"

# JUCX beside the fabric benchmarks (issue 13): OpenUCX's Java binding on UCX's tcp transport over
# lo, busy-polling; needs Debian's libucx0 (Maven Central's JUCX jar carries no UCX). Its figures go
# to jucx.R.txt in the C baselines' format, which Report divides cqflux by (issue 13's goals) and
# plot_svg.py draws beside C and cqflux.
if [ -e /usr/lib/x86_64-linux-gnu/libucp.so.0 ] || [ -e /lib/x86_64-linux-gnu/libucp.so.0 ]; then
  echo "== JUCX, repeat $R (UCX_TLS=tcp UCX_NET_DEVICES=lo)"
  UCX_TLS=tcp UCX_NET_DEVICES=lo UCX_LOG_LEVEL=error "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
    -cp "$BENCH/target/classes:$BENCH/target/lib/*" io.cqflux.benchmarks.JucxBench \
    ${C_QUICK[@]+5000} | tee "$OUT/jucx.$R.txt" || echo "c-repeat.sh: JUCX run failed; going on without it" >&2
else
  echo "== JUCX skipped: libucp.so.0 missing (apt-get install libucx0)"
fi
