#!/usr/bin/env bash
# Prepares the Soft-RoCE lane: host packages, a Debian kernel with rdma_rxe (unpacked into the
# cache, never installed on the host), the uncompressed vmlinux and the busybox initramfs.
#
# Idempotent and cached: everything lands in
#   ${CQFLUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cqflux}/softroce
# keyed by kernel version; the initramfs is rebuilt only when this script, the guest init or the
# module set changes. A warm run only checks and prints the prepared paths.
#
# Usage: prepare.sh [--quiet] [--quick] [--print]
#   --quick  if something is prepared and its inputs are unchanged, stop there: no package or
#            kernel-version check (run-in-vm.sh uses it; a plain run also follows kernel updates)
#   --print  print what to boot on stdout: KVER=, KDIR=, INITRAMFS= lines
#
# Checkouts of different versions share the cache: the kernel is shared, and each version of
# this script and guest-init.sh gets its own initramfs (named by the hash of its inputs), so
# they never overwrite one another's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${CQFLUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cqflux}
cache=$cache_root/softroce
quiet=0
quick=0
print=0
for a in "$@"; do
    case $a in
        --quiet) quiet=1 ;;
        --quick) quick=1 ;;
        --print) print=1 ;;
        *) printf 'usage: prepare.sh [--quiet] [--quick] [--print]\n' >&2; exit 2 ;;
    esac
done

say() { [ "$quiet" = 1 ] || printf 'softroce/prepare: %s\n' "$*" >&2; }
die() { printf 'softroce/prepare: ERROR: %s\n' "$*" >&2; exit 1; }

t0=$(date +%s.%N)
busybox_bin=/bin/busybox

# What the initramfs is made of: this script, the guest init, the busybox binary, the kernel.
inputs_hash() {
    { cat "${BASH_SOURCE[0]}" "$here/guest-init.sh"; sha256sum "$busybox_bin"; echo "${modules[*]} $1"; } \
        | sha256sum | cut -c1-16
}

# Modules the guest loads, roots only: modprobe resolves their dependencies in load order.
# crc32_generic is not a dependency anyone declares, yet without it `rdma link add` fails with
# "rdma_rxe: failed to add eth0" (rxe computes the ICRC with crc32 through the crypto API).
modules=(virtio_pci 9pnet_virtio 9p overlay virtio_net rdma_rxe rdma_ucm crc32_generic)

print_conf() {
    [ "$print" = 0 ] || printf 'KVER=%s\nKDIR=%s\nINITRAMFS=%s\n' "$kver" "$kdir" "$initramfs"
}

if [ "$quick" = 1 ] && [ -f "$cache/current" ]; then
    kver=$(sed -n 's/^KVER=//p' "$cache/current")
    kdir=$cache/kernel-$kver
    initramfs=$kdir/initramfs-$(inputs_hash "$kver").cpio.gz
    if [ -f "$kdir/.kernel-ok" ] && [ -f "$initramfs" ]; then
        say "ready (quick check): kernel $kver, $initramfs"
        print_conf
        exit 0
    fi
fi

# ---------------------------------------------------------------------------- host packages
# ibverbs-utils and rdmacm-utils only for diagnosis in the guest (ibv_devices, rping).
packages=(qemu-system-x86 busybox-static cpio kmod iproute2 rdma-core ibverbs-providers librpma0 librdmacm1
    libibverbs1 ibverbs-utils rdmacm-utils xz-utils)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
apt_updated=0
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        die "missing host packages; run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
    fi
    say "installing ${missing[*]}"
    apt-get update -q >&2
    apt_updated=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
for tool in qemu-system-x86_64 busybox cpio depmod modprobe dpkg-deb flock xz; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/sbin/$tool" ] || [ -x "/usr/sbin/$tool" ] \
        || die "tool $tool not found after package installation"
done
PATH=$PATH:/sbin:/usr/sbin
# busybox-static installs the static binary as /bin/busybox (the dynamic "busybox" package would too,
# but the initramfs has no libc: insist on the static one).
dpkg-query -S "$busybox_bin" 2>/dev/null | grep -q '^busybox-static:' || die "$busybox_bin is not from busybox-static"

mkdir -p "$cache"
exec 9>"$cache/.lock"
# Other runs (a sibling checkout on the same machine) may prepare at the same time: one at a time.
flock -w 900 9 || die "timed out waiting for the lock $cache/.lock"

# ---------------------------------------------------------------------------- kernel version
# The full flavour, never -cloud-amd64: the cloud kernel has neither rdma_rxe nor 9p.
find_kver() {
    apt-cache depends linux-image-amd64 2>/dev/null \
        | sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | grep -v cloud | head -n1
}
kver=${CQFLUX_SOFTROCE_KERNEL:-}
[ -n "$kver" ] || kver=$(find_kver || true)
if [ -z "$kver" ] && [ "$apt_updated" = 0 ] && [ "$(id -u)" = 0 ]; then
    say "apt-cache knows no linux-image-amd64 yet: apt-get update"
    apt-get update -q >&2 && apt_updated=1
    kver=$(find_kver || true)
fi
if [ -z "$kver" ]; then
    # Offline but prepared before: use the newest kernel already in the cache.
    kver=$(for d in "$cache"/kernel-*/.kernel-ok; do
               if [ -e "$d" ]; then basename "$(dirname "$d")"; fi
           done | sed 's/^kernel-//' | sort -V | tail -n1)
    [ -n "$kver" ] || die "cannot find the kernel package (apt-cache depends linux-image-amd64 gave nothing)"
    say "apt gave no kernel version; using cached $kver"
fi
kdir=$cache/kernel-$kver

# ---------------------------------------------------------------------------- kernel tree
if [ ! -f "$kdir/.kernel-ok" ]; then
    say "fetching linux-image-$kver (unpacked into the cache, not installed)"
    tmp=$(mktemp -d "$cache/.kernel-$kver.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download -q "linux-image-$kver" >&2) \
        || { [ "$apt_updated" = 0 ] && [ "$(id -u)" = 0 ] && apt-get update -q >&2 && apt_updated=1 \
             && (cd "$tmp" && apt-get download -q "linux-image-$kver" >&2); } \
        || die "apt-get download linux-image-$kver failed"
    deb=$(ls "$tmp"/linux-image-"$kver"_*.deb)
    dpkg-deb -x "$deb" "$tmp/root"
    rm -f "$deb"
    # The package ships no modules.dep (postinst makes it): build it in the unpacked tree.
    depmod -b "$tmp/root" "$kver"
    # Under TCG, the kernel's own xz decompression costs ~10 s of a boot: unpack once here.
    # vmlinuz is a bzImage whose payload is an xz stream starting with FD 37 7A 58 5A 00.
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$tmp/root/boot/vmlinuz-$kver" | head -n1 | cut -d: -f1 || true)
    [ -n "$off" ] || die "no xz payload in vmlinuz-$kver"
    # xz stops at the end of its stream; the bzImage trailer after it only earns a warning.
    tail -c +$((off + 1)) "$tmp/root/boot/vmlinuz-$kver" | xz -dc -q 2>/dev/null >"$tmp/vmlinux" || true
    head -c 4 "$tmp/vmlinux" | grep -q 'ELF' || die "extracting vmlinux from vmlinuz-$kver failed"
    touch "$tmp/.kernel-ok"
    rm -rf "$kdir"
    mv "$tmp" "$kdir"
    trap - EXIT
fi

# ---------------------------------------------------------------------------- initramfs
# One per version of its inputs.
initramfs=$kdir/initramfs-$(inputs_hash "$kver").cpio.gz
if [ ! -f "$initramfs" ]; then
    say "building the initramfs"
    tmp=$(mktemp -d "$cache/.initramfs.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/root/bin" "$tmp/root/modules" "$tmp/root/proc" "$tmp/root/sys" "$tmp/root/dev" "$tmp/root/newroot"
    cp "$busybox_bin" "$tmp/root/bin/busybox"
    # -a: every name is a module (without it the rest are parameters of the first).
    # --show-depends prints "insmod PATH [params]" lines in load order (and "builtin NAME" for
    # built-ins); keep the order in a list the guest init reads.
    n=0
    : >"$tmp/root/modules/order"
    while read -r kind path _rest; do
        [ "$kind" = insmod ] || continue
        base=$(basename "$path")
        grep -qx "${base%%.ko*}.ko" "$tmp/root/modules/order" && continue
        case $path in
            *.ko.xz) xz -dc "$path" >"$tmp/root/modules/${base%.xz}" ;;
            *.ko.zst) zstd -dcq "$path" >"$tmp/root/modules/${base%.zst}" ;;
            *.ko.gz) gzip -dc "$path" >"$tmp/root/modules/${base%.gz}" ;;
            *) cp "$path" "$tmp/root/modules/$base" ;;
        esac
        echo "${base%%.ko*}.ko" >>"$tmp/root/modules/order"
        n=$((n + 1))
    done < <(modprobe -a -d "$kdir/root" -S "$kver" --show-depends "${modules[@]}")
    [ "$n" -gt 0 ] || die "modprobe found no modules for: ${modules[*]}"
    cp "$here/guest-init.sh" "$tmp/root/init"
    chmod 755 "$tmp/root/init"
    (cd "$tmp/root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$tmp/initramfs.cpio.gz"
    mv "$tmp/initramfs.cpio.gz" "$initramfs"
    # Those of versions nobody prepared for a week go (a checkout that still needs one rebuilds it).
    find "$kdir" -maxdepth 1 -name 'initramfs-*.cpio.gz' -mtime +7 -delete
    rm -rf "$tmp"
    trap - EXIT
    say "initramfs: $n modules"
fi

# The kernel to boot (shared by all checkouts; the initramfs is found from the hash).
# (KDIR too: run-in-vm.sh of the first lane commit reads it.)
printf 'KVER=%s\nKDIR=%s\n' "$kver" "$kdir" >"$cache/current.tmp.$$" && mv "$cache/current.tmp.$$" "$cache/current"
touch "$initramfs"

t1=$(date +%s.%N)
print_conf
say "ready: kernel $kver, $initramfs ($(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s)"
