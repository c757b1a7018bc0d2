/**
 * Network faults. On fabric/tcp, on the host: a rig of network namespaces and veth links that the
 * tests own ({@link io.cqflux.test.network.NetworkRig}), a peer JVM inside one of them
 * ({@link io.cqflux.test.network.NetPeer}), the suites that partition, heal and vanish it under
 * durable writes and a {@link io.cqflux.reactor.PeerPool}, and the packet-loss benchmark
 * ({@link io.cqflux.test.network.LossBench}, {@code ./cqflux bench loss}); they need root
 * (ip-netns(8)). On rxe, in the Soft-RoCE lane's guest: two rxe endpoints joined by a veth pair
 * that netem shapes ({@link io.cqflux.test.network.RxeLinkRig}), the partition, loss and
 * reordering suite over it as a contract ({@link io.cqflux.test.network.RxePartitionContract}) that
 * rpma (tag {@code rpma}) and libfabric's verbs provider (tag {@code fabric-verbs}) run in the lane's
 * default run (the lane makes the rig before its JVM starts: the verbs provider lists the devices
 * once per process, see {@link io.cqflux.test.network.RxeLinkRig}), and rpma's
 * keep-alive, {@code PeerPool}, close-under-load and partition-cycle leak checks.
 */
package io.cqflux.test.network;
