#!/bin/bash
# Default configuration (one CQ per connection): each loop has one queue that can be quiet, so
# nothing is skipped; alternated base/new, 6 pairs per run.
. /work/main/.mvn/find-jdk.sh
for r in 1 2; do
  for b in /tmp/base /work/main; do
    tag=$( [ $b = /tmp/base ] && echo base || echo new )
    mkdir -p /tmp/def-ab/$tag-$r
    (cd $b/benchmarks && $JAVA_HOME/bin/java --enable-native-access=ALL-UNNAMED -cp "target/classes:target/lib/*" \
      io.cqflux.benchmarks.FabricPairedBench -c /tmp/cb/fabric_rma_bench -P 6 \
      -f 'write\.8\.(busy|adaptive)\.lat|write\.8\.(busy|adaptive)\.tput\.w64' --out /tmp/def-ab/$tag-$r > /tmp/def-ab/$tag-$r/stdout.txt 2>&1)
  done
done
