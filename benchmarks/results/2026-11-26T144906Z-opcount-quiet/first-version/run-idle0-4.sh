#!/bin/bash
for r in 1 2 3; do
  for b in /tmp/base /work/main; do
    for s in BUSY_POLL ADAPTIVE; do
      for idle in 0 4; do
      tag=$( [ $b = /tmp/base ] && echo base || echo new )
      echo "== $tag $s idle=$idle round=$r"
      $b/benchmarks/opcount.sh $s chain 4000 24000 8 $idle 2>&1
      done
    done
  done
done
