#!/bin/busybox sh
# The Soft-RoCE lane's guest init (becomes /init of the initramfs built by prepare.sh).
#
# Stage 1 (pid 1 in the initramfs): load the modules, put a tmpfs overlay over the host root
# (shared read-only through 9p), switch_root into it.
# Stage 2 (pid 1 in the overlay, still this script, run by a copy of the static busybox): mount
# the writable share, bring up eth0 and rxe0, say "ready", run the host's command, write its exit
# code, power off.
#
# Talks to run-in-vm.sh only through the writable 9p share (tag "xfer", mounted at /run/cqflux):
#   in:  vm.conf (KVER, KDIR), cmd (a sh script)
#   out: ready, rc, diag (on failure)
# Its own messages go to the kernel console (ttyS0, a log file on the host); the command's
# output goes to ttyS1, which the host streams to its stdout.

bb=/bin/busybox
[ "$1" = stage2 ] && bb=/.cqflux/busybox

log() { echo "cqflux-init: $*" >/dev/ttyS0; }

halt_now() {
    # -f: no init to ask; the host sees QEMU exit (it runs with -no-reboot).
    $bb sync
    $bb poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 5
}

fail() {
    log "FAILED: $*"
    if [ -d /run/cqflux ] && [ -w /run/cqflux ]; then
        echo "$*" >/run/cqflux/diag
    fi
    halt_now
}

if [ "$1" != stage2 ]; then
    # ------------------------------------------------------------------------------- stage 1
    $bb mkdir -p /proc /sys /dev
    $bb mount -t proc proc /proc
    $bb mount -t sysfs sysfs /sys
    $bb mount -t devtmpfs devtmpfs /dev
    export PATH=/bin
    $bb --install -s /bin
    log "stage 1: $(cat /proc/uptime)"
    while read -r m; do
        insmod "/modules/$m" || fail "insmod $m"
    done </modules/order
    mkdir -p /lower /rw /newroot
    # cache=loose: the host root does not change under a run (the host writes only the xfer share).
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,ro,cache=loose hostroot /lower \
        || fail "mounting the host root (9p tag hostroot)"
    mount -t tmpfs -o mode=755 tmpfs /rw || fail "tmpfs"
    mkdir -p /rw/upper /rw/work
    mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot \
        || fail "overlay over the host root"
    mkdir -p /newroot/.cqflux
    cp /bin/busybox /newroot/.cqflux/busybox
    cp /init /newroot/.cqflux/init
    for d in proc sys dev; do mount --move "/$d" "/newroot/$d" || fail "moving /$d"; done
    # shellcheck disable=SC2093  # (reached only when switch_root fails)
    exec switch_root /newroot /.cqflux/busybox sh /.cqflux/init stage2
    fail "switch_root"
fi

# ----------------------------------------------------------------------------------- stage 2
# The host's own userland from here on (iproute2's ip and rdma, the JDK, librpma).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
$bb mkdir -p /dev/pts /dev/shm
$bb mount -t devpts devpts /dev/pts
$bb mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# The host's /run (sockets, pid files) means nothing here: a fresh one.
$bb mount -t tmpfs -o mode=755 tmpfs /run
$bb mkdir -p /run/cqflux
# No cache option on the writable share: every write reaches the host at once.
$bb mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 xfer /run/cqflux || fail "mounting the xfer share"
[ -f /run/cqflux/vm.conf ] || fail "no vm.conf in the xfer share"
# shellcheck source=/dev/null
. /run/cqflux/vm.conf
$bb hostname cqflux-vm

# Tools that look modules up (rdma's autoload, modinfo) find the unpacked kernel tree.
$bb mkdir -p /lib/modules
$bb ln -sfn "$KDIR/root/lib/modules/$KVER" "/lib/modules/$KVER"

# QEMU user-mode networking (slirp) gives the guest 10.0.2.15/24. All RDMA traffic of the lane
# stays inside the guest: rxe does not attach to lo, but traffic to eth0's own address loops back
# inside the guest's stack, so client and server both use 10.0.2.15.
/bin/ip link set lo up || fail "ip link set lo up"
/bin/ip link set eth0 up || fail "ip link set eth0 up (no virtio-net?)"
/bin/ip addr add 10.0.2.15/24 dev eth0 || fail "ip addr add"
# The address must exist before rxe0: rxe fills its GID table (IPv4 GID at index 1, RoCE v2) from
# the netdev's addresses.
/bin/rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 type rxe netdev eth0 (crc32_generic loaded?)"
i=0
until [ "$($bb cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)" = "4: ACTIVE" ]; do
    i=$((i + 1))
    [ "$i" -le 100 ] || fail "rxe0 port 1 not ACTIVE after 10 s: $($bb cat /sys/class/infiniband/rxe0/ports/1/state 2>&1)"
    $bb sleep 0.1
done

# ttyS1 carries the command's output to the host byte for byte: no \n -> \r\n, no echo.
$bb stty -F /dev/ttyS1 raw -echo -opost

log "stage 2 ready: $($bb cat /proc/uptime)"
# Written aside and renamed: the host polls for the name and reads the content at once.
$bb cut -d' ' -f1 /proc/uptime >/run/cqflux/ready.tmp && $bb mv /run/cqflux/ready.tmp /run/cqflux/ready

# The host's /bin/sh by path: this busybox prefers its own applets for bare names (standalone
# shell), and the command must see the host's sh, ls, ip..., not busybox's.
/bin/sh /run/cqflux/cmd </dev/null >/dev/ttyS1 2>&1
rc=$?
log "command exited with $rc: $($bb cat /proc/uptime)"
echo "$rc" >/run/cqflux/rc.tmp && $bb mv /run/cqflux/rc.tmp /run/cqflux/rc
$bb umount /run/cqflux
halt_now
