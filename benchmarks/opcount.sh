#!/usr/bin/env bash
# Load-independent counts per reactive operation (fabric/tcp on loopback, 8-byte writes):
#   - bytes allocated per operation by every JVM thread (OpCount, ThreadMXBean);
#   - system calls per operation: two runs under `strace -c -f`, LOW and HIGH operations after the
#     same warm-up, subtracted and divided by HIGH-LOW, so that set-up and warm-up cancel out.
# Usage: benchmarks/opcount.sh [STRATEGY [MODE [LOW HIGH]]]   (defaults: BUSY_POLL chain 2000 12000)
# Needs the benchmarks module built (./mvnw -P bench -pl benchmarks -am package -DskipTests) and strace.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/benchmarks"
STRATEGY=${1:-BUSY_POLL}; MODE=${2:-chain}; LOW=${3:-2000}; HIGH=${4:-12000}
JAVA_HOME=${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -1)}
export IPATH_NO_BACKTRACE=1
OUT=$(mktemp -d)
run() {
  strace -c -f -o "$OUT/strace.$1" "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
    -cp "$B/target/classes:$B/target/lib/*" io.cqflux.benchmarks.OpCount "$STRATEGY" "$MODE" "$1" 2>/dev/null \
    | grep '^opcount'
}
run "$LOW"; run "$HIGH"
python3 - "$OUT/strace.$LOW" "$OUT/strace.$HIGH" "$LOW" "$HIGH" <<'PY'
import sys
def calls(path):
    d = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != 'total':
            d[f[-1]] = int(f[3])
    return d
lo, hi = calls(sys.argv[1]), calls(sys.argv[2])
n = int(sys.argv[4]) - int(sys.argv[3])
rows = sorted(((hi.get(k, 0) - lo.get(k, 0)) / n, k) for k in set(lo) | set(hi))
print("syscalls per operation (strace -c -f, difference of two runs):")
for v, k in reversed(rows):
    if v >= 0.05:
        print(f"  {k:16} {v:7.2f}")
print(f"  {'total':16} {sum(v for v, _ in rows):7.2f}")
PY
rm -rf "$OUT"
