#!/bin/sh
set -x
for m in veth sch_netem; do modprobe $m || echo "modprobe $m failed"; done
A=198.18.0.1; B=198.18.0.2
rping_test() {
  timeout 20 rping -s -a $B -C 3 -v > /tmp/srv.log 2>&1 &
  sp=$!
  sleep 1
  t0=$(date +%s.%N)
  timeout 15 rping -c -a $B -I $A -C 3 -v; echo "client rc=$? after $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null)"
  wait $sp; echo "server rc=$?"; cat /tmp/srv.log
}
ip link add veth-a type veth peer name veth-b
for d in all default; do sysctl -w net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1; done
ip addr add $A/32 dev veth-a; ip addr add $B/32 dev veth-b
ip link set veth-a up; ip link set veth-b up
ip route del local $A dev veth-a table local
ip route del local $B dev veth-b table local
ip route add local $A dev veth-a table 10
ip route add local $B dev veth-b table 20
ip rule add iif veth-a lookup 10 pref 100
ip rule add iif veth-b lookup 20 pref 101
ip route add $B/32 dev veth-a
ip route add $A/32 dev veth-b
rdma link add rxe-a type rxe netdev veth-a
rdma link add rxe-b type rxe netdev veth-b
sleep 1
rdma link
for d in rxe-a rxe-b; do cat /sys/class/infiniband/$d/ports/1/gids/1 /sys/class/infiniband/$d/ports/1/gid_attrs/ndevs/1; done
ip route; ip rule
ip route get $B from $A oif veth-a
ip route get $A from $B oif veth-b
echo "=== POLICY rping"
rping_test
ip -s link show veth-a; ip -s link show veth-b; ip neigh; grep Udp: /proc/net/snmp; rdma statistic show 2>&1 | head
echo "=== POLICY rping with 100% loss on veth-a"
tc qdisc add dev veth-a root netem loss 100%
rping_test
tc -s qdisc show dev veth-a
tc qdisc change dev veth-a root netem loss 20%
echo "=== POLICY rping with 20% loss"
rping_test
tc -s qdisc show dev veth-a
tc qdisc change dev veth-a root netem delay 50ms
echo "=== POLICY rping with 50 ms delay"
rping_test
tc -s qdisc show dev veth-a
