#!/bin/sh
# The guest side of `./cqflux bench rpma` (benchmarks/run-rpma.sh): runs inside the Soft-RoCE VM,
# in the worktree root, and writes every raw result to $CQFLUX_VM_OUT (copied to the run directory
# on the host by run-in-vm.sh --out). Per round, back to back, nothing else of ours running:
#   1. perftest over rxe0, client and server in the guest (rdma_cm on 10.0.2.15):
#      ib_read_lat and ib_write_lat, 8 B and 4 KiB         -> perftest-R.txt (+ raw perftest-R.raw)
#   2. the librpma C baseline benchmarks/c/rpma_lat_bench   -> c-rpma-R.txt
#   3. cqflux's RpmaLatBench on --transport rpma (reactive API) -> cqflux-rpma-R.txt (+ .stderr.txt)
# Usage: guest.sh ROUNDS PERFTEST_N C_N C_WARMUP JAVA_N JAVA_WARMUP JAVA_GLOBAL_WARMUP
# A JVM crash leaves its hs_err_pid*.log in the run directory (the guest's cwd is thrown away).
set -u
rounds=$1 pn=$2 cn=$3 cw=$4 jn=$5 jw=$6 jg=$7
out=${CQFLUX_VM_OUT:?not in the lane}
addr=${CQFLUX_RPMA_ADDRESS:?not in the lane}
cp=benchmarks/target/classes:benchmarks/target/lib/*

{
  echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
  echo "cmdline $(cat /proc/cmdline)"
  echo "nproc $(nproc)"
  dmesg | grep -i -E 'tsc|clocksource' || true
} >"$out/guest-clock.txt"
echo "rpma bench: guest clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $rounds round(s)"

# perftest figures in the C baselines' format. A perftest result line is
#   #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
# t_typical is perftest's median. ib_write_lat is a ping-pong: its figures are half a round trip.
perftest_one() { # round tool size port
  r=$1 tool=$2 size=$3 port=$4 try=1
  "$tool" -d rxe0 -R -F -p "$port" -s "$size" -n "$pn" >>"$out/perftest-$r.server.raw" 2>&1 &
  spid=$!
  while :; do
    sleep 3
    if "$tool" -d rxe0 -R -F -p "$port" -s "$size" -n "$pn" "$addr" >"$out/tmp.raw" 2>&1; then break; fi
    cat "$out/tmp.raw" >>"$out/perftest-$r.raw"
    try=$((try + 1))
    [ "$try" -le 3 ] || { echo "perftest: $tool -s $size failed 3 times" >&2; kill "$spid" 2>/dev/null; wait "$spid"; return 1; }
  done
  wait "$spid"
  cat "$out/tmp.raw" >>"$out/perftest-$r.raw"
  awk -v t="$tool" -v s="$size" '$1 == s && NF >= 9 && $2 ~ /^[0-9]+$/ {
      printf "perftest.%s.%s.lat.p50 %s us\nperftest.%s.%s.lat.mean %s us\nperftest.%s.%s.lat.p99 %s us\n",
             t, s, $5, t, s, $6, t, s, $8 }' "$out/tmp.raw" | tee -a "$out/perftest-$r.txt"
  rm -f "$out/tmp.raw"
}

r=1
while [ "$r" -le "$rounds" ]; do
  echo "== round $r of $rounds (guest load average $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "round $r start $(cat /proc/loadavg)" >>"$out/guest-loadavg.txt"
  port=18515
  for tool in ib_read_lat ib_write_lat; do
    for size in 8 4096; do
      perftest_one "$r" "$tool" "$size" "$port" || true
      port=$((port + 1))
    done
  done
  echo "-- librpma C (rpma_lat_bench -n $cn -w $cw)"
  benchmarks/target/c/rpma_lat_bench -n "$cn" -w "$cw" -p $((7300 + r)) 2>"$out/c-rpma-$r.err" | tee "$out/c-rpma-$r.txt"
  echo "-- cqflux (RpmaLatBench -n $jn -w $jw -g $jg)"
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC -XX:ErrorFile="$out/hs_err_pid%p.log" \
    -cp "$cp" io.cqflux.benchmarks.RpmaLatBench -n "$jn" -w "$jw" -g "$jg" -p $((7320 + 2 * r)) \
    2>"$out/cqflux-rpma-$r.stderr.txt" | tee "$out/cqflux-rpma-$r.txt"
  echo "round $r end $(cat /proc/loadavg)" >>"$out/guest-loadavg.txt"
  r=$((r + 1))
done
