package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.testing.TransportFixture;
import io.cqflux.core.testing.TransportPump;
import io.cqflux.transport.fabric.ffm.fabric_h;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Completion queues shared by groups of a loop's connections (CompletionGroup,
 * TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP) on libfabric's tcp provider over 127.0.0.1:
 * every entry, error entries and a peer's write-with-immediate included, reaches its own
 * connection and no other; a closed member's late entries reach no one; the last member closes
 * the group's queue. Driven without a loop: the pump dispatches each group as the loop would.
 */
class CompletionGroupTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    /** Small groups, so that a handful of connections fill several. */
    private static final int K = 4;
    /** Six per side: a full group and a second one with two. */
    private static final int N = 6;

    @Override
    protected Transport openTransport() {
        return FabricTransport.open("tcp", LOOPBACK, K);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    /** Six connected pairs, the clients on one loop and the accepted ends on another. */
    private record Pairs(List<TransportPump.Side> clients, List<TransportPump.Side> servers) {
        FabricConnection client(int i) {
            return (FabricConnection) clients.get(i).connection();
        }

        FabricConnection server(int i) {
            return (FabricConnection) servers.get(i).connection();
        }
    }

    private Pairs connectMany(int n, Object clientLoop, Object serverLoop) {
        return connectMany(closeLater(server.listen(listenAddress(), config())), n, clientLoop, serverLoop);
    }

    private Pairs connectMany(Listener l, int n, Object clientLoop, Object serverLoop) {
        return connectMany(l, n, clientLoop, serverLoop, config());
    }

    private Pairs connectMany(Listener l, int n, Object clientLoop, Object serverLoop, ConnectionConfig cfg) {
        Deque<ConnectionRequest> reqs = pump.add(l);
        List<TransportPump.Side> clients = new ArrayList<>();
        List<TransportPump.Side> servers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte first = (byte) i;
            // The test's own hello: a byte naming the connection, then the connection's parameters.
            Connection c = closeLater(((FabricTransport) client).connectWithHello(l.address(), cfg,
                    hs -> prefixed(first, hs), clientLoop));
            clients.add(pump.add("client " + i, c));
            pump.until("request " + i, DEADLINE, () -> !reqs.isEmpty());
            ConnectionRequest r = reqs.poll();
            byte[] hello = r.privateData();
            assertEquals(i, hello[0], "requests in connect order");
            Connection s = closeLater(r.acceptWithHello(hs -> hs, serverLoop));
            s.applyPeerParameters(Arrays.copyOfRange(hello, 1, 1 + GroupRoster.PARAMETERS_LENGTH));
            servers.add(pump.add("server " + i, s));
        }
        pump.until("all established", DEADLINE, () -> Stream.concat(clients.stream(), servers.stream())
                .allMatch(s -> s.events.contains(ConnectionEvent.ESTABLISHED)));
        for (TransportPump.Side c : clients) {
            // What the reactive layer does on ESTABLISHED, before anything is posted (PeerHello).
            c.connection().applyPeerParameters(Arrays.copyOf(c.connection().peerPrivateData(),
                    GroupRoster.PARAMETERS_LENGTH));
        }
        return new Pairs(clients, servers);
    }

    private static byte[] prefixed(byte first, byte[] rest) {
        byte[] b = new byte[1 + rest.length];
        b[0] = first;
        System.arraycopy(rest, 0, b, 1, rest.length);
        return b;
    }

    /** A connect whose hello is its handshake alone: one that may share its loop's queue. */
    private FabricConnection connectWithHello(InetSocketAddress to, Object loop) {
        return closeLater((FabricConnection) ((FabricTransport) client).connectWithHello(to, config(), hs -> hs, loop));
    }

    /** Context of connection {@code i}'s {@code j}-th operation: the caller's bits only, never the transport's. */
    private static long ctx(int i, int j) {
        return ((long) (i + 1) << 24) | (j + 1);
    }

    @Test
    void groupsOfK_fillUp_andEveryCompletionReachesItsOwnConnectionOnly() {
        Object clientLoop = new Object();
        Object serverLoop = new Object();
        Pairs p = connectMany(N, clientLoop, serverLoop);
        FabricTransport ct = (FabricTransport) client;
        assertEquals(2, ct.loopQueues().completionGroups(), "six connections in groups of four");
        CompletionGroup first = p.client(0).groupMember().group();
        for (int i = 0; i < N; i++) {
            assertSame(i < K ? first : p.client(K).groupMember().group(), p.client(i).groupMember().group(),
                    "client " + i);
            assertEquals(1, p.client(i).completionQueues().size());
        }
        assertNotSame(first, p.client(K).groupMember().group());
        java.util.Set<Integer> tags = new java.util.HashSet<>();
        for (int i = 0; i < N; i++) {
            // Each end drew its own tag, and its parameters (which its hello carried) name it.
            for (FabricConnection c : List.of(p.client(i), p.server(i))) {
                int tag = c.groupMember().tag;
                assertTrue(tag != 0, c + " is tagged");
                assertTrue(tags.add(tag), c + "'s tag 0x" + Integer.toHexString(tag) + " was drawn twice");
                assertArrayEquals(GroupRoster.parameters(tag), c.parameters(), c + "'s parameters");
            }
        }

        LocalRegion target = region(server, 4096L * N, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        LocalRegion src = region(client, 4096L * N, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        for (int i = 0; i < N; i++) {
            src.segment().set(ValueLayout.JAVA_LONG, 4096L * i, 7000L + i);
        }
        // Every client writes its own page, writes with an immediate naming itself, and reads back.
        for (int i = 0; i < N; i++) {
            FabricConnection c = p.client(i);
            long at = 4096L * i;
            int ii = i;
            post("write " + i, () -> c.write(remote, at, src, at, 8, ctx(ii, 0), true));
            post("write-with-immediate " + i, () -> c.writeWithImmediate(remote, at + 8, src, at, 8, 0x100 + ii,
                    ctx(ii, 1), true));
            post("read " + i, () -> c.read(src, at + 16, remote, at, 8, ctx(ii, 2), true));
        }
        for (int i = 0; i < N; i++) {
            TransportPump.Side s = p.clients.get(i);
            for (int j = 0; j < 3; j++) {
                CompletionRecord r = await(s, ctx(i, j));
                assertTrue(r.isSuccess(), r::toString);
            }
            TransportPump.Side t = p.servers.get(i);
            int ii = i;
            pump.until("server " + i + "'s notification", DEADLINE, () -> !t.completions.isEmpty());
            CompletionRecord n = t.completions.remove(0);
            assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, n.opcode(), n::toString);
            assertEquals(0x100 + ii, n.immediate(), "server " + i + " got another connection's immediate");
            assertEquals(0, n.context(), "the sink sees no transport bits");
            assertEquals(7000L + i, src.segment().get(ValueLayout.JAVA_LONG, 4096L * i + 16), "read-back " + i);
        }
        // The other way: each accepted end writes with an immediate to its client (the client's tag).
        LocalRegion back = region(client, 4096, RegionAccess.WRITE_DST);
        LocalRegion srvSrc = region(server, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion backRemote = closeLater(server.remoteRegion(back.descriptor()));
        for (int i = 0; i < N; i++) {
            FabricConnection s = p.server(i);
            int ii = i;
            post("reverse " + i, () -> s.writeWithImmediate(backRemote, 8L * ii, srvSrc, 0, 8, 0x200 + ii,
                    ctx(ii, 3), true));
        }
        for (int i = 0; i < N; i++) {
            await(p.servers.get(i), ctx(i, 3));
            TransportPump.Side c = p.clients.get(i);
            pump.until("client " + i + "'s notification", DEADLINE, () -> !c.completions.isEmpty());
            assertEquals(0x200 + i, c.completions.remove(0).immediate(), "client " + i);
        }
        pump.drainFor(java.time.Duration.ofMillis(50));
        for (TransportPump.Side s : Stream.concat(p.clients.stream(), p.servers.stream()).toList()) {
            assertEquals(List.of(), s.completions, s + " got completions of another connection");
        }
        assertEquals(0, first.dropped(), "entries that found no member");
    }

    @Test
    void aGroupsRing_isItsMembersSum() {
        assertEquals(8192, CompletionGroup.ringEntries(32, 256), "32 members of the default 256");
        assertEquals(256, CompletionGroup.ringEntries(1, 256), "a lone member");
        assertEquals(4 * 1152, CompletionGroup.ringEntries(4, 1152), "4 members of 1,152");
        assertThrows(ArithmeticException.class, () -> CompletionGroup.ringEntries(1 << 16, 1 << 16), "past an int");
    }

    /**
     * The ring holds every member's credits (CompletionGroup's design comment): two members with
     * all their signaled writes in flight at once get every completion, each once, on their own
     * connection.
     */
    @Test
    void everyMembersCreditsInFlight_eachCompletionReachesItsConnectionOnce() {
        ConnectionConfig cfg = ConnectionConfig.DEFAULT.withSendQueueSize(1024);
        int perMember = cfg.completionQueueSize() + cfg.receiveCompletionQueueSize();
        int writes = cfg.sendQueueSize();
        assertTrue(2 * writes <= CompletionGroup.ringEntries(K, perMember), "the ring holds both members' writes");
        Pairs p = connectMany(closeLater(server.listen(listenAddress(), cfg)), 2, new Object(), new Object(), cfg);
        assertSame(p.client(0).groupMember().group(), p.client(1).groupMember().group(), "one group");
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        for (int j = 0; j < writes; j++) {
            for (int i = 0; i < 2; i++) {
                FabricConnection c = p.client(i);
                int ii = i;
                int jj = j;
                post("write " + i + "." + j, () -> c.write(remote, 8L * ii, src, 0, 8, ctx(ii, jj), true));
            }
        }
        for (int i = 0; i < 2; i++) {
            TransportPump.Side s = p.clients.get(i);
            pump.until("client " + i + "'s " + writes + " completions", DEADLINE, () -> s.completions.size() >= writes);
            pump.drainFor(java.time.Duration.ofMillis(20));
            java.util.Set<Long> seen = new java.util.HashSet<>();
            for (CompletionRecord r : s.completions) {
                assertTrue(r.isSuccess(), r::toString);
                assertTrue(seen.add(r.context()), "client " + i + " got 0x" + Long.toHexString(r.context()) + " twice");
                assertEquals(i, (int) (r.context() >>> 24) - 1, "client " + i + " got another connection's completion");
            }
            assertEquals(writes, seen.size(), "client " + i + "'s completions");
        }
        assertEquals(0, p.client(0).groupMember().group().dropped(), "entries that found no member");
    }

    @Test
    void aContextWithTheTransportsBits_isRefusedNamingItAndTheMask() {
        Pairs p = connectMany(1, new Object(), new Object());
        FabricConnection c = p.client(0);
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        long bad = 1L << Connection.TRANSPORT_CONTEXT_SHIFT | 5;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.write(remote, 0, src, 0, 8, bad, true));
        assertTrue(e.getMessage().contains(Long.toHexString(bad))
                && e.getMessage().contains(Long.toHexString(Connection.TRANSPORT_CONTEXT_MASK)), e.getMessage());
        post("a write with the caller's bits only", () -> c.write(remote, 0, src, 0, 8, ctx(0, 0), true));
        assertTrue(await(p.clients.get(0), ctx(0, 0)).isSuccess(), "the connection goes on");
    }

    @Test
    void theSleepQuestion_isFiTrywaitOnTheGroupsQueue_andPostsAndRoutedEntriesTellTheLoop() {
        Pairs p = connectMany(2, new Object(), new Object());
        FabricConnection c = p.client(0);
        CompletionGroup g = c.groupMember().group();
        assertSame(g, p.client(1).groupMember().group());
        // The loop's part for the client group is played here; the pump serves the server's side.
        pump.remove(p.clients.get(0));
        pump.remove(p.clients.get(1));
        CompletionGroup.Member m = c.groupMember();
        assertSame(g, m.sharedBy(), "the loop registers the group, not the member");
        int[] groupTouches = {0};
        int[] memberTouches = {0};
        assertTrue(g.watchTouches(() -> groupTouches[0]++), "tcp 1.17: a yes of fi_trywait stands until touched");
        assertTrue(m.watchTouches(() -> memberTouches[0]++));
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!g.prepareToSleep()) {
            g.dispatch();
            pump.pollOnce();
            assertTrue(System.nanoTime() < end, "the group's queue never said it may sleep");
        }
        int calls = g.trywaitAnswer().calls();
        assertTrue(calls > 0, "fi_trywait was asked of the group's queue");
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        int before = groupTouches[0];
        post("write", () -> c.write(remote, 0, src, 0, 8, ctx(0, 0), true));
        assertTrue(groupTouches[0] > before, "a member's post clears the group's standing answer and tells the loop");
        List<CompletionRecord> got = new ArrayList<>();
        while (got.isEmpty()) {
            pump.pollOnce();
            g.dispatch();
            m.poll(null, 16, r -> got.add(r.snapshot()));
            assertTrue(System.nanoTime() < end, "no completion for the member");
        }
        assertTrue(memberTouches[0] > 0, "a routed entry tells the loop to run the member");
        assertEquals(List.of(ctx(0, 0)), got.stream().map(CompletionRecord::context).toList());
        g.prepareToSleep();
        assertTrue(g.trywaitAnswer().calls() > calls, "after a read the group's queue is asked fi_trywait again");
        g.watchTouches(null);
        m.watchTouches(null);
        pump.add("client 0", c);
        pump.add("client 1", p.client(1));
    }

    /**
     * The tag is the receiver's to choose and the sender's to apply: a peer without groups of its
     * own that applies the grouped side's parameters reaches its connection; one that applies none,
     * or a tag no member holds, sends a notification the grouped side cannot route, which it
     * drops, counts and warns of rather than guess.
     */
    @Test
    void aPeerWithoutGroups_reachesItsGroupedConnectionByTheTagItWasTold_andAnUntaggedOrForgedOneIsDropped() {
        FabricTransport plain = closeLater(FabricTransport.open("tcp", LOOPBACK, 1));
        Listener l = closeLater(server.listen(listenAddress(), config()));
        Deque<ConnectionRequest> reqs = pump.add(l);
        Object serverLoop = new Object();
        List<TransportPump.Side> clients = new ArrayList<>();
        List<TransportPump.Side> servers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            clients.add(pump.add("plain client " + i, closeLater(plain.connectWithHello(l.address(), config(),
                    hs -> hs, new Object()))));
            pump.until("request " + i, DEADLINE, () -> !reqs.isEmpty());
            servers.add(pump.add("server " + i, closeLater(reqs.poll().acceptWithHello(hs -> hs, serverLoop))));
        }
        pump.until("established", DEADLINE, () -> Stream.concat(clients.stream(), servers.stream())
                .allMatch(s -> s.events.contains(ConnectionEvent.ESTABLISHED)));
        assertNull(((FabricConnection) clients.get(0).connection()).groupMember(), "the plain side has no groups");
        CompletionGroup g = ((FabricConnection) servers.get(0).connection()).groupMember().group();
        assertSame(g, ((FabricConnection) servers.get(1).connection()).groupMember().group());
        assertSame(g, ((FabricConnection) servers.get(2).connection()).groupMember().group());
        // Client 0 applies its server's parameters; client 1 none; client 2 a tag no member holds.
        Connection told = clients.get(0).connection();
        told.applyPeerParameters(Arrays.copyOf(told.peerPrivateData(), GroupRoster.PARAMETERS_LENGTH));
        int forged = ((FabricConnection) servers.get(0).connection()).groupMember().tag ^ 0x5A5A_0001;
        clients.get(2).connection().applyPeerParameters(GroupRoster.parameters(forged));
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = closeLater(plain.register(arena.allocate(4096, 4096), EnumSet.of(RegionAccess.WRITE_SRC)));
        RemoteRegion remote = closeLater(plain.remoteRegion(target.descriptor()));
        post("tagged write-with-immediate", () -> told.writeWithImmediate(remote, 0, src, 0, 8, 0x76, 1, true));
        assertTrue(await(clients.get(0), 1).isSuccess());
        pump.until("server 0's notification", DEADLINE, () -> !servers.get(0).completions.isEmpty());
        assertEquals(0x76, servers.get(0).completions.remove(0).immediate());
        for (int i : new int[] {1, 2}) {
            Connection c = clients.get(i).connection();
            long before = g.dropped();
            post("write-with-immediate " + i, () -> c.writeWithImmediate(remote, 0, src, 0, 8, 0x77, 1, true));
            assertTrue(await(clients.get(i), 1).isSuccess());
            pump.until("the group's drop", DEADLINE, () -> g.dropped() == before + 1);
            assertEquals(i, ((FabricTransport) server).droppedNotifications(), "the transport counts the lost one");
        }
        assertTrue(g.warnedAbout(0), "an untagged notification is warned of");
        assertTrue(g.warnedAbout(forged), "a forged tag is warned of");
        pump.drainFor(java.time.Duration.ofMillis(50));
        for (TransportPump.Side s : servers) {
            assertEquals(List.of(), s.completions, "a dropped notification reached " + s);
        }
    }

    /** Raw private data carries no parameters: such a connection's peer never learns a tag, so its queue is its own. */
    @Test
    void aConnectionWithRawPrivateData_keepsItsOwnQueue_andItsParametersSaySo() {
        FabricTransport ct = (FabricTransport) client;
        FabricConnection raw = closeLater((FabricConnection) ct.connect(nowhere(), config(), new byte[] {1, 2},
                new Object()));
        assertNull(raw.groupMember(), "raw private data: a queue of its own");
        assertArrayEquals(GroupRoster.parameters(0), raw.parameters(), "tag 0: send it none");
        assertEquals(0, ct.loopQueues().completionGroups());
        assertArrayEquals(GroupRoster.parameters(0), ct.connectionParametersTemplate(),
                "the template is as long as any connection's parameters");
        assertArrayEquals(new byte[0], ct.handshake(), "the transport's handshake stays empty (what an older peer reads)");
    }

    @Test
    void aMalformedPeerParameters_areRefusedNamingTheirLengthAndWhatWasExpected_andTheHandshakeStaysEmpty() {
        FabricConnection c = connectWithHello(nowhere(), new Object());
        for (byte[] bad : new byte[][] {{1}, {1, 0, 0, 0, 0}, {0, 0, 1}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.applyPeerParameters(bad));
            assertTrue(e.getMessage().contains(bad.length + " bytes") && e.getMessage().contains("expected 0 bytes, or 4"),
                    e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> c.applyPeerParameters(null));
        c.applyPeerParameters(new byte[0]);
        c.applyPeerParameters(GroupRoster.parameters(0));
        c.applyPeerParameters(GroupRoster.parameters(-7));
        // The handshake is the transport's, as an older cqflux sends and reads it: none on fabric.
        assertThrows(IllegalArgumentException.class, () -> c.applyPeerHandshake(GroupRoster.parameters(5)));
        c.applyPeerHandshake(new byte[0]);
    }

    @Test
    void anErrorCompletion_signaledOrNot_reachesItsConnectionOnly_andTheNeighboursKeepWorking() {
        Object clientLoop = new Object();
        Pairs p = connectMany(3, clientLoop, new Object());
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        // A key the server no longer has: tcp's target drops the connection; the initiator's
        // operations fail with error entries (fi_cq_readerr), the unsignaled one included.
        LocalRegion gone = server.register(arena.allocate(4096, 4096), EnumSet.of(RegionAccess.WRITE_DST));
        byte[] stale = gone.descriptor();
        gone.close();
        RemoteRegion bad = closeLater(client.remoteRegion(stale));
        FabricConnection victim = p.client(1);
        post("unsignaled bad write", () -> victim.write(bad, 0, src, 0, 8, ctx(1, 0), false));
        post("signaled bad write", () -> victim.write(bad, 0, src, 0, 8, ctx(1, 1), true));
        CompletionRecord failed = await(p.clients.get(1), ctx(1, 1));
        assertTrue(!failed.isSuccess(), failed::toString);
        pump.until("client 1 ends", DEADLINE, () -> p.clients.get(1).events.stream().anyMatch(
                e -> e == ConnectionEvent.CLOSED || e == ConnectionEvent.LOST));
        // Its neighbours in the group go on, and none of them saw its entries.
        for (int i : new int[] {0, 2}) {
            FabricConnection c = p.client(i);
            int ii = i;
            post("write " + i, () -> c.write(remote, 8L * ii, src, 0, 8, ctx(ii, 5), true));
            assertTrue(await(p.clients.get(i), ctx(i, 5)).isSuccess());
        }
        pump.drainFor(java.time.Duration.ofMillis(50));
        for (int i : new int[] {0, 2}) {
            TransportPump.Side s = p.clients.get(i);
            assertEquals(List.of(), s.completions, "client " + i + " got another connection's entries");
            assertTrue(s.events.stream().noneMatch(e -> e == ConnectionEvent.CLOSED || e == ConnectionEvent.LOST),
                    "client " + i + " " + s.events);
        }
        // The unsignaled write reports only its failure (fi_cq_readerr, with its own context):
        // it too reaches client 1, with the transport's bits cleared, and nothing else does.
        CompletionRecord unsignaled = await(p.clients.get(1), ctx(1, 0));
        assertTrue(!unsignaled.isSuccess(), unsignaled::toString);
        pump.drainFor(java.time.Duration.ofMillis(50));
        assertEquals(List.of(), p.clients.get(1).completions, "client 1 got entries that are not its own");
    }

    @Test
    void aClosedMembersLateEntries_reachNoOne_itsSlotWaitsForARead_andTheLastMemberClosesTheQueue() throws IOException {
        Listener l = closeLater(server.listen(listenAddress(), config()));
        nowhere(); // its first use opens what the JDK keeps for sockets: before the baseline
        long before = openFds();
        Object clientLoop = new Object();
        Pairs p = connectMany(l, K, clientLoop, new Object());
        FabricTransport ct = (FabricTransport) client;
        CompletionGroup g = p.client(0).groupMember().group();
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        RemoteRegion remote = closeLater(client.remoteRegion(target.descriptor()));
        // Client 2 posts and is closed before anyone reads its completions.
        FabricConnection leaving = p.client(2);
        int slot = leaving.groupMember().slot;
        for (int j = 0; j < 4; j++) {
            int jj = j;
            post("write " + j, () -> leaving.write(remote, 0, src, 0, 8, ctx(2, jj), true));
        }
        pump.remove(p.clients.get(2));
        pump.remove(p.clients.get(0)); // the group is not read until the test says so
        pump.remove(p.clients.get(1));
        pump.remove(p.clients.get(3));
        int[] touches = {0};
        g.watchTouches(() -> touches[0]++);
        leaving.close();
        assertEquals(K - 1, g.members());
        assertTrue(touches[0] > 0, "the leave tells the loop, which may sleep on a standing answer");
        assertTrue(g.readWanted(), "the retiring slot asks for a read");
        assertFalse(g.prepareToSleep(), "no sleep while a slot waits for a read to empty");
        assertFalse(g.hasRoom(), "the slot retires until the read");
        g.dispatch(); // what the loop does when the group says it may not sleep
        g.watchTouches(null);
        assertFalse(g.readWanted());
        assertTrue(g.hasRoom(), "the read to empty frees the slot, though every other member is idle");
        assertEquals(4, g.dropped(), "the closed member's four late completions were dropped");
        FabricConnection fresh = connectWithHello(nowhere(), clientLoop);
        assertSame(g, fresh.groupMember().group(), "the freed slot serves the next connection of the loop");
        assertEquals(slot, fresh.groupMember().slot);
        fresh.close();
        for (int i : new int[] {0, 1, 3}) {
            p.clients.set(i, pump.add("client " + i, p.client(i)));
        }
        // The others keep working; the closed one's entries went to no one.
        for (int i : new int[] {0, 1, 3}) {
            FabricConnection c = p.client(i);
            int ii = i;
            post("write " + i, () -> c.write(remote, 8, src, 0, 8, ctx(ii, 9), true));
            assertTrue(await(p.clients.get(i), ctx(i, 9)).isSuccess());
        }
        pump.drainFor(java.time.Duration.ofMillis(50));
        for (int i : new int[] {0, 1, 3}) {
            assertEquals(List.of(), p.clients.get(i).completions, "client " + i);
        }
        assertTrue(g.hasRoom(), "the retired slot is free after a read to empty");
        FabricConnection again = connectWithHello(nowhere(), clientLoop);
        assertSame(g, again.groupMember().group());
        assertEquals(slot, again.groupMember().slot, "the freed slot serves the next member");
        again.close();
        for (int i = 0; i < K; i++) {
            pump.remove(p.clients.get(i));
            pump.remove(p.servers.get(i));
            p.client(i).close();
            p.server(i).close();
        }
        assertEquals(0, ct.loopQueues().completionGroups(), "the client loop's group after its last endpoint");
        assertEquals(0, ((FabricTransport) server).loopQueues().completionGroups());
        assertEquals(before, openFds(), "fds back to the baseline");
    }

    /**
     * Each member draws its tag: nonzero, never one another member of the group holds; a left
     * member's tag retires with its slot, its late notifications dropped quietly (not lost), and
     * once the read to empty settled it, a notification carrying it is one no member holds.
     */
    @Test
    void tagsAreDrawnPerMember_neverHeldTwice_andALeftMembersTagRetiresLikeItsSlot() {
        FabricTransport st = (FabricTransport) server;
        LoopQueues q = st.loopQueues();
        Object loop = new Object();
        List<CompletionGroup.Member> ms = new ArrayList<>();
        for (int i = 0; i < 2 * K; i++) {
            ms.add(q.join(loop, true, 64, "m" + i));
        }
        CompletionGroup g = ms.get(0).group();
        java.util.Set<Integer> tags = new java.util.HashSet<>();
        for (CompletionGroup.Member m : ms) {
            assertTrue(m.tag != 0, m + " is tagged");
            assertTrue(tags.add(m.tag), m + "'s tag drawn twice");
        }
        CompletionGroup.Member a = ms.get(0);
        long lost = st.droppedNotifications();
        long dropped = g.dropped();
        a.close(); // the owner's CompletionQueue.close(): the slot stays until the connection leaves
        assertEquals(K, g.members(), "CompletionQueue.close() leaves the member in its group");
        a.leave();
        g.routeNotificationForTest(a.tag, null);
        assertEquals(lost, st.droppedNotifications(), "a left member's late notification is not lost");
        assertEquals(dropped + 1, g.dropped());
        assertFalse(g.warnedAbout(a.tag), "nor warned of");
        assertFalse(g.hasRoom(), "its slot retires until a read to empty");
        g.dispatch();
        assertTrue(g.hasRoom(), "the read to empty frees it");
        g.routeNotificationForTest(a.tag, null);
        assertEquals(lost + 1, st.droppedNotifications(), "after the read its tag is one no member holds: lost");
        assertTrue(g.warnedAbout(a.tag));
        for (CompletionGroup.Member m : ms) {
            m.leave();
            q.release(m.group());
        }
        assertEquals(0, q.completionGroups());
    }

    /** {@return a loopback port where nothing listens: a connect there is refused, its endpoint stays} */
    private static InetSocketAddress nowhere() {
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            return new InetSocketAddress(LOOPBACK, free.getLocalPort());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void fdsPerConnection_withGroups_areItsSocketAndAShareOfTheQueue() throws IOException {
        InetSocketAddress nowhere = nowhere();
        Object loop = new Object();
        FabricTransport ct = (FabricTransport) client;
        long before = openFds();
        List<FabricConnection> cs = new ArrayList<>();
        for (int i = 0; i < 2 * K; i++) {
            cs.add(connectWithHello(nowhere, loop));
        }
        long added = openFds() - before;
        // Per connection its socket; per group its CQ's wait object (epoll fd + socketpair); the
        // loop's EQ once (3). Without groups it would be 2K * 4 + 3.
        assertEquals(2 * K + 2 * 3 + 3, added, "fds of " + 2 * K + " connections in groups of " + K);
        assertEquals(2, ct.loopQueues().completionGroups());
        for (FabricConnection c : cs) {
            c.close();
        }
        assertEquals(0, ct.loopQueues().completionGroups());
        assertEquals(before, openFds());
    }

    @Test
    void aConnectionWithoutALoop_keepsItsOwnQueue() {
        FabricConnection own = closeLater((FabricConnection) ((FabricTransport) client).connectWithHello(
                nowhere(), config(), hs -> hs, null));
        assertNull(own.groupMember());
        assertEquals(0, ((FabricTransport) client).loopQueues().completionGroups());
    }

    /** The fact {@link FabricTransport#mayShareQueues} rests on: measured on tcp of libfabric 1.17 only. */
    @Test
    void queuesAreSharedAcrossDomains_onTcpOfTheLibfabricMeasured_only() {
        assertTrue(ProviderProfile.sharesQueuesAcrossDomains("tcp", fabric_h.FI_VERSION(1, 17)));
        assertFalse(ProviderProfile.sharesQueuesAcrossDomains("tcp", fabric_h.FI_VERSION(1, 18)), "not measured");
        assertFalse(ProviderProfile.sharesQueuesAcrossDomains("verbs", fabric_h.FI_VERSION(1, 17)), "no groups on verbs");
        assertFalse(ProviderProfile.sharesQueuesAcrossDomains("tcp", 0), "no usable library");
        assertEquals(fabric_h.FI_VERSION(1, 17), FabricLibrary.libraryVersion(),
                "the libfabric the project installs (Debian 12's) is the one measured: the tests below assume it");
    }

    /**
     * A connection with keys scoped to it opens its endpoint in a domain of its own, bound to
     * its loop's group queue of the transport's domain (scoped_shared_cq_probe.c): both scoped
     * connections of one loop are members of one group, their entries reach them, and a key of
     * one presented on the other still reaches nothing (the key is looked up in the endpoint's
     * domain, not the queue's) and ends the forger's connection alone.
     */
    @Test
    void scopedConnections_shareTheirLoopsGroupQueue_andAKeyOfOneReachesNothingOnTheOther() {
        Object serverLoop = new Object();
        Object clientLoop = new Object();
        Listener l = closeLater(server.listen(listenAddress(), config()));
        Deque<ConnectionRequest> reqs = pump.add(l);
        List<TransportPump.Side> clients = new ArrayList<>();
        List<TransportPump.Side> servers = new ArrayList<>();
        List<LocalRegion> regions = new ArrayList<>();
        List<io.cqflux.core.spi.KeyScope> scopes = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Connection c = closeLater(((FabricTransport) client).connectWithHello(l.address(), config(), hs -> hs,
                    clientLoop));
            clients.add(pump.add("client " + i, c));
            pump.until("request " + i, DEADLINE, () -> !reqs.isEmpty());
            ConnectionRequest r = reqs.poll();
            io.cqflux.core.spi.KeyScope scope = r.scopeKeys();
            scopes.add(scope);
            LocalRegion region = closeLater(scope.register(arena.allocate(4096, 4096),
                    java.util.EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC)));
            region.segment().fill((byte) (0x11 * (i + 1)));
            regions.add(region);
            byte[] hello = r.privateData();
            Connection s = closeLater(r.acceptWithHello(hs -> hs, serverLoop));
            scope.close(); // the request's hold: the domain lives on with the connection and the region
            s.applyPeerParameters(Arrays.copyOf(hello, GroupRoster.PARAMETERS_LENGTH));
            servers.add(pump.add("server " + i, s));
        }
        pump.until("all established", DEADLINE, () -> Stream.concat(clients.stream(), servers.stream())
                .allMatch(x -> x.events.contains(ConnectionEvent.ESTABLISHED)));
        for (TransportPump.Side c : clients) {
            c.connection().applyPeerParameters(Arrays.copyOf(c.connection().peerPrivateData(),
                    GroupRoster.PARAMETERS_LENGTH));
        }
        FabricConnection a = (FabricConnection) servers.get(0).connection();
        FabricConnection b = (FabricConnection) servers.get(1).connection();
        assertNotNull(a.groupMember(), "a scoped connection on a loop is in a group");
        assertSame(a.groupMember().group(), b.groupMember().group(), "one group for the loop's scoped connections");
        assertEquals(1, ((FabricTransport) server).loopQueues().completionGroups());

        // Each reaches its own with its own key, through the shared queue (the client's completion
        // needs the server's progress, which only the group's queue drives).
        LocalRegion src = region(client, 64, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x66);
        for (int i = 0; i < 2; i++) {
            int n = i;
            RemoteRegion own = closeLater(client.remoteRegion(regions.get(i).descriptor()));
            post("write", () -> clients.get(n).connection().write(own, 8, src, 0, 8, 10 + n, true));
            CompletionRecord w = await(clients.get(i), 10 + i);
            assertTrue(w.isSuccess(), w::toString);
            assertEquals(0x66, regions.get(i).segment().get(ValueLayout.JAVA_BYTE, 8) & 0xff, "write " + i);
        }
        byte[] aBefore = regions.get(0).segment().toArray(ValueLayout.JAVA_BYTE);

        // B's client presents A's key on B's connection.
        RemoteRegion aKey = closeLater(client.remoteRegion(regions.get(0).descriptor()));
        post("forged write", () -> clients.get(1).connection().write(aKey, 0, src, 0, 64, 20, true));
        pump.until("B's connection ends", DEADLINE, () -> clients.get(1).events.stream().anyMatch(ConnectionEvent::isTerminal)
                && servers.get(1).events.stream().anyMatch(ConnectionEvent::isTerminal));
        assertArrayEquals(aBefore, regions.get(0).segment().toArray(ValueLayout.JAVA_BYTE), "A's region changed");

        // A goes on, in the group B left.
        RemoteRegion own = closeLater(client.remoteRegion(regions.get(0).descriptor()));
        post("write", () -> clients.get(0).connection().write(own, 0, src, 0, 64, 21, true));
        CompletionRecord w = await(clients.get(0), 21);
        assertTrue(w.isSuccess(), w::toString);
        assertEquals(0x66, regions.get(0).segment().get(ValueLayout.JAVA_BYTE, 0) & 0xff, "A's write did not land");
        assertTrue(servers.get(0).events.stream().noneMatch(ConnectionEvent::isTerminal), servers.get(0).events::toString);

        for (TransportPump.Side x : Stream.concat(clients.stream(), servers.stream()).toList()) {
            pump.remove(x);
            x.connection().close();
        }
        for (LocalRegion r : regions) {
            r.close();
        }
        assertEquals(0, ((FabricTransport) server).loopQueues().completionGroups(), "the group closed with its last member");
        for (io.cqflux.core.spi.KeyScope sc : scopes) {
            assertTrue(((ScopedDomain) sc).nativeClosed(), "a scope closes after its connection and region");
        }
    }

    /**
     * Unset, the setting keeps queues of their own for a loop's first connections (a lone or busy
     * first connection pays neither the group's dispatch nor its neighbours' progress) and groups
     * the rest; a closed one's place serves the next connection; the count goes back to 0.
     */
    @Test
    void byDefault_aLoopsFirstConnectionsKeepQueuesOfTheirOwn_andTheRestShare() throws IOException {
        FabricTransport t = closeLater(FabricTransport.open("tcp", LOOPBACK, 0));
        InetSocketAddress nowhere = nowhere();
        Object loop = new Object();
        int own = CompletionGroup.DEFAULT_OWN_PER_LOOP;
        long before = openFds();
        List<FabricConnection> cs = new ArrayList<>();
        for (int i = 0; i < own + 4; i++) {
            cs.add(closeLater((FabricConnection) t.connectWithHello(nowhere, config(), hs -> hs, loop)));
        }
        for (int i = 0; i < cs.size(); i++) {
            assertEquals(i >= own, cs.get(i).groupMember() != null, "connection " + i);
        }
        assertEquals(own, t.loopQueues().ownQueues(loop));
        assertEquals(1, t.loopQueues().completionGroups());
        assertEquals(own * 4 + 4 + 3 + 3, openFds() - before, "own queues 4 fds each, then a socket each, the group's"
                + " queue and the loop's event queue 3 each");
        assertNull(closeLater((FabricConnection) t.connectWithHello(nowhere, config(), hs -> hs, new Object()))
                .groupMember(), "another loop counts its own");
        cs.get(3).close();
        FabricConnection next = closeLater((FabricConnection) t.connectWithHello(nowhere, config(), hs -> hs, loop));
        assertNull(next.groupMember(), "a closed one's place serves the next connection");
        next.close();
        for (FabricConnection c : cs) {
            c.close();
        }
        assertEquals(0, t.loopQueues().ownQueues(loop));
        assertEquals(0, t.loopQueues().completionGroups());
    }

    @Test
    void theSetting_outsideItsBounds_orNotANumber_isRefusedNamingValueAndBound() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> FabricTransportProvider.completionQueueGroup("0"));
        assertTrue(zero.getMessage().contains("=0") && zero.getMessage().contains("1 to 65536"), zero.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> FabricTransportProvider.completionQueueGroup("65537"));
        assertTrue(big.getMessage().contains("65537") && big.getMessage().contains("65536"), big.getMessage());
        IllegalArgumentException word = assertThrows(IllegalArgumentException.class,
                () -> FabricTransportProvider.completionQueueGroup("many"));
        assertTrue(word.getMessage().contains("'many'") && word.getMessage().contains(
                TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP), word.getMessage());
        assertEquals(0, FabricTransportProvider.completionQueueGroup(null), "unset: the provider's default");
        assertEquals(1, FabricTransportProvider.completionQueueGroup("1"));
        Transport byDefault = new FabricTransportProvider().open(new TransportOptions(LOOPBACK, false, Map.of()));
        try {
            assertEquals(CompletionGroup.DEFAULT_SIZE, ((FabricTransport) byDefault).loopQueues().groupSize(),
                    "tcp shares its queues by default");
        } finally {
            byDefault.close();
        }
        assertEquals(32, FabricTransportProvider.completionQueueGroup("32"));
        Transport t = new FabricTransportProvider().open(new TransportOptions(LOOPBACK, false,
                Map.of(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "32")));
        try {
            assertEquals(32, ((FabricTransport) t).loopQueues().groupSize());
        } finally {
            t.close();
        }
    }

    @Test
    void theSetting_onAnotherProvider_isRefused() {
        // sockets offers FI_EP_MSG with RMA here (native-facts), so the refusal is the setting's.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FabricTransport.open("sockets", LOOPBACK, 32));
        assertTrue(e.getMessage().contains("tcp provider only") && e.getMessage().contains("sockets"), e.getMessage());
        FabricTransport same = FabricTransport.open("sockets", LOOPBACK, 1);
        assertNotNull(same, "the same provider opens without the setting");
        same.close();
        FabricTransport unset = FabricTransport.open("sockets", LOOPBACK, 0);
        assertEquals(1, unset.loopQueues().groupSize(), "unset, another provider keeps a queue per connection");
        unset.close();
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
