#!/usr/bin/env bash
# The rpma anchor of issue 13 (./cqflux bench rpma): boots the Soft-RoCE lane ONCE, with
# `tsc=reliable tsc_early_khz=<host TSC kHz>` on the guest kernel's command line, and runs inside
# it, back to back, per round: perftest (ib_read_lat, ib_write_lat over rxe0, 8 B and 4 KiB), the
# librpma C baseline (c/rpma_lat_bench.c: read, write, durable write = write + flush VISIBILITY,
# one in flight, busy poll and epoll; then 8-byte writes with 64 in flight) and cqflux's
# RpmaLatBench (the reactive API on the rpma transport, the same operations; writeAll for the 64 in
# flight), then the same RpmaLatBench over the synthetic transport (cqflux's Java path alone; also
# run once on the host before the boot). A round whose cqflux JVM crashed is run again once
# (guest.sh; noted in reruns.txt and the summary). Then prints p50/p99 per operation and size
# with cqflux ÷ C ratios and perftest beside, the throughput with C ÷ cqflux, and writes
#   benchmarks/results/<UTC date-time>-rpma/   (ignored by git) perftest-R.txt (+ .raw), c-rpma-R.txt, cqflux-rpma-R.txt
#                                              (+ .stderr.txt), guest-clock.txt, guest-loadavg.txt,
#                                              host-loadavg.txt, lane-output.txt, summary.md,
#                                              javapath-R.txt, javapath-host.txt (the Java path
#                                              alone: RpmaLatBench -T synthetic in each round and here)
#                                              (hs_err_pid*.log when a JVM crashed, reruns.txt and
#                                              cqflux-rpma-R.crashed*.txt when a round was rerun)
#   benchmarks/results/latest-rpma.md          the summary of this run
#
# Usage: benchmarks/run-rpma.sh [--rounds N] [--quick]
#   --rounds N   rounds of the three in the one boot (default 3: the spread of the ratios)
#   --quick      one round with small counts (a smoke run, ~3 min): writes latest-rpma-quick.md
# Needs: JAVA_HOME -> JDK >= 25, gcc, librpma-dev, perftest and the lane's packages
# (./cqflux bench rpma checks them; scripts/softroce/prepare.sh installs the lane's as root).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmarks"

rounds=3
# Counts: the lane's JVM is slow under TCG (every instruction translated, the JIT's work too), so
# cqflux gets a warm-up per figure as long as its measurement, and before the first figure of each
# wait mode a warm-up of every operation and size (java_g each): without it the first figure
# measured carried the JIT compiler threads' work (read 8 B p50 175 us, with it 100 us, C 62 us);
# the whole run stays near 10 min.
perftest_n=2000 c_n=5000 c_w=500 java_n=3000 java_w=3000 java_g=5000
# Throughput (issue 13: 8-byte writes, 64 in flight, C and cqflux's writeAll): writes per figure,
# after a tenth as many unmeasured in C and as many in cqflux (the JIT under TCG).
tput_n=20000
latest=latest-rpma.md
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2
      case $rounds in '' | *[!0-9]* | 0) echo "run-rpma.sh: --rounds needs a positive integer, got '$rounds'" >&2; exit 2 ;; esac ;;
    --quick) rounds=1 perftest_n=500 c_n=1000 c_w=100 java_n=1000 java_w=1000 java_g=1000 tput_n=5000 latest=latest-rpma-quick.md; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "run-rpma.sh: unknown argument '$1' (--rounds N, --quick)" >&2; exit 2 ;;
  esac
done

: "${JAVA_HOME:?set JAVA_HOME to a JDK >= 25 (./cqflux bench does)}"
command -v gcc >/dev/null || { echo "run-rpma.sh: gcc is missing (apt-get install gcc)" >&2; exit 1; }
[ -r /usr/include/librpma.h ] || { echo "run-rpma.sh: librpma headers are missing (apt-get install librpma-dev)" >&2; exit 1; }
command -v ib_read_lat >/dev/null || { echo "run-rpma.sh: perftest is missing (apt-get install perftest)" >&2; exit 1; }

# The host's TSC rate in kHz, for the guest's tsc_early_khz: under TCG the guest's rdtsc returns
# the host's counter unscaled, so the guest must be told its rate rather than calibrate it against
# an emulated (and, under load, late) timer. Sources in order of precision: the kernel's refined
# calibration or its sysfs value, the detected rate in dmesg, /proc/cpuinfo's "cpu MHz" (on a
# host with frequency scaling that is the current frequency, not the TSC's: last resort).
tsc_khz() {
  local v
  if [ -r /sys/devices/system/cpu/cpu0/tsc_freq_khz ]; then cat /sys/devices/system/cpu/cpu0/tsc_freq_khz; return; fi
  v=$(dmesg 2>/dev/null | sed -n 's/.*Refined TSC clocksource calibration: \([0-9.]*\) MHz.*/\1/p' | tail -1)
  [ -n "$v" ] || v=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz processor.*/\1/p' | tail -1)
  [ -n "$v" ] || v=$(sed -n 's/^cpu MHz[[:space:]]*: \([0-9.]*\)/\1/p' /proc/cpuinfo | head -1)
  [ -n "$v" ] || return 1
  awk -v m="$v" 'BEGIN{printf "%d\n", m * 1000 + 0.5}'
}
khz=$(tsc_khz) || { echo "run-rpma.sh: cannot find the host's TSC rate (dmesg, /proc/cpuinfo)" >&2; exit 1; }
grep -qw constant_tsc /proc/cpuinfo || echo "run-rpma.sh: warning: the host has no constant_tsc; guest timings may drift" >&2

STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
OUT="$BENCH/results/$STAMP-rpma"
mkdir -p "$OUT" "$BENCH/target/c"

echo "== build (mvnw -P bench package)"
(cd "$ROOT" && ./mvnw -B -q -P bench -pl benchmarks -am package -DskipTests)
echo "== librpma C baseline (gcc -O2)"
gcc -O2 -Wall -o "$BENCH/target/c/rpma_lat_bench" "$BENCH/c/rpma_lat_bench.c" -lrpma -libverbs
echo "== Soft-RoCE lane (prepare.sh)"
"$ROOT/scripts/softroce/prepare.sh"

# The Java path alone on the host, with the counts the guest uses (RpmaLatBench -T synthetic; the
# guest runs it too, in each round): the emulation's factor on cqflux's own code, for the report.
echo "== cqflux's Java path alone on the host (RpmaLatBench -T synthetic)"
# The guest's JIT flags (rpma/guest.sh: C2 only unless CQFLUX_BENCH_JIT says otherwise), so that
# guest ÷ host compares the same compiler.
# shellcheck disable=SC2086
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC ${CQFLUX_BENCH_JIT--XX:-TieredCompilation} \
  -cp "$BENCH/target/classes:$BENCH/target/lib/*" io.cqflux.benchmarks.RpmaLatBench -T synthetic -m busy \
  -n "$java_n" -w "$java_w" -g "$java_g" -t "$tput_n" 2>"$OUT/javapath-host.stderr.txt" | tee "$OUT/javapath-host.txt" \
  || echo "run-rpma.sh: the host's synthetic Java-path run failed; going on without it" >&2
echo "host before $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/host-loadavg.txt"
echo "== one boot, $rounds round(s): perftest, librpma C, cqflux (guest: tsc=reliable tsc_early_khz=$khz)"
set +e
(cd "$ROOT" && CQFLUX_VM_APPEND="${CQFLUX_VM_APPEND:+$CQFLUX_VM_APPEND }tsc=reliable tsc_early_khz=$khz" \
  "$ROOT/scripts/softroce/run-in-vm.sh" --timeout 1500 --out "$OUT" --log "$OUT/lane-output.txt" -- \
  benchmarks/rpma/guest.sh "$rounds" "$perftest_n" "$c_n" "$c_w" "$java_n" "$java_w" "$java_g" "$tput_n")
rc=$?
set -e
echo "host after $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/host-loadavg.txt"
[ "$rc" -eq 0 ] || echo "run-rpma.sh: the lane run ended with exit code $rc; reporting what arrived" >&2

echo "== table"
"$JAVA_HOME/bin/java" -cp "$BENCH/target/classes:$BENCH/target/lib/*" io.cqflux.benchmarks.RpmaReport \
  "$OUT" "$BENCH/results/$latest"
echo "== results: $OUT (summary: benchmarks/results/$latest)"
exit "$rc"
