package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Connections with raw private data (no cqflux hello) between two cqflux instances, standing in
 * for a peer not written with cqflux: the bytes travel verbatim, regions come from raw
 * descriptors, and a cqflux hello side refuses a foreign peer loudly. Shared by the transports.
 */
abstract class RawPrivateDataContract {
    static final Duration T = Duration.ofSeconds(20);

    Arena arena;
    Cqflux server;
    Cqflux client;
    Region serverRegion;
    MemorySegment serverMem;
    Region local;
    MemorySegment localMem;

    abstract Cqflux.Builder builder();

    abstract InetSocketAddress listenAddress();

    /** {@return the flush access the server's region gets (the strongest its transport delivers)} */
    RegionAccess flushAccess() {
        return RegionAccess.FLUSH_TYPE_VISIBILITY;
    }

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        server = builder().build();
        client = builder().build();
        serverMem = arena.allocate(8192, 64);
        serverRegion = server.register(serverMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC, flushAccess(),
                RegionAccess.SEND, RegionAccess.RECV);
        localMem = arena.allocate(8192, 64);
        local = client.register(localMem, RegionAccess.WRITE_SRC, RegionAccess.READ_DST, RegionAccess.SEND,
                RegionAccess.RECV);
    }

    @AfterEach
    void tearDown() {
        client.disposeNow(T);
        server.disposeNow(T);
        arena.close();
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static void assertStartsWith(byte[] expected, byte[] got) {
        assertTrue(got.length >= expected.length, got.length + " bytes received for " + expected.length + " sent");
        assertArrayEquals(expected, Arrays.copyOf(got, expected.length), "verbatim, first");
        for (int i = expected.length; i < got.length; i++) {
            assertEquals(0, got[i], "padding byte " + i);
        }
    }

    @Test
    void rawBothWays_verbatim_noHello_andForeignRegionTakesReadWriteAndDurableWrite() throws Exception {
        CompletableFuture<byte[]> seen = new CompletableFuture<>();
        byte[] answer = RpmaCommonData.encode(serverRegion.rawDescriptor(), server.peerConfigurationDescriptor(), 256);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(req -> {
            seen.complete(req);
            return AcceptDecision.accept(answer);
        })).block(T);
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        s.connections().subscribe(accepted::complete);
        byte[] greeting = ascii("\u0005Hello, not a frame");
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(greeting)).block(T);

        assertStartsWith(greeting, seen.get(T.toMillis(), TimeUnit.MILLISECONDS));
        assertStartsWith(answer, c.peerPrivateData());
        RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
        assertStartsWith(greeting, sc.peerPrivateData());
        assertEquals(0, c.remoteRegions().size(), "no hello: no exposed regions");
        assertEquals(0, sc.remoteRegions().size());

        RpmaCommonData theirs = RpmaCommonData.decode(c.peerPrivateData());
        assertEquals(256, theirs.dataOffset());
        StepVerifier.create(c.applyPeerConfiguration(theirs.peerConfigDescriptor())).expectComplete().verify(T);
        PeerRegion remote = c.remoteRegion(theirs.mrDescriptor(), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        assertEquals(-1, remote.index());
        assertEquals(serverRegion.size(), remote.size());

        localMem.asSlice(0, 64).fill((byte) 0x5A);
        StepVerifier.create(c.durableWrite(remote, theirs.dataOffset(), local, 0, 64)).expectComplete().verify(T);
        assertEquals(-1, serverMem.asSlice(256, 64).mismatch(localMem.asSlice(0, 64)));
        serverMem.set(ValueLayout.JAVA_LONG, 1024, 0x1122334455667788L);
        StepVerifier.create(c.read(local, 4096, remote, 1024, 8)).expectComplete().verify(T);
        assertEquals(0x1122334455667788L, localMem.get(ValueLayout.JAVA_LONG, 4096));
        StepVerifier.create(c.flush(remote, 0, 64, FlushType.VISIBILITY)).expectComplete().verify(T);

        // raw sends: no credits, the receiver posts its buffers when it subscribes
        StepVerifier.create(sc.receive().next())
                .then(() -> c.send(local, 0, 16).subscribe())
                .assertNext(m -> assertEquals(16, m.data().length))
                .expectComplete().verify(T);

        // the region is the connection's: closed with it, refused on another
        c.dispose();
        c.onDispose().block(T);
        assertThrows(RuntimeException.class, () -> c.remoteRegion(theirs.mrDescriptor(), RegionAccess.WRITE_DST));
    }

    @Test
    void rawConnect_emptyPrivateData_sendsNone_andTheServerSeesNothingButPadding() throws Exception {
        CompletableFuture<byte[]> seen = new CompletableFuture<>();
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(req -> {
            seen.complete(req);
            return AcceptDecision.accept(new byte[0]);
        })).block(T);
        s.connections().subscribe();
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(new byte[0])).block(T);
        byte[] got = seen.get(T.toMillis(), TimeUnit.MILLISECONDS);
        for (byte b : got) {
            assertEquals(0, b);
        }
        for (byte b : c.peerPrivateData()) {
            assertEquals(0, b);
        }
    }

    @Test
    void rawConnect_atExactlyTheTransportLimit_arrivesWhole_andOneMoreFailsNamingTheLimit() throws Exception {
        int max = client.maxConnectPrivateData();
        byte[] full = new byte[max];
        Arrays.fill(full, (byte) 0x7E);
        CompletableFuture<byte[]> seen = new CompletableFuture<>();
        byte[] answer = new byte[server.maxAcceptPrivateData()];
        Arrays.fill(answer, (byte) 0x3C);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(req -> {
            seen.complete(req);
            return AcceptDecision.accept(answer);
        })).block(T);
        s.connections().subscribe();
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(full)).block(T);
        assertStartsWith(full, seen.get(T.toMillis(), TimeUnit.MILLISECONDS));
        assertStartsWith(answer, c.peerPrivateData());
        StepVerifier.create(client.connect(s.address(), ConnectOptions.rawPrivateData(new byte[max + 1])))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains(Integer.toString(max + 1)) && e.getMessage()
                            .contains(Integer.toString(max)), e.getMessage());
                }).verify(T);
    }

    @Test
    void rawAccept_rejectOrThrowOrTooMuch_rejectsTheRequest() {
        for (java.util.function.Function<byte[], AcceptDecision> f : java.util.List.<java.util.function.Function<byte[],
                AcceptDecision>>of(r -> AcceptDecision.reject(), r -> {
                    throw new IllegalStateException("boom");
                }, r -> null, r -> AcceptDecision.accept(new byte[server.maxAcceptPrivateData() + 1]))) {
            RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(f)).block(T);
            StepVerifier.create(client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("hi"))))
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(ConnectionException.class, e);
                        assertEquals(ConnectionEvent.REJECTED, ((ConnectionException) e).event());
                    }).verify(T);
            s.disposeNow(T);
        }
    }

    @Test
    void helloServer_foreignRequest_isRejected_neverServedAsZeroRegions() {
        RdmaServer s = server.bind(listenAddress(), serverRegion).block(T);
        s.connections().subscribe(c -> {
            throw new AssertionError("a foreign client was accepted: " + c);
        });
        byte[] common = RpmaCommonData.encode(local.rawDescriptor(), client.peerConfigurationDescriptor(), 0);
        StepVerifier.create(client.connect(s.address(), ConnectOptions.rawPrivateData(common)))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertEquals(ConnectionEvent.REJECTED, ((ConnectionException) e).event());
                }).verify(T);
        assertEquals(0, server.openConnections());
    }

    @Test
    void helloClient_foreignServer_failsTheConnectMono_namingTheMagic() {
        byte[] common = RpmaCommonData.encode(serverRegion.rawDescriptor(), server.peerConfigurationDescriptor(), 0);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(common)))
                .block(T);
        s.connections().subscribe();
        StepVerifier.create(client.connect(s.address()))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(ConnectionException.class, e);
                    assertTrue(e.getMessage().contains("not a cqflux hello") && e.getMessage().contains("bad magic"),
                            e.getMessage());
                }).verify(T);
    }

    @Test
    void helloBothWays_stillWorks_withTheRegionsExposed() {
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(serverRegion)).block(T);
        s.connections().subscribe();
        RdmaConnection c = client.connect(s.address(), ConnectOptions.exposing(local)).block(T);
        assertEquals(1, c.remoteRegions().size());
        localMem.set(ValueLayout.JAVA_LONG, 0, 42L);
        StepVerifier.create(c.durableWrite(c.remoteRegion(0), 8, local, 0, 8)).expectComplete().verify(T);
        assertEquals(42L, serverMem.get(ValueLayout.JAVA_LONG, 8));
    }

    /** Accepts every raw request; the server's connections arrive in {@code accepted}. */
    RdmaServer rawServer(Cqflux on, AcceptOptions options, CompletableFuture<RdmaConnection> accepted) {
        RdmaServer s = on.bind(listenAddress(), options).block(T);
        s.connections().subscribe(accepted::complete);
        return s;
    }

    @Test
    void rawConnection_messagesSentBeforeAnyoneSubscribes_waitForTheSubscriber_inOrder() throws Exception {
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        RdmaServer s = rawServer(server, AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(ascii("ok"))),
                accepted);
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("hi"))).block(T);
        RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
        // Sent at once, as a foreign peer does: nobody on the server has subscribed to receive().
        for (int i = 0; i < 5; i++) {
            localMem.set(ValueLayout.JAVA_BYTE, 64 + i, (byte) (10 + i));
            StepVerifier.create(c.send(local, 64 + i, 1)).expectComplete().verify(T);
        }
        StepVerifier.create(sc.receive(m -> m.data().get(ValueLayout.JAVA_BYTE, 0)).take(5))
                .expectNext((byte) 10, (byte) 11, (byte) 12, (byte) 13, (byte) 14)
                .expectComplete().verify(T);
    }

    @Test
    void rawConnection_aPoolFullOfUnaskedMessages_endsTheConnectionLoudly_afterDeliveringThem() throws Exception {
        try (Cqflux small = builder().connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(4))
                .build()) {
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            RdmaServer s = rawServer(small, AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(ascii("ok"))),
                    accepted);
            RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("hi"))).block(T);
            RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
            for (int i = 0; i < 4; i++) {
                localMem.set(ValueLayout.JAVA_BYTE, 64 + i, (byte) (20 + i));
                // the fourth fills the server's last buffer: the server ends the connection, and
                // the send may see that end
                c.send(local, 64 + i, 1).onErrorComplete().block(T);
            }
            // A completed send says the peer's NIC took the message, not that the server's loop
            // has read it: subscribed before that, the fourth would go straight to the subscriber
            // and the pool would never be full. So the end is awaited first; the messages that
            // arrived are kept for a later subscriber, then the end.
            StepVerifier.create(sc.onDispose()).expectComplete().verify(T);
            StepVerifier.create(sc.receive(m -> m.data().get(ValueLayout.JAVA_BYTE, 0)))
                    .expectNext((byte) 20, (byte) 21, (byte) 22, (byte) 23)
                    .expectErrorSatisfies(e -> {
                        ConnectionException ce = assertInstanceOf(ConnectionException.class, e);
                        assertEquals(ConnectionEvent.LOST, ce.event());
                        assertTrue(ce.getMessage().contains("all 4 receive buffers (receiveQueueSize)"), ce.getMessage());
                    })
                    .verify(T);
        }
    }

    /**
     * With {@code withEndOnReceiveOverflow(false)} a pool full of unasked messages ends nothing:
     * the peer's further sends wait for a receive (on RDMA the NIC's RNR retries, on fabric/tcp the
     * stream), and every message arrives, in order, once someone asks.
     */
    @Test
    void rawConnection_aFullPool_withEndOnOverflowOff_holdsThePeerBack_andLosesNothing() throws Exception {
        assertTrue(ConnectOptions.defaults().endsOnReceiveOverflow());
        assertTrue(AcceptOptions.rawPrivateData(r -> AcceptDecision.reject()).endsOnReceiveOverflow());
        try (Cqflux small = builder().connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(4))
                .build()) {
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            RdmaServer s = rawServer(small, AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(ascii("ok")))
                    .withEndOnReceiveOverflow(false), accepted);
            RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("hi"))).block(T);
            RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
            for (int i = 0; i < 6; i++) {
                localMem.set(ValueLayout.JAVA_BYTE, 64 + i, (byte) (20 + i));
            }
            for (int i = 0; i < 4; i++) {
                c.send(local, 64 + i, 1).block(T);
            }
            java.util.List<Throwable> sendErrors = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int i = 4; i < 6; i++) {
                c.send(local, 64 + i, 1).subscribe(v -> { }, sendErrors::add);
            }
            Thread.sleep(300);
            assertFalse(sc.isDisposed(), "the full pool ended the connection");
            StepVerifier.create(sc.receive(m -> m.data().get(ValueLayout.JAVA_BYTE, 0)).take(6))
                    .expectNext((byte) 20, (byte) 21, (byte) 22, (byte) 23, (byte) 24, (byte) 25)
                    .expectComplete().verify(T);
            assertFalse(sc.isDisposed());
            assertFalse(c.isDisposed());
            assertEquals(java.util.List.of(), sendErrors);
        }
    }

    @Test
    void rawConnection_withPrefetchOff_postsForDemandOnly_asBefore() throws Exception {
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        RdmaServer s = rawServer(server, AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(ascii("ok")))
                .withReceivePrefetch(0), accepted);
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("hi"))).block(T);
        RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(0, sc.core().receiver.prefetch());
        assertEquals(c.core().config.receiveQueueSize(), c.core().receiver.prefetch(), "the client's default");
        StepVerifier.create(sc.receive().next())
                .then(() -> c.send(local, 0, 16).subscribe())
                .assertNext(m -> assertEquals(16, m.data().length))
                .expectComplete().verify(T);
    }

    @Test
    void helloConnection_withAPrefetch_grantsCredits_beforeAnyoneSubscribes() throws Exception {
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(serverRegion)).block(T);
        s.connections().subscribe(accepted::complete);
        RdmaConnection c = client.connect(s.address(), ConnectOptions.exposing().withReceivePrefetch(3)).block(T);
        RdmaConnection sc = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
        // The server's sends need the client's credits: with a prefetch of 3 they are granted at
        // once, so three sends complete with nobody on the client subscribed (without it they
        // would wait for a subscriber's demand).
        for (int i = 0; i < 3; i++) {
            serverMem.set(ValueLayout.JAVA_BYTE, 128 + i, (byte) (30 + i));
            StepVerifier.create(sc.send(serverRegion, 128 + i, 1)).expectComplete().verify(T);
        }
        StepVerifier.create(c.receive(m -> m.data().get(ValueLayout.JAVA_BYTE, 0)).take(3))
                .expectNext((byte) 30, (byte) 31, (byte) 32)
                .expectComplete().verify(T);
    }
}
