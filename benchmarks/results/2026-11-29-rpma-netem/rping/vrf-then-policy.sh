#!/bin/sh
# experiment: VRF then policy routing, rxe on veth pair, rping across, netem loss
set -x
uname -r
for m in vrf veth sch_netem; do modprobe $m || echo "modprobe $m failed"; done
sysctl -w net.ipv4.udp_l3mdev_accept=1 net.ipv4.tcp_l3mdev_accept=1
A=198.18.0.1; B=198.18.0.2
ip link add veth-a type veth peer name veth-b
ip link add vrf-a type vrf table 10
ip link add vrf-b type vrf table 20
ip link set vrf-a up; ip link set vrf-b up
ip link set veth-a master vrf-a; ip link set veth-b master vrf-b
ip addr add $A/24 dev veth-a; ip addr add $B/24 dev veth-b
ip link set veth-a up; ip link set veth-b up
rdma link add rxe-a type rxe netdev veth-a
rdma link add rxe-b type rxe netdev veth-b
sleep 1
rdma link
ip route show table 10; ip route show table 20; ip rule
ip route get $B from $A oif veth-a
ping -c 2 -W 1 -I vrf-a $B
rping_test() {
  timeout 20 rping -s -a $B -C 3 -v > /tmp/srv.log 2>&1 &
  sp=$!
  sleep 1
  timeout 15 rping -c -a $B -I $A -C 3 -v; echo "client rc=$?"
  wait $sp; echo "server rc=$?"; cat /tmp/srv.log
}
echo "=== VRF rping"
rping_test
ip -s link show veth-a
echo "=== VRF rping with 100% loss on veth-a"
tc qdisc add dev veth-a root netem loss 100%
rping_test
tc -s qdisc show dev veth-a
tc qdisc del dev veth-a root
rdma link del rxe-a; rdma link del rxe-b
ip link del veth-a; ip link del vrf-a; ip link del vrf-b
echo "=== POLICY"
ip link add veth-a type veth peer name veth-b
for d in all default; do sysctl -w net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1; done
ip addr add $A/32 dev veth-a; ip addr add $B/32 dev veth-b
for d in veth-a veth-b; do sysctl -w net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1; done
ip link set veth-a up; ip link set veth-b up
ip route del local $A dev veth-a table local
ip route del local $B dev veth-b table local
ip route add local $A dev veth-a table 10
ip route add local $B dev veth-b table 20
ip rule add iif veth-a lookup 10 pref 100
ip rule add iif veth-b lookup 20 pref 101
ip route add $B/32 dev veth-a src $A
ip route add $A/32 dev veth-b src $B
rdma link add rxe-a type rxe netdev veth-a
rdma link add rxe-b type rxe netdev veth-b
sleep 1
ip route show table local; ip route; ip rule
ip route get $B from $A oif veth-a
ping -c 2 -W 1 -I veth-a $B
echo "=== POLICY rping"
rping_test
ip -s link show veth-a
echo "=== POLICY rping with 100% loss on veth-a"
tc qdisc add dev veth-a root netem loss 100%
rping_test
tc -s qdisc show dev veth-a
tc qdisc change dev veth-a root netem loss 20%
echo "=== POLICY rping with 20% loss"
rping_test
tc -s qdisc show dev veth-a
