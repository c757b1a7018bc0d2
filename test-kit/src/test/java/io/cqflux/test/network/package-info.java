/**
 * Network faults on fabric/tcp: a rig of network namespaces and veth links that the tests own
 * ({@link io.cqflux.test.network.NetworkRig}), a peer JVM inside one of them
 * ({@link io.cqflux.test.network.NetPeer}), the suites that partition, heal and vanish it
 * under durable writes and a {@link io.cqflux.reactor.PeerPool}, and the packet-loss benchmark
 * ({@link io.cqflux.test.network.LossBench}, {@code ./cqflux bench loss}). They need root
 * (ip-netns(8)).
 */
package io.cqflux.test.network;
