#!/usr/bin/env bash
cd /tmp/sel
. .mvn/find-jdk.sh
export JAVA_HOME
for v in A B B A A B; do
  if [ $v = B ]; then export JAVA_TOOL_OPTIONS=-Dcqflux.proto.noselective=true; else unset JAVA_TOOL_OPTIONS; fi
  echo "== $v $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  benchmarks/run-paired.sh -P 8 -f 'write\.8\.(busy|epoll|adaptive)\.tput\.w64' 2>&1 | grep -E 'tput.w64 \|' 
done
