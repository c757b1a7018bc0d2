#!/bin/sh
# Regenerates the librpma FFM bindings (package io.cqflux.transport.rpma.ffm) with jextract (JDK 22+).
# jextract cannot be installed on the project's build machines (not in Debian, not on Maven
# Central), so the checked-in sources are kept in exactly this shape by hand; run this where
# jextract is available and diff. Afterwards re-apply the one documented deviation in
# librpma_h$shared (soname probing without failing class initialisation) and run
# RpmaBindingLayoutTest, which checks every layout and constant against the installed headers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-"$root/core/rpma/src/main/java"}
hdr=${LIBRPMA_HEADER:-/usr/include/librpma.h}
# One header class for librpma and the one librdmacm call the transport makes itself
# (rdma_destroy_id, for what librpma 1.2 leaves of a rejected request: RpmaConnectionRequest).
wrapper=$(mktemp --suffix=.h)
trap 'rm -f "$wrapper"' EXIT
printf '#include "%s"\n#include <rdma/rdma_cma.h>\n' "$hdr" >"$wrapper"
command -v jextract >/dev/null 2>&1 || { echo "jextract not found on PATH (https://jdk.java.net/jextract/)" >&2; exit 2; }
# shellcheck disable=SC2046 # the symbol file holds one option pair per line
jextract --output "$out" \
    --target-package io.cqflux.transport.rpma.ffm \
    --header-class-name librpma_h \
    --library :librpma.so.0 \
    --library :librdmacm.so.1 \
    $(grep -v '^#' "$here/librpma.symbols") \
    -I /usr/include \
    "$wrapper"
echo "regenerated into $out/io/cqflux/transport/rpma/ffm"
