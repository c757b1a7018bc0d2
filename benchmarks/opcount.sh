#!/usr/bin/env bash
# Counts per reactive operation that do not depend on machine load the way timings do
# (fabric/tcp on loopback, 8-byte writes; see docs/performance.md, "Per-operation counts"):
#   - bytes allocated per operation by every JVM thread (OpCount, ThreadMXBean);
#   - system calls per operation, from the kernel's syscall tracepoints (`perf stat`, no ptrace:
#     strace slows every call by tens of microseconds and so changes what a time-bounded loop
#     does): two runs of LOW and HIGH operations after the same warm-up, subtracted and divided by
#     HIGH-LOW, so that start-up, set-up and warm-up cancel out. The loop's own epoll_wait calls
#     (maxevents 64, EpollPoller.MAX_EVENTS) are told apart from libfabric's (maxevents 1024).
# Usage: benchmarks/opcount.sh [STRATEGY [MODE [LOW HIGH]]]   (defaults: BUSY_POLL chain 2000 12000)
#   MODE: chain (fresh write() Monos in concatMap), reuse (one Mono resubscribed), block (write().block())
# Needs the benchmarks module built (./mvnw -P bench -pl benchmarks -am package -DskipTests) and perf.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/benchmarks"
STRATEGY=${1:-BUSY_POLL}; MODE=${2:-chain}; LOW=${3:-2000}; HIGH=${4:-12000}
JAVA_HOME=${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -1)}
export IPATH_NO_BACKTRACE=1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for n in "$LOW" "$HIGH"; do
  perf stat -x, -o "$OUT/perf.$n" -e raw_syscalls:sys_enter \
    -e syscalls:sys_enter_epoll_wait --filter 'maxevents == 64' \
    -e syscalls:sys_enter_epoll_wait --filter 'maxevents == 1024' \
    -e syscalls:sys_enter_futex -e context-switches -- \
    "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$B/target/classes:$B/target/lib/*" \
    io.cqflux.benchmarks.OpCount "$STRATEGY" "$MODE" "$n" 2>/dev/null | grep '^opcount'
done
python3 - "$OUT/perf.$LOW" "$OUT/perf.$HIGH" "$LOW" "$HIGH" <<'PY'
import sys
def counts(path):
    return [int(f[0]) for f in (l.strip().split(',') for l in open(path)) if len(f) > 3 and f[0].isdigit()]
lo, hi = counts(sys.argv[1]), counts(sys.argv[2])
n = int(sys.argv[4]) - int(sys.argv[3])
names = ["system calls", "epoll_wait of the loop", "epoll_wait of libfabric", "futex", "context switches"]
print("per operation (perf stat, difference of two runs):")
for name, a, b in zip(names, lo, hi):
    print(f"  {name:24} {(b - a) / n:8.2f}")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
