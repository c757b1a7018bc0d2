#!/bin/bash
# Alternated old/new opcount runs: BUSY_POLL and ADAPTIVE chained 8-byte writes, 16 idle connections.
for r in 1 2 3 4; do
  for b in /tmp/base /work/main; do
    for s in BUSY_POLL ADAPTIVE; do
      tag=$( [ $b = /tmp/base ] && echo base || echo new )
      echo "== $tag $s idle=16 round=$r"
      $b/benchmarks/opcount.sh $s chain 4000 24000 8 16 2>&1
    done
  done
done
