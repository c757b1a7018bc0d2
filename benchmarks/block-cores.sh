#!/usr/bin/env bash
# Why write().block() costs more than a chained write() under BUSY_POLL on a small machine
# (issue 13: goal block <= 1.5 x chained). Runs BlockCores (8-byte reactive writes over
# fabric/tcp on loopback, chained and blocked back to back in one JVM) for several
# client/server wait-strategy pairs, and prints per configuration the two latencies, their
# ratio and, per operation, each thread's time on a CPU, its time waiting on a run queue
# (/proc/<pid>/task/<tid>/schedstat) and its involuntary context switches, for the caller, the
# client loop and the server loop; with the load average before and after each configuration.
#
# Usage: benchmarks/block-cores.sh [--cpus LIST] [-n OPS] [-w WARMUP] [CLIENT/SERVER ...]
#   --cpus LIST    run the JVM under `taskset -c LIST` (e.g. 0: everything on one core)
#   CLIENT/SERVER  wait strategies (default: BUSY_POLL/BUSY_POLL BUSY_POLL/BLOCKING BLOCKING/BLOCKING)
# Writes benchmarks/results/<UTC date-time>-block/block-cores.txt (raw) and summary.txt (ignored by git).
# Needs the benchmarks module built (./mvnw -P bench -pl benchmarks -am package -DskipTests).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/benchmarks"
# shellcheck source=../.mvn/find-jdk.sh
. "$ROOT/.mvn/find-jdk.sh"
export IPATH_NO_BACKTRACE=1 # see run.sh: libinfinipath's constructor and HotSpot's SIGSEGV
PIN=()
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpus) PIN=(taskset -c "${2:?--cpus needs a CPU list}"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
[ -d "$B/target/classes" ] || { echo "block-cores.sh: build first (./mvnw -P bench -pl benchmarks -am package -DskipTests)" >&2; exit 1; }
OUT="$B/results/$(date -u +%Y-%m-%dT%H%M%SZ)-block"
mkdir -p "$OUT"
{
  echo "cpus online $(nproc), pinned: ${PIN[*]:-no}"
  echo "load before $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/summary.txt"
${PIN[@]+"${PIN[@]}"} "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC \
  -cp "$B/target/classes:$B/target/lib/*" io.cqflux.benchmarks.BlockCores ${ARGS[@]+"${ARGS[@]}"} \
  2>"$OUT/stderr.txt" >"$OUT/block-cores.txt"
# One line per configuration: latencies, ratio, and what each thread did per blocked operation.
awk '
  /^block\.info/ { print; next }
  { split($1, k, "."); cfg = k[2] "/" k[3] }
  $1 ~ /chain\.lat\.mean$/ { chain[cfg] = $2; order[++n] = cfg }
  $1 ~ /block\.lat\.mean$/ { blk[cfg] = $2 }
  $1 ~ /block_over_chain$/ { ratio[cfg] = $2 }
  $1 ~ /\.load$/ || $2 ~ /^before=/ { load[cfg] = $2 " " $3 }
  k[4] == "block" && k[6] == "runqueue" { rq[cfg, k[5]] = $2 }
  k[4] == "block" && k[6] == "nvcsw" { nv[cfg, k[5]] = $2 }
  k[4] == "chain" && k[6] == "nvcsw" { cnv[cfg, k[5]] = $2 }
  END {
    printf "%-22s %9s %9s %6s | per blocked op: run-queue us (caller, client loop, server loop); involuntary switches (caller, client loop, server loop) | chained op: involuntary switches (client loop, server loop) | load\n", "client/server", "chain us", "block us", "ratio"
    for (i = 1; i <= n; i++) {
      c = order[i]
      printf "%-22s %9s %9s %6s | %s %s %s ; %s %s %s | %s %s | %s\n", c, chain[c], blk[c], ratio[c],
        rq[c, "caller"], rq[c, "clientloop"], rq[c, "serverloop"], nv[c, "caller"], nv[c, "clientloop"], nv[c, "serverloop"],
        cnv[c, "clientloop"], cnv[c, "serverloop"], load[c]
    }
  }' "$OUT/block-cores.txt" | tee -a "$OUT/summary.txt"
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"
echo "raw: $OUT/block-cores.txt"
