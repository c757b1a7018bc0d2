#!/bin/sh
# Makes the rxe link rig of test-kit's network tests (RxeLinkRig) in the Soft-RoCE guest: a veth
# pair in the initial namespace, 198.18.200.1 on cqfxrxa and 198.18.200.2 on cqfxrxb, policy
# routing that sends the traffic between the two over the pair, a netem qdisc on each end (no
# fault) and an rxe device on each end (rxe-cqfxa, rxe-cqfxb), ports ACTIVE. Why each step is
# needed (what failed: namespaces, VRFs) is in RxeLinkRig's facts; this is the one place that makes
# the rig, used by run-tests.sh before the test JVM starts and by RxeLinkRig.create() when a JVM
# finds no rig standing.
#
# Usage (in the guest, as root): rxe-link-rig.sh [-- CMD [ARG...]]
#   Makes the rig unless it stands already, then runs CMD in its place (exec) when given.
#
# Why before the JVM: libfabric's verbs provider lists the RDMA devices and their addresses once per
# process, when libfabric is first used (VERBS_INI -> vrb_init_info in libfabric 1.17's
# prov/verbs), and nothing refreshes that list. A JVM that used libfabric before the rig's rxe
# devices existed cannot use them through libfabric; one started after it can.
#
# Exit codes: CMD's (a rig that cannot be made is reported and CMD runs all the same); without
# CMD, 0, or 125 when the rig cannot be made (the lane's own failure code); 2 for a usage error;
# 125 without running CMD when not run as root (the lane's guest always is).
set -eu

CLIENT_LINK=cqfxrxa
SERVER_LINK=cqfxrxb
CLIENT_RXE=rxe-cqfxa
SERVER_RXE=rxe-cqfxb
CLIENT_ADDR=198.18.200.1
SERVER_ADDR=198.18.200.2
# Locally administered MACs, fixed so that the permanent neighbour entries go in the same batch.
CLIENT_MAC=02:c6:12:c8:00:01
SERVER_MAC=02:c6:12:c8:00:02
# Routing tables (and rule priorities) holding each end's local route.
CLIENT_TABLE=4791
SERVER_TABLE=4792

ib=/sys/class/infiniband
say() { printf 'softroce/rig: %s\n' "$*" >&2; }
die() { say "FAILED: $*"; rm -f "/tmp/cqflux-rxe-rig.$$"; exit 125; }
# Shell builtins where a process would do (cat, awk, mktemp): under TCG a process start costs a
# sizeable part of a second.
uptime_cs() { read -r up _ </proc/uptime; echo "${up%.*}${up#*.}"; } # centiseconds
port_state() { s=; read -r s <"$ib/$1/ports/1/state" 2>/dev/null || true; echo "$s"; }

if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || { say "usage: rxe-link-rig.sh [-- CMD [ARG...]]"; exit 2; }
    shift
fi

# Both rxe ports ACTIVE, within 10 s.
await_active() {
    for dev in $CLIENT_RXE $SERVER_RXE; do
        i=0
        until [ "$(port_state "$dev")" = "4: ACTIVE" ]; do
            i=$((i + 1))
            [ "$i" -le 200 ] || die "$dev port 1 not ACTIVE after 10 s: '$(port_state "$dev")'"
            sleep 0.05
        done
    done
}

make_rig() {
    if [ -d "$ib/$CLIENT_RXE" ] && [ -d "$ib/$SERVER_RXE" ]; then
        [ -d "/sys/class/net/$CLIENT_LINK" ] \
            || die "rxe devices $CLIENT_RXE and $SERVER_RXE exist without their link $CLIENT_LINK: remove them (rdma link del) or boot afresh"
        await_active # a rig whose ports never came up (an earlier run of this script failed) is no rig
        say "the rig stands already"
        return 0
    fi
    t0=$(uptime_cs)
    # Leftovers of a rig whose rxe devices were never made: deleting one veth end removes both, and
    # with them their addresses and routes; the rules and tables go by their numbers.
    if [ -d "/sys/class/net/$CLIENT_LINK" ]; then
        ip link del "$CLIENT_LINK" || die "ip link del $CLIENT_LINK (a half-made rig)"
        for t in $CLIENT_TABLE $SERVER_TABLE; do
            while ip rule del pref "$t" 2>/dev/null; do :; done
            ip route flush table "$t" 2>/dev/null || true
        done
    fi
    modprobe -a veth sch_netem rdma_rxe || die "modprobe -a veth sch_netem rdma_rxe"
    # One ip process for every link, address, route, rule and neighbour; -batch stops at the first
    # failing line. The local routes leave the `local` table (consulted first for every packet) for
    # tables consulted only for what arrives on the owning end.
    batch=/tmp/cqflux-rxe-rig.$$
    {
        echo "link add $CLIENT_LINK address $CLIENT_MAC type veth peer name $SERVER_LINK address $SERVER_MAC"
        echo "addr add $CLIENT_ADDR/32 dev $CLIENT_LINK"
        echo "addr add $SERVER_ADDR/32 dev $SERVER_LINK"
        echo "link set $CLIENT_LINK up"
        echo "link set $SERVER_LINK up"
        echo "route del local $CLIENT_ADDR dev $CLIENT_LINK table local"
        echo "route del local $SERVER_ADDR dev $SERVER_LINK table local"
        echo "route add local $CLIENT_ADDR dev $CLIENT_LINK table $CLIENT_TABLE"
        echo "route add local $SERVER_ADDR dev $SERVER_LINK table $SERVER_TABLE"
        echo "rule add iif $CLIENT_LINK lookup $CLIENT_TABLE pref $CLIENT_TABLE"
        echo "rule add iif $SERVER_LINK lookup $SERVER_TABLE pref $SERVER_TABLE"
        echo "route add $SERVER_ADDR/32 dev $CLIENT_LINK"
        echo "route add $CLIENT_ADDR/32 dev $SERVER_LINK"
        # During a partition ARP is dropped too: a learned entry expiring then would delay the
        # first packets after the heal.
        echo "neigh replace $SERVER_ADDR lladdr $SERVER_MAC dev $CLIENT_LINK nud permanent"
        echo "neigh replace $CLIENT_ADDR lladdr $CLIENT_MAC dev $SERVER_LINK nud permanent"
    } >"$batch"
    ip -batch "$batch" || die "ip -batch (links, addresses, routing, neighbours; see the line it names)"
    # The source of an arriving packet is an address of this host: both ends must accept it.
    for scope in all default $CLIENT_LINK $SERVER_LINK; do
        echo 1 >"/proc/sys/net/ipv4/conf/$scope/accept_local" || die "sysctl $scope accept_local"
        echo 0 >"/proc/sys/net/ipv4/conf/$scope/rp_filter" || die "sysctl $scope rp_filter"
    done
    printf 'qdisc replace dev %s root netem\nqdisc replace dev %s root netem\n' "$CLIENT_LINK" "$SERVER_LINK" >"$batch"
    tc -batch "$batch" || die "tc -batch (a netem qdisc on each end)"
    # The addresses exist before the rxe devices: rxe fills its GID table from them.
    printf 'link add %s type rxe netdev %s\nlink add %s type rxe netdev %s\n' \
        "$CLIENT_RXE" "$CLIENT_LINK" "$SERVER_RXE" "$SERVER_LINK" >"$batch"
    rdma -b "$batch" || die "rdma -b (an rxe device on each end)"
    rm -f "$batch"
    await_active
    t=$(($(uptime_cs) - t0))
    say "made the rxe link rig ($CLIENT_RXE on $CLIENT_LINK $CLIENT_ADDR, $SERVER_RXE on $SERVER_LINK $SERVER_ADDR) in $((t / 100)).$((t / 10 % 10)) s of guest time"
}

[ "$(id -u)" = 0 ] || die "needs root (the lane's guest runs its command as root)"
if [ $# -eq 0 ]; then
    make_rig
    exit 0
fi
# With a command (the lane's test JVM): a rig that cannot be made fails only the tests that need
# it (RxeLinkRig runs this script again and names why), not the whole tier.
( make_rig ) || say "the rig was not made (exit $?): running the command without it"
exec "$@"
