#!/bin/bash
# Final code (8f142b3) against base (36e95e0): opcount, BUSY_POLL and ADAPTIVE chained 8-byte
# writes with 16 and 4 idle connections, alternated, four rounds (the separate-receive-queue
# check is separate-rcq/run.sh).
for r in 1 2 3 4; do
  for idle in 16 4; do
    for s in BUSY_POLL ADAPTIVE; do
      for b in /tmp/base /work/main; do
        tag=$( [ $b = /tmp/base ] && echo base || echo new )
        echo "== $tag $s idle=$idle round=$r"
        $b/benchmarks/opcount.sh $s chain 4000 24000 8 $idle 2>&1
      done
    done
  done
done
