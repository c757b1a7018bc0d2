#!/usr/bin/env bash
# Counts per reactive operation that do not depend on machine load the way timings do
# (fabric/tcp on loopback, 8-byte writes unless MODE and SIZE say otherwise; see
# benchmarks/results/README.md, "Per-operation counts"):
#   - bytes allocated per operation by every JVM thread (OpCount, ThreadMXBean);
#   - system calls per operation, from the kernel's syscall tracepoints (`perf stat`, no ptrace:
#     strace slows every call by tens of microseconds and so changes what a time-bounded loop
#     does): two runs of LOW and HIGH operations after the same warm-up, subtracted and divided by
#     HIGH-LOW, so that start-up, set-up and warm-up cancel out. The loop's own epoll_wait calls
#     (maxevents 64, EpollPoller.MAX_EVENTS) are told apart from libfabric's (maxevents 1024).
# Usage: benchmarks/opcount.sh [STRATEGY [MODE [LOW HIGH [SIZE [IDLE]]]]]   (defaults: BUSY_POLL chain 2000 12000 8 0)
#   MODE: chain (fresh write() Monos in concatMap), readchain (read() Monos), reuse (one Mono
#   resubscribed), block (write().block()), writeall (writeAll, 64 in flight); IDLE: idle connections
#   beside the measured one, on the same loops
# Needs the benchmarks module built (./mvnw -P bench -pl benchmarks -am package -DskipTests) and perf.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/benchmarks"
STRATEGY=${1:-BUSY_POLL}; MODE=${2:-chain}; LOW=${3:-2000}; HIGH=${4:-12000}; SIZE=${5:-8}; IDLE=${6:-0}
# The JDK as ./cqflux and ./mvnw find it: JAVA_HOME if it is >= 25, else the newest one installed.
# shellcheck source=../.mvn/find-jdk.sh
. "$ROOT/.mvn/find-jdk.sh"
export IPATH_NO_BACKTRACE=1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for n in "$LOW" "$HIGH"; do
  perf stat -x, -o "$OUT/perf.$n" -e raw_syscalls:sys_enter \
    -e syscalls:sys_enter_epoll_wait --filter 'maxevents == 64' \
    -e syscalls:sys_enter_epoll_wait --filter 'maxevents == 1024' \
    -e syscalls:sys_enter_futex -e context-switches -- \
    "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$B/target/classes:$B/target/lib/*" \
    io.cqflux.benchmarks.OpCount "$STRATEGY" "$MODE" "$n" "$SIZE" "$IDLE" 2>/dev/null | grep '^opcount'
done
python3 - "$OUT/perf.$LOW" "$OUT/perf.$HIGH" "$LOW" "$HIGH" <<'PY'
import sys
# The events in the order perf stat was given them (the two epoll_wait ones differ only by their
# filter, so the first is the loop's and the second libfabric's). Lines are matched by event name,
# not position: an event perf cannot count prints "<not supported>" (or "<not counted>") in place
# of its number, and its label must not move to the next event's figure.
EVENTS = [("system calls", "raw_syscalls:sys_enter"),
          ("epoll_wait of the loop", "syscalls:sys_enter_epoll_wait"),
          ("epoll_wait of libfabric", "syscalls:sys_enter_epoll_wait"),
          ("futex", "syscalls:sys_enter_futex"),
          ("context switches", "context-switches")]
def counts(path):
    found = [None] * len(EVENTS)
    for line in open(path):
        f = line.strip().split(',')
        if len(f) < 3 or line.startswith('#'):
            continue
        value, event = f[0], f[2]
        for i, (_, name) in enumerate(EVENTS):
            # perf may append a modifier (context-switches:u); the first free slot of that name wins.
            if found[i] is None and (event == name or event.startswith(name + ":")):
                found[i] = int(value) if value.isdigit() else value
                break
    return found
lo, hi = counts(sys.argv[1]), counts(sys.argv[2])
n = int(sys.argv[4]) - int(sys.argv[3])
print("per operation (perf stat, difference of two runs):")
for (label, _), a, b in zip(EVENTS, lo, hi):
    if isinstance(a, int) and isinstance(b, int):
        print(f"  {label:24} {(b - a) / n:8.2f}")
    else:
        why = next((x for x in (a, b) if isinstance(x, str)), "no line for the event")
        print(f"  {label:24} {'n/a':>8}  (perf: {why})")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
