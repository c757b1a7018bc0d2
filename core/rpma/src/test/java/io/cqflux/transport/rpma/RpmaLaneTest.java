package io.cqflux.transport.rpma;

import static io.cqflux.transport.rpma.LaneSupport.awaitCompletions;
import static io.cqflux.transport.rpma.LaneSupport.awaitEvent;
import static io.cqflux.transport.rpma.LaneSupport.awaitRequest;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.testing.RdmaResources;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * rpma-specific behaviour against real librpma over Soft-RoCE (rxe0 on the guest's eth0): runs
 * only in the lane ({@code scripts/softroce}), client and server in this JVM on one address.
 */
@Tag("rpma")
class RpmaLaneTest {

    /**
     * These tests' connections: a main CQ and a separate receive CQ ({@code rpma_conn_cfg_set_rcq_size(3)}).
     * The default has one CQ for both, which the contract suites cover.
     */
    private static final ConnectionConfig SEPARATE_RECEIVE_CQ = ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128);

    private static final Set<RegionAccess> SERVER_ACCESS = EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
            RegionAccess.FLUSH_TYPE_VISIBILITY, RegionAccess.RECV);
    private static final Set<RegionAccess> CLIENT_ACCESS = EnumSet.of(RegionAccess.WRITE_SRC, RegionAccess.READ_DST,
            RegionAccess.SEND, RegionAccess.RECV);

    private static InetAddress address;
    private static Transport transport;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment scratch = arena.allocate(16 * 64L, 8);
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeAll
    static void open() throws Exception {
        address = LaneSupport.address();
        transport = Rpma.open(address);
    }

    @AfterAll
    static void closeTransport() {
        if (transport != null) {
            transport.close();
        }
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        arena.close();
    }

    private <T extends AutoCloseable> T keep(T t) {
        resources.add(t);
        return t;
    }

    /** A connected pair; the server's region descriptor travels in the accept private data. */
    private record Pair(Connection client, Connection server, LocalRegion serverRegion, RemoteRegion remote,
                        LocalRegion clientRegion) {
    }

    private Pair connect(ConnectionConfig config, Set<RegionAccess> serverAccess) throws Exception {
        return connect(config, serverAccess, transport);
    }

    /** A pair whose server side (listener and region) is on {@code serverSide}. */
    private Pair connect(ConnectionConfig config, Set<RegionAccess> serverAccess, Transport serverSide) throws Exception {
        InetSocketAddress where = LaneSupport.freePort(address);
        Listener listener = keep(serverSide.listen(where, config));
        LocalRegion serverRegion = keep(serverSide.register(arena.allocate(4096, 64), serverAccess));
        LocalRegion clientRegion = keep(transport.register(arena.allocate(4096, 64), CLIENT_ACCESS));
        Connection client = keep(transport.connect(where, config, new byte[] {1, 2, 3}));
        ConnectionRequest req = awaitRequest(listener);
        assertArrayEquals(new byte[] {1, 2, 3}, java.util.Arrays.copyOf(req.privateData(), 3));
        Connection server = keep(req.accept(serverRegion.descriptor()));
        // the client first: librdmacm sends the RTU only while the active side reads its
        // ESTABLISHED event (rpma_conn_next_event), so the server's ESTABLISHED waits for that
        assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(client));
        assertEquals(ConnectionEvent.ESTABLISHED, awaitEvent(server));
        RemoteRegion remote = keep(transport.remoteRegion(java.util.Arrays.copyOf(client.peerPrivateData(),
                serverRegion.descriptor().length)));
        return new Pair(client, server, serverRegion, remote, clientRegion);
    }

    private Pair connect() throws Exception {
        return connect(SEPARATE_RECEIVE_CQ, SERVER_ACCESS);
    }

    private List<CompletionRecord> complete(Connection c, int queue, int n) {
        return awaitCompletions(c.completionQueues().get(queue), scratch, n, null);
    }

    @Test
    void connect_exchangesPrivateDataVerbatim_asRdmaCmPadsIt() throws Exception {
        Pair p = connect();
        byte[] request = p.server().peerPrivateData();
        assertEquals(PrivateData.CONNECT_CAPACITY, request.length, "RDMA CM pads connect data to 56 bytes");
        assertArrayEquals(new byte[] {1, 2, 3}, java.util.Arrays.copyOf(request, 3), "no frame: the bytes come first");
        byte[] accept = p.client().peerPrivateData();
        byte[] d = p.serverRegion().descriptor();
        assertEquals(PrivateData.ACCEPT_CAPACITY, accept.length, "RDMA CM pads accept data to 196 bytes");
        assertArrayEquals(d, java.util.Arrays.copyOf(accept, d.length));
        assertEquals(4096, p.remote().size());
        assertEquals(Set.of(FlushType.VISIBILITY), p.remote().flushTypes(), "DRAM region: visibility only");
        assertEquals(SERVER_ACCESS, p.remote().access());
        assertEquals(2, p.client().completionQueues().size(), "main CQ + receive CQ");
    }

    @Test
    void writeFlushRead_drainedInBatches_reportWhatTheDeviceSaid() throws Exception {
        Pair p = connect();
        MemorySegment src = p.clientRegion().segment();
        for (int i = 0; i < 64; i++) {
            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 3));
        }
        assertTrue(p.client().write(p.remote(), 128, p.clientRegion(), 0, 64, 11, true));
        assertTrue(p.client().flush(p.remote(), 128, 64, FlushType.VISIBILITY, 12, true));
        assertTrue(p.client().read(p.clientRegion(), 1024, p.remote(), 128, 64, 13, true));
        List<Integer> batches = new ArrayList<>();
        List<CompletionRecord> got = awaitCompletions(p.client().completionQueues().get(0), scratch, 3, batches);
        assertEquals(List.of(11L, 12L, 13L), got.stream().map(CompletionRecord::context).toList(), got.toString());
        // The transport reports the device's opcodes; the owner of the contexts knows 12 was a flush.
        assertEquals(List.of(Opcode.WRITE, Opcode.READ, Opcode.READ), got.stream().map(CompletionRecord::opcode).toList(),
                "the emulated flush completes as IBV_WC_RDMA_READ (rpma_flush(3))");
        assertTrue(got.stream().allMatch(CompletionRecord::isSuccess), got.toString());
        assertEquals(64, got.get(2).byteLength());
        assertArrayEquals(src.asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE),
                src.asSlice(1024, 64).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(src.asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE),
                p.serverRegion().segment().asSlice(128, 64).toArray(ValueLayout.JAVA_BYTE));
        System.out.println("write/flush/read drained in batches " + batches);
    }

    @Test
    void batchDrain_returnsSeveralCompletionsAtOnce() throws Exception {
        Pair p = connect();
        int n = 8;
        for (int i = 0; i < n; i++) {
            assertTrue(p.client().write(p.remote(), i * 8L, p.clientRegion(), 0, 8, 100 + i, true));
        }
        // a read after the writes completes last (RC completes in order): once its data landed
        // and its CQ fd fired, the writes' completions are all in the CQ
        p.clientRegion().segment().set(ValueLayout.JAVA_LONG, 2048, 0L);
        p.serverRegion().segment().set(ValueLayout.JAVA_LONG, 4000, 0x5A5A5A5AL);
        assertTrue(p.client().read(p.clientRegion(), 2048, p.remote(), 4000, 8, 200, true));
        CompletionQueue cq = p.client().completionQueues().get(0);
        long deadline = System.nanoTime() + LaneSupport.TIMEOUT.toNanos();
        while (p.clientRegion().segment().get(ValueLayout.JAVA_LONG, 2048) != 0x5A5A5A5AL) {
            assertTrue(System.nanoTime() < deadline, "read data never arrived");
            Thread.onSpinWait();
        }
        LaneSupport.awaitReadable(cq.fd(), deadline);
        cq.acknowledge();
        List<CompletionRecord> first = new ArrayList<>();
        int k = cq.poll(scratch, 16, c -> first.add(c.snapshot()));
        assertTrue(k >= n, "one rpma_cq_get_wc batch should hold at least the " + n + " writes, got " + k + ": " + first);
        assertEquals(100L, first.get(0).context());
    }

    @Test
    void atomicWrite_writesEightBytesAtomically_andReadsBack() throws Exception {
        Pair p = connect();
        long value = 0x1122334455667788L;
        assertTrue(p.client().atomicWrite(p.remote(), 8, value, 21, true));
        CompletionRecord c = complete(p.client(), 0, 1).get(0);
        assertTrue(c.isSuccess(), c.toString());
        assertEquals(Opcode.WRITE, c.opcode(), "librpma posts an inline, fenced RDMA write (rpma_atomic_write(3))");
        assertEquals(value, p.serverRegion().segment().get(ValueLayout.JAVA_LONG, 8));
        assertTrue(p.client().read(p.clientRegion(), 64, p.remote(), 8, 8, 22, true));
        assertTrue(complete(p.client(), 0, 1).get(0).isSuccess());
        assertEquals(value, p.clientRegion().segment().get(ValueLayout.JAVA_LONG, 64));
    }

    @Test
    void atomicWrite_misalignedOrOutside_isRejectedBeforePosting() throws Exception {
        Pair p = connect();
        assertThrows(IllegalArgumentException.class, () -> p.client().atomicWrite(p.remote(), 4, 1L, 1, true));
        assertThrows(IllegalArgumentException.class, () -> p.client().atomicWrite(p.remote(), 4096, 1L, 1, true));
        assertThrows(IllegalArgumentException.class,
                () -> p.client().read(p.clientRegion(), 0, p.remote(), 4090, 16, 1, true));
        assertThrows(IllegalArgumentException.class,
                () -> p.client().flush(p.remote(), 0, 8, FlushType.PERSISTENT, 1, true));
    }

    @Test
    void capabilities_reportSharedChannelAndOdpAsTheDeviceSays() {
        Set<Capability> caps = transport.capabilities();
        assertTrue(caps.containsAll(EnumSet.of(Capability.RMA, Capability.MESSAGES, Capability.ATOMIC_WRITE,
                Capability.FLUSH_VISIBILITY, Capability.SHARED_COMPLETION_CHANNEL)), caps.toString());
        System.out.println("rpma on " + address + ": capabilities " + caps + ", rxe ODP "
                + caps.contains(Capability.ON_DEMAND_PAGING));
    }

    @Test
    void sendReceiveAndWriteWithImmediate_deliverHostOrderImmediates() throws Exception {
        Pair p = connect();
        assertTrue(p.server().receive(p.serverRegion(), 0, 256, 31));
        assertTrue(p.server().receive(p.serverRegion(), 256, 0, 32));
        MemorySegment src = p.clientRegion().segment();
        src.set(ValueLayout.JAVA_LONG, 0, 0xABCDEFL);
        assertTrue(p.client().sendWithImmediate(p.clientRegion(), 0, 8, 0xCAFEBABE, 33, true));
        assertTrue(p.client().writeWithImmediate(p.remote(), 512, p.clientRegion(), 0, 8, 0x01020304, 34, true));
        List<CompletionRecord> sent = complete(p.client(), 0, 2);
        assertEquals(List.of(Opcode.SEND, Opcode.WRITE), sent.stream().map(CompletionRecord::opcode).toList(),
                "IBV_WC_SEND and IBV_WC_RDMA_WRITE: the sender's completions do not say 'with immediate'");
        List<CompletionRecord> recv = complete(p.server(), 1, 2);
        assertEquals(31L, recv.get(0).context());
        assertEquals(Opcode.RECEIVE, recv.get(0).opcode());
        assertEquals(8, recv.get(0).byteLength());
        assertEquals(0xCAFEBABE, recv.get(0).immediate());
        assertEquals(32L, recv.get(1).context());
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, recv.get(1).opcode());
        assertEquals(0x01020304, recv.get(1).immediate());
        assertEquals(0xABCDEFL, p.serverRegion().segment().get(ValueLayout.JAVA_LONG, 0));
        assertEquals(0xABCDEFL, p.serverRegion().segment().get(ValueLayout.JAVA_LONG, 512));
    }

    @Test
    void sharedCompletionChannel_oneQueueServesSendsAndReceives() throws Exception {
        ConnectionConfig shared = SEPARATE_RECEIVE_CQ.withSharedCompletionChannel(true);
        Pair p = connect(shared, SERVER_ACCESS);
        assertEquals(1, p.client().completionQueues().size());
        assertEquals(1, p.server().completionQueues().size());
        assertTrue(p.server().receive(p.serverRegion(), 0, 64, 41));
        assertTrue(p.client().send(p.clientRegion(), 0, 16, 42, true));
        assertTrue(p.client().write(p.remote(), 64, p.clientRegion(), 0, 16, 43, true));
        assertEquals(List.of(42L, 43L), complete(p.client(), 0, 2).stream().map(CompletionRecord::context).toList());
        CompletionRecord r = complete(p.server(), 0, 1).get(0);
        assertEquals(Opcode.RECEIVE, r.opcode());
        assertEquals(16, r.byteLength());
    }

    @Test
    void write_toRegionWithoutThatAccess_failsWithRemoteAccessError() throws Exception {
        // the server registers READ_SRC only but (deliberately) advertises WRITE_DST in the
        // descriptor header, so the check before posting passes and the peer's NIC refuses
        Pair p = connect(ConnectionConfig.DEFAULT, EnumSet.of(RegionAccess.READ_SRC));
        byte[] forged = p.serverRegion().descriptor();
        forged[1] = (byte) (forged[1] | RegionAccess.WRITE_DST.bit());
        RemoteRegion lying = keep(transport.remoteRegion(forged));
        assertTrue(p.client().write(lying, 0, p.clientRegion(), 0, 8, 51, true));
        CompletionRecord c = complete(p.client(), 0, 1).get(0);
        assertEquals(51L, c.context());
        assertEquals(CompletionStatus.REM_ACCESS_ERR, c.status(), c.toString());
        assertFalse(c.errorText().isEmpty());
        assertThrows(IllegalStateException.class, c::opcode);
    }

    @Test
    void connect_toPortWithoutListener_isRejected() throws Exception {
        Connection c = keep(transport.connect(LaneSupport.freePort(address), ConnectionConfig.DEFAULT, null));
        assertEquals(ConnectionEvent.REJECTED, awaitEvent(c));
    }

    @Test
    void listenerClosedBeforeAccepting_clientIsRefused_andAnsweringAfterwardsFails() throws Exception {
        for (int i = 0; i < 5; i++) {
            InetSocketAddress where = LaneSupport.freePort(address);
            RpmaListener listener = (RpmaListener) transport.listen(where, ConnectionConfig.DEFAULT);
            Connection client = keep(transport.connect(where, ConnectionConfig.DEFAULT, new byte[] {7}));
            ConnectionRequest req = awaitRequest(listener);
            assertEquals(1, listener.pendingRequests());
            listener.close(); // with the request taken and never answered
            assertEquals(0, listener.pendingRequests());
            assertThrows(ResourceClosedException.class, () -> req.accept(new byte[0]));
            assertThrows(ResourceClosedException.class, req::reject);
            ConnectionEvent e = awaitEvent(client);
            assertTrue(e == ConnectionEvent.REJECTED || e == ConnectionEvent.UNREACHABLE, e::toString);
        }
    }

    /**
     * librpma's {@code rpma_conn_req_delete(3)} rejects an incoming request and leaves its
     * {@code rdma_cm_id}, one per rejection until the listener closes
     * ({@code core/rpma/src/test/c/reject_cm_id_probe.c}); the transport destroys it
     * ({@code RpmaConnectionRequest}'s fact). Counted by the kernel, {@code rdma resource show cm_id}:
     * the ids whose source is the listener's address, with the listener open.
     */
    @Test
    void rejectedRequests_leaveNoCmIdBehind_whileTheListenerStaysOpen() throws Exception {
        InetSocketAddress where = LaneSupport.freePort(address);
        Listener listener = keep(transport.listen(where, ConnectionConfig.DEFAULT));
        assertEquals(1, RdmaResources.cmIdsFrom(where), "the listener's own id");
        int rejections = 10;
        for (int i = 0; i < rejections; i++) {
            try (Connection client = transport.connect(where, ConnectionConfig.DEFAULT, new byte[] {(byte) i})) {
                awaitRequest(listener).reject();
                assertEquals(ConnectionEvent.REJECTED, awaitEvent(client));
            }
        }
        assertEquals(1, RdmaResources.cmIdsFrom(where), "ids from " + where + " after " + rejections + " rejections, the listener's"
                + " included: each left by a rejection stays until the listener closes");
    }

    /** librpma has no getter for it; the request's RDMA CM id holds it (RpmaConnectionRequest#peerAddress). */
    @Test
    void request_tellsTheRequestersAddress() throws Exception {
        InetSocketAddress where = LaneSupport.freePort(address);
        Listener listener = keep(transport.listen(where, ConnectionConfig.DEFAULT));
        Connection client = keep(transport.connect(where, ConnectionConfig.DEFAULT, new byte[] {1}));
        ConnectionRequest req = awaitRequest(listener);
        InetSocketAddress peer = req.peerAddress();
        assertTrue(peer != null && peer.getAddress().equals(address) && peer.getPort() > 0
                && peer.getPort() != where.getPort(), "the requester's address: " + peer);
        req.reject();
        assertEquals(ConnectionEvent.REJECTED, awaitEvent(client));
    }

    @Test
    void listen_onPortZero_isRefusedWithTheReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> transport.listen(new InetSocketAddress(address, 0), ConnectionConfig.DEFAULT));
        assertTrue(e.getMessage().contains("port 0"), e.getMessage());
    }

    @Test
    void open_onAddressWithoutRdma_namesTheAddress() throws Exception {
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> Rpma.open(InetAddress.getByName("127.0.0.1")));
        assertTrue(e.getMessage().contains("127.0.0.1") && e.getMessage().contains("not on an RDMA interface"),
                e.getMessage());
    }

    @Test
    void disconnect_reportsClosedOnBothSides_andCloseIsIdempotent() throws Exception {
        Pair p = connect();
        p.client().disconnect();
        p.client().disconnect();
        assertEquals(ConnectionEvent.CLOSED, awaitEvent(p.server()));
        p.server().disconnect(); // answers the client's disconnect request
        assertEquals(ConnectionEvent.CLOSED, awaitEvent(p.client()));
        p.client().close();
        p.client().close();
        assertThrows(ResourceClosedException.class,
                () -> p.client().write(p.remote(), 0, p.clientRegion(), 0, 8, 1, true));
        assertEquals(0, p.client().completionQueues().get(0).poll(scratch, 16, x -> { }));
        assertEquals(null, p.client().events().nextEvent());
    }

    /**
     * rpma_peer_delete(3) frees the peer even while its protection domain is in use; closing the
     * transport under an open listener and region must defer that until they are closed, refuse
     * new children meanwhile, and never crash.
     */
    @Test
    void transportClose_withOpenListenerAndRegion_defersThePeerUntilTheyClose() throws Exception {
        Transport own = Rpma.open(address);
        Listener listener = own.listen(LaneSupport.freePort(address), ConnectionConfig.DEFAULT);
        LocalRegion region = own.register(arena.allocate(4096, 64), CLIENT_ACCESS);
        own.close();
        own.close();
        assertThrows(ResourceClosedException.class, () -> own.register(arena.allocate(64, 64), CLIENT_ACCESS));
        assertEquals(null, listener.nextRequest());
        assertTrue(region.isOpen());
        region.close();
        listener.close(); // the last child: the peer is deleted now
        listener.close();
        assertFalse(region.isOpen());
    }

    @Test
    void region_closeIsIdempotent_andClosedRegionIsRefused() throws Exception {
        Pair p = connect();
        p.clientRegion().close();
        p.clientRegion().close();
        assertFalse(p.clientRegion().isOpen());
        assertThrows(ResourceClosedException.class,
                () -> p.client().write(p.remote(), 0, p.clientRegion(), 0, 8, 1, true));
    }

    @Test
    void persistentFlush_needsThePeersHandshake_thenCompletesAsFlush() throws Exception {
        try (Transport pmem = Rpma.open(new TransportOptions(address, true, Map.of()))) {
            Pair p = connect(ConnectionConfig.DEFAULT, EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                    RegionAccess.FLUSH_TYPE_PERSISTENT), pmem);
            assertEquals(Set.of(FlushType.PERSISTENT), p.remote().flushTypes());
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> p.client().flush(p.remote(), 0, 8, FlushType.PERSISTENT, 61, true));
            assertTrue(e.getMessage().contains("direct write"), e.getMessage());
            byte[] serverHandshake = pmem.handshake();
            System.out.println("rpma peer configuration descriptor: " + serverHandshake.length + " bytes");
            assertThrows(IllegalArgumentException.class, () -> p.client().applyPeerHandshake(
                    java.util.Arrays.copyOf(serverHandshake, serverHandshake.length + 1)));
            // a handshake without the declaration keeps PERSISTENT refused
            p.client().applyPeerHandshake(transport.handshake());
            assertThrows(IllegalStateException.class,
                    () -> p.client().flush(p.remote(), 0, 8, FlushType.PERSISTENT, 61, true));
            p.client().applyPeerHandshake(serverHandshake);
            p.clientRegion().segment().set(ValueLayout.JAVA_LONG, 0, 0x600DF00DL);
            assertTrue(p.client().write(p.remote(), 16, p.clientRegion(), 0, 8, 62, false));
            assertTrue(p.client().flush(p.remote(), 16, 8, FlushType.PERSISTENT, 63, true));
            CompletionRecord f = complete(p.client(), 0, 1).get(0);
            assertEquals(63L, f.context());
            assertTrue(f.isSuccess(), f.toString());
            assertEquals(Opcode.READ, f.opcode(), "the emulated flush completes as a read");
            assertEquals(0x600DF00DL, p.serverRegion().segment().get(ValueLayout.JAVA_LONG, 16));
        } // the transport is freed when its listener, region and connection close after the test

    }

    @Test
    void register_persistentWithoutDirectWriteDeclaration_isRefusedNamingWhatIsDelivered() {
        UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
                () -> transport.register(scratch, EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_PERSISTENT)));
        assertTrue(e.getMessage().contains("rpma") && e.getMessage().contains("[VISIBILITY]")
                && e.getMessage().contains("directWriteToPersistentMemory"), e.getMessage());
    }
}
