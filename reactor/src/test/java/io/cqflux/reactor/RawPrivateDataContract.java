package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
}
