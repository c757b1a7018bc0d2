#!/usr/bin/env bash
# Runs one command inside the Soft-RoCE VM and exits with its exit code.
#
# Usage: run-in-vm.sh [options] -- CMD [ARG...]
#   --timeout SEC       hard limit for the whole run, boot included (default 900); QEMU is killed
#                       and the exit code is 124
#   --boot-timeout SEC  deadline for the guest's "ready" marker (default 240); a boot that misses
#                       it is retried at most twice. CMD itself is never retried.
#   --mem MIB           guest memory (default 2048)
#   --smp N             guest CPUs (default 2)
#   --log FILE          also append CMD's output to FILE
#   --out DIR           files CMD writes under $CQFLUX_VM_OUT in the guest are copied to DIR on
#                       the host afterwards (the guest's root is a throw-away overlay)
#   --keep              keep the run folder (kernel console log, xfer share) and print its path
#
# In the guest CMD runs as root with the host's root file system (read-only 9p + tmpfs overlay:
# writes succeed but vanish at power-off), cwd = the host's cwd, PATH, JAVA_HOME, HOME and every
# CQFLUX_* variable passed through, CQFLUX_RPMA_ADDRESS=10.0.2.15 (eth0, with rxe0 on it) and
# CQFLUX_VM_OUT (a writable folder on the host, see --out).
# CMD's stdout and stderr arrive on this script's stdout, streamed through the guest's ttyS1.
# The lane's own messages go to stderr. Exit codes: CMD's; 124 timeout; 125 lane failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

timeout=900
# Wall time, so it must hold on a loaded machine: with the host's CPUs shared by many busy
# processes, TCG's vCPU threads get a small share and a boot that takes seconds on a quiet
# machine takes minutes. A boot cut off for being slow is retried from the start: its CPU time is
# lost and the next boot is as slow, so a deadline that is too short only adds load.
boot_timeout=240
mem=2048
smp=2
log_file=
out_dir=
keep=0

say() { printf 'softroce: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
posint() { case $2 in '' | *[!0-9]*) say "$1 needs a positive integer, got '$2'"; exit 2 ;; esac; }

while [ $# -gt 0 ]; do
    case $1 in
        --timeout) posint "$1" "${2:-}"; timeout=$2; shift 2 ;;
        --boot-timeout) posint "$1" "${2:-}"; boot_timeout=$2; shift 2 ;;
        --mem) posint "$1" "${2:-}"; mem=$2; shift 2 ;;
        --smp) posint "$1" "${2:-}"; smp=$2; shift 2 ;;
        --log) log_file=${2:?--log needs a file}; shift 2 ;;
        --out) out_dir=${2:?--out needs a folder}; shift 2 ;;
        --keep) keep=1; shift ;;
        --) shift; break ;;
        -h | --help) usage ;;
        *) say "unknown option '$1' (the command comes after --)"; usage ;;
    esac
done
[ $# -gt 0 ] || { say "no command given"; usage; }

start=$(date +%s.%N)
elapsed() { awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# prepare.sh --quick: a few file tests when prepared, otherwise the whole set-up; it names the
# kernel and this checkout's own initramfs.
conf=$("$here/prepare.sh" --quiet --quick --print) || { say "prepare.sh failed (run it alone to see why)"; exit 125; }
KVER=$(printf '%s\n' "$conf" | sed -n 's/^KVER=//p')
KDIR=$(printf '%s\n' "$conf" | sed -n 's/^KDIR=//p')
INITRAMFS=$(printf '%s\n' "$conf" | sed -n 's/^INITRAMFS=//p')
for f in "$KDIR/vmlinux" "$INITRAMFS"; do
    [ -f "$f" ] || { say "missing $f: run $here/prepare.sh"; exit 125; }
done

# sh single-quoting for the guest's command script (dash there: no $'...').
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

run=$(mktemp -d "${TMPDIR:-/tmp}/cqflux-vm.XXXXXX")
xfer=$run/xfer
mkdir "$xfer" "$xfer/out"
{
    printf 'KVER=%s\nKDIR=%s\n' "$(q "$KVER")" "$(q "$KDIR")"
} >"$xfer/vm.conf"
{
    echo "export PATH=$(q "$PATH")"
    [ -z "${JAVA_HOME:-}" ] || echo "export JAVA_HOME=$(q "$JAVA_HOME")"
    echo "export HOME=$(q "${HOME:-/root}")"
    while IFS='=' read -r name _; do
        case $name in CQFLUX_RPMA_ADDRESS | CQFLUX_VM_OUT) ;; CQFLUX_*) echo "export $name=$(q "${!name}")" ;; esac
    done < <(env | grep -E '^CQFLUX_[A-Za-z0-9_]*=' || true)
    echo "export CQFLUX_RPMA_ADDRESS=10.0.2.15"
    echo "export CQFLUX_VM_OUT=/run/cqflux/out"
    echo "cd $(q "$PWD") || exit 125"
    printf '%s' "exec"
    for a in "$@"; do printf ' %s' "$(q "$a")"; done
    echo
} >"$xfer/cmd"

qpid=
catpid=
# shellcheck disable=SC2317  # (invoked by the EXIT trap)
cleanup() {
    set +e
    if [ -n "$qpid" ]; then kill -9 "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; fi
    if [ -n "$catpid" ]; then kill "$catpid" 2>/dev/null; wait "$catpid" 2>/dev/null; fi
    if [ "$keep" = 1 ]; then say "kept the run folder $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Boots the VM once; sets $outcome to: done (rc file written), boot (no ready marker in time),
# timeout (overall deadline), died (ready, then QEMU exited without an exit code).
boot_once() {
    local attempt=$1 fifo=$run/out.$1 console=$run/console.$1.log
    shift
    rm -f "$xfer/ready" "$xfer/rc" "$xfer/diag" "$xfer/end"
    mkfifo "$fifo"
    # The command's output: ttyS1 -> fifo -> our stdout (and the log file).
    if [ -n "$log_file" ]; then
        tee -a "$log_file" <"$fifo" &
    else
        cat "$fifo" &
    fi
    catpid=$!
    # -accel tcg: /dev/kvm on this kind of machine is a PVM device a stock kernel cannot use.
    # -kernel vmlinux: the uncompressed kernel (prepare.sh) saves ~10 s of xz under TCG.
    # 9p "hostroot" read-only: the guest's userland is the host's (JDK, librpma, rdma-core).
    # romfile= : no iPXE option ROM to load for a NIC nobody boots from.
    qemu-system-x86_64 \
        -accel tcg -cpu "${CQFLUX_VM_CPU:-max}" -smp "$smp" -m "$mem" \
        -nodefaults -no-user-config -display none -vga none -monitor none -no-reboot \
        -kernel "$KDIR/vmlinux" -initrd "$INITRAMFS" \
        -append "console=ttyS0 quiet loglevel=4 panic=-1 rdinit=/init mitigations=off random.trust_cpu=on ${CQFLUX_VM_APPEND:-}" \
        -chardev "file,id=con,path=$console" -serial chardev:con \
        -chardev "file,id=out,path=$fifo" -serial chardev:out \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$xfer,mount_tag=xfer,security_model=none,multidevs=remap" \
        -netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile= \
        </dev/null >"$run/qemu.$attempt.log" 2>&1 &
    qpid=$!
    local boot_deadline
    boot_deadline=$(awk -v n="$(date +%s.%N)" -v b="$boot_timeout" 'BEGIN{printf "%.1f", n+b}')
    local ready=0
    outcome=
    # Poll at 10 Hz: QEMU exiting, the ready marker, the deadlines.
    while kill -0 "$qpid" 2>/dev/null; do
        if [ "$ready" = 0 ] && [ -e "$xfer/ready" ]; then
            ready=1
            say "guest ready after $(cat "$xfer/ready") s of guest uptime ($(elapsed) s wall); running: $*"
        fi
        now=$(date +%s.%N)
        if awk -v n="$now" -v s="$start" -v t="$timeout" 'BEGIN{exit !(n-s>t)}'; then
            outcome=timeout
            break
        fi
        if [ "$ready" = 0 ] && awk -v n="$now" -v d="$boot_deadline" 'BEGIN{exit !(n>d)}'; then
            outcome=boot
            break
        fi
        sleep 0.1
    done
    if [ -n "$outcome" ]; then
        kill -9 "$qpid" 2>/dev/null || true
    fi
    wait "$qpid" 2>/dev/null || true
    qpid=
    # QEMU closed the fifo: cat drains what is left and ends. Should QEMU have died before opening
    # it, cat still waits in open(): a read-write open (never blocks on Linux) releases it.
    local fd
    exec {fd}<>"$fifo"
    exec {fd}>&-
    wait "$catpid" 2>/dev/null || true
    catpid=
    if [ -z "$outcome" ]; then
        if [ -e "$xfer/rc" ]; then outcome="done"
        elif [ "$ready" = 1 ] || [ -e "$xfer/ready" ]; then outcome=died
        else outcome=boot
        fi
    fi
}

show_console() {
    say "last lines of the kernel console (attempt $1):"
    tail -n 30 "$run/console.$1.log" >&2 2>/dev/null || true
    [ ! -s "$run/qemu.$1.log" ] || { say "QEMU said:"; cat "$run/qemu.$1.log" >&2; }
    [ ! -s "$xfer/diag" ] || say "guest init: $(cat "$xfer/diag")"
}

rc=125
attempt=1
max_attempts=3
while :; do
    boot_once "$attempt" "$@"
    case $outcome in
        done)
            rc=$(cat "$xfer/rc")
            break ;;
        timeout)
            say "TIMEOUT: ${timeout} s passed; QEMU killed"
            show_console "$attempt"
            rc=124
            break ;;
        died)
            say "the VM stopped while the command ran, without an exit code (kernel panic or OOM?)"
            show_console "$attempt"
            rc=125
            break ;;
        boot)
            say "boot attempt $attempt failed: no ready marker within ${boot_timeout} s"
            show_console "$attempt"
            if [ "$attempt" -ge "$max_attempts" ]; then
                say "giving up after $attempt boot attempts"
                rc=125
                break
            fi
            attempt=$((attempt + 1))
            say "retrying the boot (attempt $attempt of $max_attempts)" ;;
    esac
done

if [ -n "$out_dir" ] && [ "$outcome" = "done" ]; then
    mkdir -p "$out_dir"
    cp -R "$xfer/out/." "$out_dir/"
fi
split=
if [ -s "$xfer/ready" ] && [ -s "$xfer/end" ]; then
    split=$(awk -v r="$(cat "$xfer/ready")" -v e="$(cat "$xfer/end")" \
        'BEGIN{printf "guest: boot to ready %.1f s, command %.1f s; ", r, e-r}')
fi
say "exit code $rc; wall time $(elapsed) s (${split}kernel $KVER, boot attempts: $attempt)"
exit "$rc"
