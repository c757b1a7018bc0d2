package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Proves the facts {@link NetworkRig} depends on, with plain TCP sockets between the test JVM (root
 * namespace) and the peer's byte-counting listener (in the rig's namespace): the link carries
 * traffic; a partition drops it silently and the heal delivers what was sent meanwhile; random
 * loss, in either direction, is loss on the wire that the sender's TCP retransmits; a vanished
 * host sends no FIN or RST; closing the rig leaves no namespace, link or route of its own behind
 * but the blackhole; and leftovers of a killed run are swept.
 */
class NetworkRigTest {
    static final int BYTES = 1000;
    static final int BOTH_WAYS_WRITES = 60;

    private static Socket connect(NetworkRig rig, NetPeer.Handle peer) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(rig.rootAddress, 0));
        s.connect(peer.tcpAddress(), 5_000);
        s.setSoTimeout(1_500);
        return s;
    }

    private static boolean await(java.util.function.BooleanSupplier c, long millis) {
        long end = System.nanoTime() + millis * 1_000_000;
        while (System.nanoTime() < end) {
            if (c.getAsBoolean()) {
                return true;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return c.getAsBoolean();
    }

    @Test
    void partition_dropsTrafficSilently_heal_deliversWhatWasSentMeanwhile_closeLeavesNothing() throws IOException {
        NetworkRig rig = NetworkRig.create();
        try (rig; Socket s = connect(rig, rig.startPeer(4096))) {
            NetPeer.Handle peer = peerOf(rig);
            OutputStream out = s.getOutputStream();
            out.write(new byte[BYTES]);
            out.flush();
            assertTrue(await(() -> peer.tcp()[0] == BYTES, 5_000), "the link does not carry: " + peer.tcp()[0]);

            rig.partition();
            assertTrue(rig.rootLinkState().contains("NO-CARRIER"), "the root end still has carrier: " + rig.rootLinkState());
            out.write(new byte[BYTES]); // no error: the kernel queues and retransmits
            out.flush();
            await(() -> false, 500);
            assertEquals(BYTES, peer.tcp()[0], "bytes crossed a partitioned link");

            rig.heal();
            // TCP retransmits with backoff (200 ms, 400 ms, ...): the segment comes through within seconds.
            long t0 = System.nanoTime();
            assertTrue(await(() -> peer.tcp()[0] == 2 * BYTES, 8_000),
                    "what was sent during the partition did not arrive after the heal: " + peer.tcp()[0]);
            System.out.printf("FACT partition 500 ms: the bytes sent during it arrived %.0f ms after the heal%n",
                    (System.nanoTime() - t0) / 1e6);
        }
        assertFalse(rig.namespaceExists(), "namespace left behind: " + rig.namespace);
        assertFalse(NetworkRig.linkExists(rig.rootLink), "link left behind: " + rig.rootLink);
        assertTrue(NetworkRig.run(List.of("ip", "route", "get", rig.peerAddress.getHostAddress()), false)
                .contains("Invalid argument"), "the peer's address is routed somewhere after the rig closed: "
                + NetworkRig.run(List.of("ip", "route", "get", rig.peerAddress.getHostAddress()), false));
    }

    @Test
    void vanish_noFinOrResetReachesTheClient_theNamespaceIsGone_andTheRootEndHasNoCarrier() throws IOException {
        NetworkRig rig = NetworkRig.create();
        try (rig; Socket s = connect(rig, rig.startPeer(4096))) {
            NetPeer.Handle peer = peerOf(rig);
            s.getOutputStream().write(new byte[BYTES]);
            assertTrue(await(() -> peer.tcp()[0] == BYTES, 5_000), "the link does not carry");
            rig.vanish();
            assertFalse(peer.process().isAlive(), "the peer survived the vanish");
            assertFalse(rig.namespaceExists(), "namespace still listed after the vanish");
            assertTrue(rig.rootLinkState().contains("NO-CARRIER"), "the root end has carrier after the vanish: "
                    + rig.rootLinkState());
            InputStream in = s.getInputStream();
            // A FIN would read as -1 and a RST as a SocketException: a vanished host says nothing.
            assertThrows(SocketTimeoutException.class, in::read);
            s.getOutputStream().write(new byte[BYTES]); // still no error: dropped at the root end
        }
        assertFalse(NetworkRig.linkExists(rig.rootLink), "the vanished rig's link outlived its close: " + rig.rootLink);
    }

    /**
     * {@return the segments this rig's client sockets retransmitted so far, summed over every TCP
     * socket bound to the rig's root address (ss(8) {@code -ti}: {@code retrans:<now>/<total>},
     * tcp_info's total retransmissions)} Counted per socket, not for the root namespace: test
     * classes in another JVM may be retransmitting there at the same time.
     */
    private static long clientRetrans(NetworkRig rig) {
        String out = NetworkRig.run(List.of("ss", "-tin", "src", rig.rootAddress.getHostAddress()), true);
        long sum = 0;
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("retrans:\\d+/(\\d+)").matcher(out);
        while (m.find()) {
            sum += Long.parseLong(m.group(1));
        }
        return sum;
    }

    /** {@return the peer namespace's TCP RetransSegs: /proc/net/snmp read from inside it} */
    private static long peerRetransSegs(NetworkRig rig) {
        return retransSegs(NetworkRig.run(List.of("ip", "netns", "exec", rig.namespace, "cat", "/proc/net/snmp"), true)
                .lines().toList());
    }

    private static long retransSegs(List<String> lines) {
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith("Tcp:") && lines.get(i + 1).startsWith("Tcp:")) {
                List<String> names = List.of(lines.get(i).split("\\s+"));
                return Long.parseLong(lines.get(i + 1).split("\\s+")[names.indexOf("RetransSegs")]);
            }
        }
        throw new AssertionError("no Tcp lines in /proc/net/snmp");
    }

    @Test
    void loss_dropsWhatTheClientSendsOnTheWire_tcpRetransmits_andEveryByteArrives() throws IOException {
        NetworkRig rig = NetworkRig.create();
        try (rig; Socket s = connect(rig, rig.startPeer(4096))) {
            NetPeer.Handle peer = peerOf(rig);
            rig.loss(30);
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < 200; i++) {
                out.write(new byte[BYTES]);
                out.flush();
            }
            assertTrue(await(() -> peer.tcp()[0] == 200L * BYTES, 15_000), "not every byte arrived under loss: "
                    + peer.tcp()[0]);
            long drops = rig.lossDrops();
            long retrans = clientRetrans(rig);
            System.out.printf("FACT 30 %% loss on the peer's ingress: %d packets dropped, the client's socket"
                    + " retransmitted %d segments%n", drops, retrans);
            assertTrue(drops > 0, "the loss filter dropped nothing");
            assertTrue(retrans > 0, "no retransmission: the drops were not losses on the wire");
            rig.noLoss();
        }
    }

    /**
     * Loss both ways: the client sends {@link #BOTH_WAYS_WRITES} KB to the peer's counter and reads
     * as much from its source, each direction losing 20 %. Each filter drops on its own ingress,
     * each sender's stack retransmits (the client's sockets' counters, the
     * namespace's for the peer), and every byte arrives both ways.
     *
     * <p>Why 60 writes: about 42 full segments each way, so the chance that no data segment of a
     * direction is dropped (and its stack has nothing to retransmit) is 0.8^42, below 1e-4; more
     * bytes only add the exponential back-off chains of TCP's retransmission timer (tcp(7)
     * {@code tcp_retries2}), which made the case's time grow with the bytes sent. The timer's floor
     * is 50 ms here instead of 200 ({@link NetworkRig#retransmitFloor}), so that such a chain is
     * four times shorter than the minute the client's bytes are awaited; it stays above a delayed
     * acknowledgement's 40 ms, so that a timer that fires is a loss, not a late acknowledgement.
     */
    @Test
    void lossBothWays_dropsWhatEachSideSendsOnTheWire_bothStacksRetransmit_andEveryByteArrives() throws IOException {
        NetworkRig rig = NetworkRig.create();
        try (rig; Socket s = connect(rig, rig.startPeer(4096)); Socket src = new Socket()) {
            NetPeer.Handle peer = peerOf(rig);
            src.bind(new InetSocketAddress(rig.rootAddress, 0));
            src.connect(peer.sourceAddress(), 5_000);
            src.setSoTimeout(60_000);
            // At 20 % each way a segment or its acknowledgement is lost about a third of the time,
            // and a run of such losses backs the timer off exponentially (NetworkRig#retransmitFloor).
            rig.retransmitFloor(50);
            rig.loss(20, 20);
            long p0 = peerRetransSegs(rig);
            long n = (long) BOTH_WAYS_WRITES * BYTES;
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < BOTH_WAYS_WRITES; i++) {
                out.write(new byte[BYTES]);
                out.flush();
            }
            new java.io.DataOutputStream(src.getOutputStream()).writeLong(n);
            InputStream in = src.getInputStream();
            byte[] buf = new byte[8192];
            long got = 0;
            for (int k; (k = in.read(buf)) >= 0; ) {
                got += k;
            }
            assertEquals(n, got, "not every byte the peer sent arrived under loss");
            assertTrue(await(() -> peer.tcp()[0] == n, 60_000), "not every byte the client sent arrived under loss: "
                    + peer.tcp()[0]);
            long toPeer = rig.lossDropsToPeer();
            long toClient = rig.lossDropsToClient();
            long clientRetrans = clientRetrans(rig);
            long peerRetrans = peerRetransSegs(rig) - p0;
            System.out.printf("FACT 20 %% loss both ways: dropped %d packets to the peer and %d to the client; the"
                    + " client's sockets retransmitted %d segments, the peer's namespace %d%n", toPeer, toClient,
                    clientRetrans, peerRetrans);
            assertTrue(toPeer > 0, "the filter on the peer's ingress dropped nothing");
            assertTrue(toClient > 0, "the filter on the client's ingress dropped nothing");
            assertTrue(peerRetrans > 0, "the peer's stack retransmitted nothing: the drops on the client's ingress"
                    + " were not losses on the wire");
            assertTrue(clientRetrans > 0, "the client's stack retransmitted nothing");
            assertEquals(toPeer + toClient, rig.lossDrops(), "lossDrops is not the sum of both directions");

            rig.loss(0, 30); // one direction only: the other filter is gone
            long before = rig.lossDropsToPeer();
            out.write(new byte[BYTES]);
            out.flush();
            assertTrue(await(() -> peer.tcp()[0] == n + BYTES, 15_000), "bytes lost with the link's loss at 0 %");
            assertEquals(0, before, "loss(0, 30) kept a filter on the peer's ingress");
            rig.noLoss();
            assertEquals(0, rig.lossDrops(), "noLoss kept a filter");
        }
        assertFalse(NetworkRig.linkExists(NetworkRig.link(NetworkRig.TOKEN, rig.index, 'u')),
                "the root namespace's loss sink outlived the rig");
    }

    @Test
    void sweep_removesLeftoversOfADeadRun_andNothingOfALiveOne_norRoutesItDidNotMake() {
        String deadNs = NetworkRig.PREFIX + "-999999999-1";
        // "zzzzz" is pid 60,466,175: above any pid_max (2^22), so never alive.
        String deadToken = "zzzzz";
        String deadLink = NetworkRig.link(deadToken, 1, 'r');
        // This JVM's pair as a create leaves it for a moment: both ends in the root namespace.
        String midCreate = NetworkRig.link(NetworkRig.TOKEN, 1295, 'r');
        String deadRoute = "198.19.255.252/30";
        String foreignRoute = "198.19.255.248/30";
        try (NetworkRig live = NetworkRig.create()) {
            assertEquals(ProcessHandle.current().pid(), NetworkRig.ownerOfLink(live.rootLink), live.rootLink);
            assertTrue(live.rootLink.length() <= 15 && NetworkRig.link("2gosa", 999, 't').length() <= 15,
                    "link names must fit IFNAMSIZ: " + live.rootLink);
            NetworkRig.run(List.of("ip", "netns", "add", deadNs), true);
            NetworkRig.run(List.of("ip", "link", "add", deadLink, "type", "veth", "peer", "name",
                    NetworkRig.link(deadToken, 1, 'p')), true);
            NetworkRig.run(List.of("ip", "link", "add", midCreate, "type", "veth", "peer", "name",
                    NetworkRig.link(NetworkRig.TOKEN, 1295, 'p')), true);
            NetworkRig.run(List.of("ip", "route", "add", "blackhole", deadRoute, "metric", "999999999", "proto",
                    NetworkRig.ROUTE_PROTO), true);
            NetworkRig.run(List.of("ip", "route", "add", "blackhole", foreignRoute, "metric", "999999999"), true);
            NetworkRig.sweep();
            assertFalse(NetworkRig.run(List.of("ip", "netns", "list"), false).contains(deadNs), "dead run's namespace kept");
            assertFalse(NetworkRig.linkExists(deadLink), "dead run's link kept");
            String routes = NetworkRig.run(List.of("ip", "route", "show", "type", "blackhole"), false);
            assertFalse(routes.contains("198.19.255.252"), "dead run's blackhole kept: " + routes);
            assertTrue(routes.contains("198.19.255.248"), "a blackhole the rig did not make was swept: " + routes);
            assertTrue(live.namespaceExists(), "a live rig's namespace was swept");
            assertTrue(NetworkRig.linkExists(live.rootLink), "a live rig's link was swept");
            assertTrue(NetworkRig.linkExists(midCreate), "a live JVM's pair was swept in the middle of its creation");
        } finally {
            NetworkRig.run(List.of("ip", "netns", "del", deadNs), false);
            NetworkRig.run(List.of("ip", "link", "del", deadLink), false);
            NetworkRig.run(List.of("ip", "link", "del", midCreate), false);
            NetworkRig.run(List.of("ip", "route", "del", "blackhole", deadRoute, "metric", "999999999", "proto",
                    NetworkRig.ROUTE_PROTO), false);
            NetworkRig.run(List.of("ip", "route", "del", "blackhole", foreignRoute, "metric", "999999999"), false);
        }
    }

    private static NetPeer.Handle peerOf(NetworkRig rig) {
        return rig.peers().getFirst();
    }
}
