#!/bin/bash
# Opcount A/B/C: base (36e95e0), variant (a34129d with skipping off: only the ask before a
# readable source's handler), a34129d (the change as it stood then); BUSY_POLL and ADAPTIVE chained 8-byte writes with 0, 4
# and 16 idle connections; builds alternated within each round.
for r in 1 2 3 4; do
  for idle in 16 4 0; do
    for s in BUSY_POLL ADAPTIVE; do
      for b in /tmp/base /tmp/variant /work/main; do
        tag=$(case $b in /tmp/base) echo base;; /tmp/variant) echo variant;; *) echo new;; esac)
        echo "== $tag $s idle=$idle round=$r"
        $b/benchmarks/opcount.sh $s chain 4000 24000 8 $idle 2>&1
      done
    done
  done
done
