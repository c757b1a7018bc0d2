#!/usr/bin/env bash
# Before and after a change, in one session (./cqflux bench ab -b REV): the paired benchmark
# (FabricPairedBench: cqflux's reactive API and the C program back to back, each ratio taken within
# one pair) built from two revisions and run alternately, A B B A ..., so that the host's drift over
# minutes falls on both. Each side's cqflux ÷ C is then pooled over its runs; "same figures within
# noise" means the two pooled medians sit inside each other's ranges. Writes
#   benchmarks/results/<UTC date-time>-ab/   (ignored by git) before-N/, after-N/ (one paired run each),
#                                            summary.md (both pooled tables)
#
# Usage: benchmarks/run-ab.sh -b before-rev [-a after-rev] [-R rounds] [-- paired options]
#   -b rev      the revision before (any git revision that has FabricPairedBench)
#   -a rev      the revision after (default: the working tree as it is, built in place)
#   -R rounds   rounds of two runs per side (default 2: A B B A)
#   after --:   FabricPairedBench's options for every run (default -P 4 -f '(write|read)\.8\.(busy|epoll)\.lat|write\.8\.busy\.tput\.w64')
# About 1 min per run with the defaults on 2 cores. Needs: JAVA_HOME -> JDK >= 25, gcc, libfabric-dev.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmarks"
BEFORE="" AFTER="" ROUNDS=2
while [ $# -gt 0 ]; do
  case "$1" in
    -b) BEFORE=$2; shift 2 ;;
    -a) AFTER=$2; shift 2 ;;
    -R) ROUNDS=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "run-ab.sh: unknown option $1 (-b, -a, -R, --)" >&2; exit 2 ;;
  esac
done
[ -n "$BEFORE" ] || { echo "run-ab.sh: -b before-rev is required" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "run-ab.sh: -R $ROUNDS is not a count of 1 or more" >&2; exit 2; }
PAIRED=("$@")
[ ${#PAIRED[@]} -gt 0 ] || PAIRED=(-P 4 -f '(write|read)\.8\.(busy|epoll)\.lat|write\.8\.busy\.tput\.w64')
: "${JAVA_HOME:?set JAVA_HOME to a JDK >= 25 (./cqflux bench does)}"
command -v gcc >/dev/null || { echo "run-ab.sh: gcc is missing (apt-get install gcc)" >&2; exit 1; }
export IPATH_NO_BACKTRACE=1 # see run.sh

STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
OUT="$BENCH/results/$STAMP-ab"
WT="$ROOT/target/ab"
mkdir -p "$OUT" "$BENCH/target/c" "$WT"

# A revision's benchmarks, built in a detached worktree of its own (removed at exit); the working
# tree itself when no revision is given.
checkout() { # name rev
  local dir="$WT/$1"
  git -C "$ROOT" worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
  git -C "$ROOT" worktree add -q --detach "$dir" "$2"
  echo "$dir"
}
cleanup() {
  for d in "$WT"/before "$WT"/after; do
    [ -d "$d" ] && git -C "$ROOT" worktree remove --force "$d" 2>/dev/null || true
  done
}
trap cleanup EXIT
B_DIR=$(checkout before "$BEFORE")
if [ -n "$AFTER" ]; then A_DIR=$(checkout after "$AFTER"); else A_DIR=$ROOT; fi
for d in "$B_DIR" "$A_DIR"; do
  echo "== build $(git -C "$d" rev-parse --short HEAD)$([ "$d" = "$ROOT" ] && ! git -C "$d" diff --quiet && echo ' (with local changes)') in $d"
  (cd "$d" && ./mvnw -B -q -P bench -pl benchmarks -am package -DskipTests)
done
gcc -O2 -Wall -o "$BENCH/target/c/fabric_rma_bench" "$BENCH/c/fabric_rma_bench.c" -lfabric -lpthread

run() { # side dir n
  echo "== $1 run $3: $(uptime)"
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -cp "$2/benchmarks/target/classes:$2/benchmarks/target/lib/*" \
    io.cqflux.benchmarks.FabricPairedBench -c "$BENCH/target/c/fabric_rma_bench" --out "$OUT/$1-$3" "${PAIRED[@]}" \
    2>&1 | grep --line-buffered -v 'transport fabric/tcp chosen' >"$OUT/$1-$3.txt" \
    || { echo "== $1 run $3 failed: $(grep -m1 -E 'Exception|Error' "$OUT/$1-$3.txt" || echo 'see the file'); output in $OUT/$1-$3.txt" >&2; exit 1; }
}
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then run before "$B_DIR" "$r"; run after "$A_DIR" "$r"
  else run after "$A_DIR" "$r"; run before "$B_DIR" "$r"; fi
done

summarize() { # side
  "$JAVA_HOME/bin/java" -cp "$A_DIR/benchmarks/target/classes:$A_DIR/benchmarks/target/lib/*" \
    io.cqflux.benchmarks.FabricPairedBench --summarize "$OUT/$1"-*/paired.txt
}
{ echo "# Before and after, paired runs alternated (fabric/tcp)"; echo
  echo "Run $STAMP: before $(git -C "$B_DIR" rev-parse --short HEAD), after $(git -C "$A_DIR" rev-parse --short HEAD)$([ "$A_DIR" = "$ROOT" ] && ! git -C "$ROOT" diff --quiet && echo ' with local changes'); $ROUNDS rounds of two runs per side; options: ${PAIRED[*]}."
  echo "Load average at each pair's start: $(grep -h '^# pair' "$OUT"/*/paired.txt | sed 's/.*load average //' | paste -sd';' | sed 's/;/; /g')."
  echo; echo "## Before"; echo; summarize before
  echo; echo "## After"; echo; summarize after; } >"$OUT/summary.md"
cat "$OUT/summary.md"
echo "== results: $OUT"
