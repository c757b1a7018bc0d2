#!/bin/sh
# Regenerates io.cqflux.transport.fabric.ffm with jextract (JDK 22+ jextract) from an explicit
# symbol list. jextract cannot be installed on this project's build machines; there the
# classes are kept in exactly this shape by scripts/jextract/libfabric-handgen.py, which reads
# the same symbol list and checks every offset with gcc. FabricBindingLayoutTest verifies the
# result against the installed headers either way.
#
# Usage (repository root): scripts/jextract/libfabric.sh [path/to/jextract]
set -eu
JEXTRACT=${1:-jextract}
command -v "$JEXTRACT" >/dev/null 2>&1 || { echo "jextract not found: $JEXTRACT (https://jdk.java.net/jextract/)" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYMS="$ROOT/scripts/jextract/libfabric-symbols.txt"
OUT="$ROOT/core/fabric/src/main/java"
HDR=$(mktemp --suffix=.h)
trap 'rm -f "$HDR"' EXIT
cat > "$HDR" <<'H'
#include <sys/uio.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/rdma_cma.h>
#include <rdma/fi_errno.h>
H
set --
while read -r kind name; do
  case "$kind" in
    function) set -- "$@" --include-function "$name" ;;
    struct) set -- "$@" --include-struct "$name" ;;
    constant) set -- "$@" --include-constant "$name" ;;
    *) ;;
  esac
done < "$SYMS"
# Only the header classes jextract writes; signal_h.java (SignalGuard's sigaction) is kept by hand.
rm -f "$OUT/io/cqflux/transport/fabric/ffm"/fabric_h*.java
"$JEXTRACT" --target-package io.cqflux.transport.fabric.ffm --header-class-name fabric_h \
  --library :libfabric.so.1 --output "$OUT" "$@" "$HDR"
