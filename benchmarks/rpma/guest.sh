#!/bin/sh
# The guest side of `./cqflux bench rpma` (benchmarks/run-rpma.sh): runs inside the Soft-RoCE VM,
# in the worktree root, and writes every raw result to $CQFLUX_VM_OUT (copied to the run directory
# on the host by run-in-vm.sh --out). Per round, back to back, nothing else of ours running:
#   1. perftest over rxe0, client and server in the guest (rdma_cm on 10.0.2.15):
#      ib_read_lat and ib_write_lat, 8 B and 4 KiB         -> perftest-R.txt (+ raw perftest-R.raw)
#   2. the librpma C baseline benchmarks/c/rpma_lat_bench   -> c-rpma-R.txt
#   3. cqflux's RpmaLatBench on --transport rpma (reactive API) -> cqflux-rpma-R.txt (+ .stderr.txt)
#   (2 and 3 end each wait mode with the throughput of 8-byte writes, 64 in flight)
#   4. RpmaLatBench -T synthetic: the same harness and counts over the synthetic transport (no NIC,
#      no native call per operation), busy mode         -> javapath-R.txt (+ .stderr.txt)
#      cqflux's own Java path under the same emulation, which RpmaReport sets beside the gap 3 - 2.
# Usage: guest.sh ROUNDS PERFTEST_N C_N C_WARMUP JAVA_N JAVA_WARMUP JAVA_GLOBAL_WARMUP [TPUT_N]
#   TPUT_N: 8-byte writes with 64 in flight per throughput figure, C and cqflux (0 or absent: none)
# A JVM crash leaves its hs_err_pid*.log in the run directory (the guest's cwd is thrown away).
# A round whose cqflux JVM crashed (a new hs_err file, or an exit status of 128 or more) is run
# again, once: the crashed attempt's output is kept as cqflux-rpma-R.crashed*.txt and the rerun
# is noted in reruns.txt, which RpmaReport puts in the summary. (Seen in 6 of about 27 tiered
# starts: SIGSEGV in freshly patched JIT code, proven where the report shows the instruction to be
# one TCG decoded from a half-written entry patch; benchmarks/results/README.md, "A JVM crash in the lane".)
set -u
# The guest's JVMs compile with C2 only: a tiered JVM makes each hot method not entrant twice on its
# way to C2 (tier 3 replaced by tier 4), and each time HotSpot patches the method's entry while other
# threads may run it, which multi-threaded TCG can decode torn (the crash above). C2-only keeps the
# steady state the same (C2 code) with far fewer patches; the warm-ups cover the longer time in the
# interpreter. CQFLUX_BENCH_JIT overrides it (e.g. an empty value for the JVM's default).
JIT=${CQFLUX_BENCH_JIT--XX:-TieredCompilation}
rounds=$1 pn=$2 cn=$3 cw=$4 jn=$5 jw=$6 jg=$7 tn=${8:-0}
out=${CQFLUX_VM_OUT:?not in the lane}
addr=${CQFLUX_RPMA_ADDRESS:?not in the lane}
cp=benchmarks/target/classes:benchmarks/target/lib/*

{
  echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
  echo "cmdline $(cat /proc/cmdline)"
  echo "nproc $(nproc)"
  echo "jit ${JIT:-(the JVM's default: tiered)}"
  dmesg | grep -i -E 'tsc|clocksource' || true
} >"$out/guest-clock.txt"
echo "rpma bench: guest clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $rounds round(s)"

# perftest figures in the C baselines' format. A perftest result line is
#   #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
# t_typical is perftest's median. ib_write_lat is a ping-pong: its figures are half a round trip.
# Every perftest process runs under `timeout`: an ib_write_lat ping-pong once hung for more than
# 8 minutes of a --quick run (host load 4-5) and held the whole lane until it was killed; a
# timed-out tool is not retried, its figures are missing from the round.
perftest_one() { # round tool size port
  r=$1 tool=$2 size=$3 port=$4 try=1
  timeout 140 "$tool" -d rxe0 -R -F -p "$port" -s "$size" -n "$pn" >>"$out/perftest-$r.server.raw" 2>&1 &
  spid=$!
  while :; do
    sleep 3
    timeout 120 "$tool" -d rxe0 -R -F -p "$port" -s "$size" -n "$pn" "$addr" >"$out/tmp.raw" 2>&1
    prc=$?
    if [ "$prc" -eq 0 ]; then break; fi
    cat "$out/tmp.raw" >>"$out/perftest-$r.raw"
    if [ "$prc" -eq 124 ]; then
      echo "perftest: $tool -s $size timed out after 120 s (no figures)" | tee -a "$out/perftest-$r.raw" >&2
      kill "$spid" 2>/dev/null; wait "$spid"; rm -f "$out/tmp.raw"; return 1
    fi
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

# cqflux's part of a round: round port; output to cqflux-rpma-R.txt (also shown), exit status kept.
cqflux_round() {
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC $JIT -XX:ErrorFile="$out/hs_err_pid%p.log" \
    -cp "$cp" io.cqflux.benchmarks.RpmaLatBench -n "$jn" -w "$jw" -g "$jg" -t "$tn" -p "$2" \
    2>"$out/cqflux-rpma-$1.stderr.txt" >"$out/cqflux-rpma-$1.txt"
  st=$?
  cat "$out/cqflux-rpma-$1.txt"
  return "$st"
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
  echo "-- librpma C (rpma_lat_bench -n $cn -w $cw -t $tn)"
  benchmarks/target/c/rpma_lat_bench -n "$cn" -w "$cw" -t "$tn" -p $((7300 + r)) 2>"$out/c-rpma-$r.err" | tee "$out/c-rpma-$r.txt"
  echo "-- cqflux (RpmaLatBench -n $jn -w $jw -g $jg -t $tn)"
  crashes=$(ls "$out"/hs_err_pid*.log 2>/dev/null | wc -l)
  cqflux_round "$r" $((7320 + 2 * r))
  rc=$?
  now=$(ls "$out"/hs_err_pid*.log 2>/dev/null | wc -l)
  if [ "$now" -gt "$crashes" ] || [ "$rc" -ge 128 ]; then
    hs=$(ls -t "$out"/hs_err_pid*.log 2>/dev/null | head -1)
    mv "$out/cqflux-rpma-$r.txt" "$out/cqflux-rpma-$r.crashed.txt"
    mv "$out/cqflux-rpma-$r.stderr.txt" "$out/cqflux-rpma-$r.crashed.stderr.txt"
    echo "-- cqflux JVM crashed in round $r (exit $rc, ${hs:+$(basename "$hs")}); running the round's cqflux part again, once"
    cqflux_round "$r" $((7360 + 2 * r))
    rc2=$?
    after=$(ls "$out"/hs_err_pid*.log 2>/dev/null | wc -l)
    if [ "$after" -gt "$now" ] || [ "$rc2" -ge 128 ]; then
      echo "round $r: the cqflux JVM crashed (exit $rc, ${hs:+$(basename "$hs")}) and crashed again on the rerun (exit $rc2): no cqflux figures for the round" >>"$out/reruns.txt"
    else
      echo "round $r: the cqflux JVM crashed (exit $rc, ${hs:+$(basename "$hs")}); the round's cqflux part was run again once (exit $rc2), its figures are the rerun's; the crashed attempt's output is cqflux-rpma-$r.crashed.txt" >>"$out/reruns.txt"
    fi
  fi
  # The Java path alone (see the header). A failure costs only this figure of the round.
  echo "-- cqflux's Java path alone (RpmaLatBench -T synthetic -m busy -n $jn -w $jw -g $jg -t $tn)"
  "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -XX:+UseParallelGC $JIT -XX:ErrorFile="$out/hs_err_pid%p.log" \
    -cp "$cp" io.cqflux.benchmarks.RpmaLatBench -T synthetic -m busy -n "$jn" -w "$jw" -g "$jg" -t "$tn" \
    2>"$out/javapath-$r.stderr.txt" >"$out/javapath-$r.txt" \
    || echo "rpma bench: round $r: the synthetic Java-path run failed (exit $?): no javapath figures" >&2
  cat "$out/javapath-$r.txt"
  echo "round $r end $(cat /proc/loadavg)" >>"$out/guest-loadavg.txt"
  r=$((r + 1))
done
