#!/bin/sh
# Regenerates epoll-bridge/src/main/java/io/cqflux/epoll/ffm (libc_h, libc_h$shared, epoll_event,
# epoll_data) with jextract (JDK 22+ build) from the glibc headers, restricted to the symbols in
# libc-epoll.symbols. jextract is not installable on the project's build machines; there the files
# are kept in this shape by hand and LibcBindingTest checks them against the headers.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v jextract >/dev/null 2>&1 || { echo "jextract not found on PATH (https://jdk.java.net/jextract/)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/libc-epoll.h" <<'H'
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
H
# No -l: the functions resolve in the C library the JVM already has loaded.
# shellcheck disable=SC2046
jextract --output "$root/epoll-bridge/src/main/java" \
    --target-package io.cqflux.epoll.ffm \
    --header-class-name libc_h \
    $(grep -v '^#' "$here/libc-epoll.symbols") \
    "$tmp/libc-epoll.h"
echo "regenerated io.cqflux.epoll.ffm; run: ./mvnw -B -q -o -pl epoll-bridge -am verify -Dtest='LibcBindingTest'"
