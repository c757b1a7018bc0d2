#!/bin/bash
# writeAll at 64 in flight, default configuration: base (36e95e0) and new alternated, 8 pairs per run.
. /work/main/.mvn/find-jdk.sh
for r in 1 2 3; do
  for b in /tmp/base /work/main; do
    tag=$( [ $b = /tmp/base ] && echo base || echo new )
    mkdir -p /tmp/wa-ab/$tag-$r
    (cd $b/benchmarks && $JAVA_HOME/bin/java --enable-native-access=ALL-UNNAMED -cp "target/classes:target/lib/*" \
      io.cqflux.benchmarks.FabricPairedBench -c /tmp/cb/fabric_rma_bench -P 8 \
      -f 'write\.8\.(busy|epoll|adaptive)\.tput\.w64' --out /tmp/wa-ab/$tag-$r > /tmp/wa-ab/$tag-$r/stdout.txt 2>&1)
  done
done
