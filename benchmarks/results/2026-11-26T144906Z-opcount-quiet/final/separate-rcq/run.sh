#!/bin/bash
# Separate receive CQ (-r 128): two costly queues per connection, so the new busy rounds skip
# a quiet one even with a single connection. Alternated base/new, latency figures, 6 pairs each.
. /work/main/.mvn/find-jdk.sh
for r in 1 2 3; do
  for b in /tmp/base /work/main; do
    tag=$( [ $b = /tmp/base ] && echo base || echo new )
    mkdir -p /tmp/rcq-ab/$tag-$r
    (cd $b/benchmarks && $JAVA_HOME/bin/java --enable-native-access=ALL-UNNAMED -cp "target/classes:target/lib/*" \
      io.cqflux.benchmarks.FabricPairedBench -c /tmp/cb/fabric_rma_bench -P 6 -r 128 \
      -f 'write\.8\.(busy|adaptive)\.lat|read\.4096\.busy\.lat' --out /tmp/rcq-ab/$tag-$r > /tmp/rcq-ab/$tag-$r/stdout.txt 2>&1)
  done
done
