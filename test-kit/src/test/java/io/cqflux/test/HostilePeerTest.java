package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.SharedSecretAuthenticator;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * {@link HostilePeerContract} on fabric/tcp over 127.0.0.1, on the host; with the cases that
 * need what only tcp has: keys from the whole 64-bit space, raw TCP sockets on the listener and
 * the 57-byte shared-secret credentials (256 bytes of connect private data).
 *
 * <p>Bounded: one attacker connection per forged key, 40 in all, 64 bytes each, loopback only.
 */
@Tag("hostile-peer")
class HostilePeerTest extends HostilePeerContract {

    @Override
    Cqflux instance(String role) {
        return Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(InetAddress.getLoopbackAddress())
                .threadNamePrefix("cqflux-hostile-" + role).build();
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    /** tcp's descriptor in a hello: 32 bytes, the key at offset 8. */
    @Override
    long keyOfHelloDescriptor(byte[] descriptor) {
        assertEquals(32, descriptor.length, "tcp's descriptor in a hello");
        return ByteBuffer.wrap(descriptor).getLong(8);
    }

    @Override
    long keyOfRaw(byte[] raw) {
        assertEquals(24, raw.length, "tcp's raw descriptor carries an 8-byte key");
        return ByteBuffer.wrap(raw).getLong();
    }

    /**
     * The fabric raw form: key, base, length, big-endian. The base is 0 whatever the target: tcp
     * addresses a region by offset (the domain's {@code mr_mode} has no {@code FI_MR_VIRT_ADDR}),
     * so on tcp the key alone selects the memory.
     */
    @Override
    byte[] forged(long key, Region target, RegionAccess claimed) {
        return ByteBuffer.allocate(24).putLong(key).putLong(0).putLong(SIZE).array();
    }

    @Override
    long randomKey(SecureRandom r) {
        return r.nextLong();
    }

    @Override
    long[] nearKeys(long known, long flushable) {
        return new long[] {known + 1, known - 1, known + 2, known - 2, known ^ 1L, known ^ (1L << 63),
            flushable + 1, flushable - 1};
    }

    @Override
    byte[][] malformedHellos() {
        return new byte[][] {
            new byte[16],                                                   // no hello: all zero
            {'X', 'Q', 3, 0, 0, 0},                                         // wrong magic
            {'C', 'Q', 9, 0, 0, 0},                                         // unknown version
            {'C', 'Q', 3},                                                  // truncated header
            {'C', 'Q', 3, 1, 0},                                            // truncated region length
            {'C', 'Q', 3, 1, (byte) 0xff, (byte) 0xff, 1, 2, 3},            // region beyond the bytes sent
            {'C', 'Q', 3, (byte) 0xff, 0, 24},                              // 255 regions, 2 bytes
            {'C', 'Q', 3, 0, (byte) 0xff, 1, 2},                            // handshake beyond the bytes
            {'C', 'Q', 3, 0, 0, (byte) 0xff, 1, 2},                         // control words beyond the bytes
            {'C', 'Q', 3, 0, 0},                                            // truncated before the control length
        };
    }

    @Test
    void forgedSequentialSmallKeys_changeNothing_endTheForger_andSpareTheNeighbour() {
        // The keys a sequential allocator would have handed out first: every region and control
        // word of the domain sat among them.
        for (long key = 0; key < 16; key++) {
            forge(key, trusted);
        }
    }

    @Test
    void socketsThatNeverSendAConnectRequest_doNotHoldUpOthers() throws Exception {
        // A raw TCP client of the listener: it connects and then sends nothing, or garbage where
        // libfabric's tcp connect request belongs, and never finishes the handshake.
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                silent.add(new Socket(publicServer.address().getAddress(), publicServer.address().getPort()));
            }
            byte[] garbage = new byte[64];
            new java.util.Random(7).nextBytes(garbage);
            for (int i = 0; i < 4; i++) {
                Socket g = new Socket(publicServer.address().getAddress(), publicServer.address().getPort());
                silent.add(g);
                g.getOutputStream().write(garbage);
                g.getOutputStream().flush();
            }
            aProperClientIsStillServed();
            neighbourStillWorks();
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
        aProperClientIsStillServed();
    }

    @Test
    void wrongOrMissingCredentials_areRefusedWithTheServersReason_andNothingIsRegisteredForThem() {
        byte[] secret = "hostile-peer-test shared secret!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Region guarded = server.register(filled(0x55), RegionAccess.READ_SRC, RegionAccess.WRITE_DST);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(guarded)
                .authenticatedBy(SharedSecretAuthenticator.of(secret))).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = s.connections().subscribe(served::add);
        try {
            refused(attacker.connect(s.address()), "no credentials");
            refused(attacker.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SharedSecretAuthenticator.credentials("not the secret, but 32 bytes long".getBytes()))),
                    "bad credentials");
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1, 2, 3})),
                    "malformed credentials");
            assertEquals(0, s.stats().exposures(), "something was registered for a refused client");
            assertEquals(3, s.stats().refusedByAuthenticator());
            // A captured credential replayed.
            byte[] captured = SharedSecretAuthenticator.credentials(secret).get();
            RdmaConnection ok = attacker.connect(s.address(), ConnectOptions.defaults().credentials(captured)).block(T);
            refused(attacker.connect(s.address(), ConnectOptions.defaults().credentials(captured)),
                    "replayed credentials");
            StepVerifier.create(ok.read(ok.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x55, b[0] & 0xff))
                    .expectComplete().verify(T);
            assertEquals(1, s.stats().exposures());
            // Fresh credentials per connect, as a PeerPool's reconnects need.
            RdmaConnection ok2 = attacker.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SharedSecretAuthenticator.credentials(secret))).block(T);
            assertEquals(2, s.stats().exposures());
            ok.disposeNow(T);
            ok2.disposeNow(T);
            awaitTrue(() -> s.stats().exposures() == 0 && s.stats().pendingHandshakes() == 0, () -> "" + s.stats());
        } finally {
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
            guarded.close();
        }
        neighbourStillWorks();
    }

    /**
     * A server with a short keep-alive, so that its checks of the control words run every 50 ms
     * whether or not it sends anything; one read-only region for the attacker, one writable for a
     * neighbour. Closed by the caller.
     */
    private static final class ControlWordRig implements AutoCloseable {
        final Cqflux srv = Cqflux.builder().transport("fabric").fabricProvider("tcp")
                .localAddress(InetAddress.getLoopbackAddress()).keepAlive(Duration.ofMillis(50), 3)
                .threadNamePrefix("cqflux-hostile-words").build();
        final java.lang.foreign.Arena mem = java.lang.foreign.Arena.ofShared();
        final Region open;
        final Region neighbourRegion;
        final RdmaServer publicSide;
        final RdmaServer neighbourSide;
        final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
        final List<Disposable> subs = new ArrayList<>();

        ControlWordRig() {
            this(c -> { });
        }

        /** @param onAccepted also given each accepted connection, on the server's loop */
        ControlWordRig(java.util.function.Consumer<RdmaConnection> onAccepted) {
            open = srv.register(fill(mem, 0x66), RegionAccess.READ_SRC);
            neighbourRegion = srv.register(fill(mem, 0x77), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
            publicSide = srv.bind(any, open).block(T);
            neighbourSide = srv.bind(any, neighbourRegion).block(T);
            for (RdmaServer side : new RdmaServer[] {publicSide, neighbourSide}) {
                subs.add(side.connections().subscribe(c -> {
                    accepted.add(c);
                    onAccepted.accept(c);
                }));
            }
        }

        static java.lang.foreign.MemorySegment fill(java.lang.foreign.Arena a, int b) {
            java.lang.foreign.MemorySegment m = a.allocate(SIZE, 4096);
            m.fill((byte) b);
            return m;
        }

        byte[] snapshot() {
            ByteBuffer all = ByteBuffer.allocate(2 * SIZE);
            all.put(open.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            all.put(neighbourRegion.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            return all.array();
        }

        @Override
        public void close() {
            subs.forEach(Disposable::dispose);
            srv.disposeNow(T);
            mem.close();
        }
    }

    /** {@return the raw descriptor of the server's control words in the hello it sent {@code c}} */
    private static byte[] controlWordsDescriptor(RdmaConnection c) {
        ByteBuffer hello = ByteBuffer.wrap(c.peerPrivateData());
        assertEquals('C', hello.get(0), "not a hello");
        assertTrue(hello.get(2) >= 3, "a hello of version " + hello.get(2) + " names no control words");
        int count = hello.get(3) & 0xff;
        hello.position(4);
        for (int j = 0; j < count; j++) {
            int n = hello.getShort() & 0xffff;
            hello.position(hello.position() + n);
        }
        int handshake = hello.get() & 0xff;
        hello.position(hello.position() + handshake);
        byte[] d = new byte[hello.get() & 0xff];
        assertEquals(24, d.length, "tcp's raw descriptor of the control words");
        hello.get(d);
        return d;
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(java.nio.ByteOrder.nativeOrder()).putLong(v).array();
    }

    private static long readWord(RdmaConnection c, PeerRegion words, long offset) {
        byte[] b = c.read(words, offset, 8).block(T);
        return ByteBuffer.wrap(b).order(java.nio.ByteOrder.nativeOrder()).getLong();
    }

    /** What a forger writes into its own connection's control words, given the count the server saw. */
    private record Forgery(String name, java.util.function.LongFunction<long[][]> writes) {
    }

    @Test
    void forgedControlWords_endOnlyTheForgersConnection_areCounted_andChangeNothingElse() {
        // The client writes into its OWN connection's control words on the server (it holds their
        // key with write access: the credit and goodbye words are written by RDMA): offset, value
        // pairs, given the credit count the server has seen. Each is what no cqflux peer can write.
        long goodbye = 0x6371_6678_2062_7965L;
        SecureRandom r = new SecureRandom();
        List<Forgery> forgeries = List.of(
                new Forgery("credits far beyond any receive queue", h -> new long[][] {{0, h + 1_000_000}}),
                new Forgery("credits going backwards", h -> new long[][] {{0, h - 1}}),
                new Forgery("a negative credit count", h -> new long[][] {{0, -5}}),
                new Forgery("'no receives' after a count", h -> new long[][] {{0, 0x8371_6678_206E_7278L}}),
                new Forgery("a goodbye word of impossible value", h -> new long[][] {{16, goodbye ^ 1}}),
                new Forgery("random bytes over all 40", h -> {
                    long[][] w = new long[5][];
                    for (int i = 0; i < 5; i++) {
                        w[i] = new long[] {8L * i, r.nextLong()};
                    }
                    return w;
                }));
        try (ControlWordRig rig = new ControlWordRig()) {
            RdmaConnection neighbourConn = trustedSide.connect(rig.neighbourSide.address()).block(T);
            try {
                long v = 0;
                for (Forgery f : forgeries) {
                    byte[] before = rig.snapshot();
                    long violations = rig.srv.serverStats().controlWordViolations();
                    // The forger posts receives, so that its own cqflux writes a count first.
                    RdmaConnection c = attacker.connect(rig.publicSide.address(),
                            ConnectOptions.defaults().withReceivePrefetch(4)).block(T);
                    PeerRegion words = c.remoteRegion(controlWordsDescriptor(c), RegionAccess.WRITE_DST,
                            RegionAccess.READ_SRC);
                    awaitTrue(() -> readWord(c, words, 0) > 0, () -> "the forger's cqflux granted no receive");
                    long h = readWord(c, words, 0);
                    // A keep-alive tick (every 50 ms) has read the honest count before the lie: the
                    // lie "no receives after a count" is one only to a server that saw the count.
                    // A second is room for a loop that a loaded host holds up.
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000_000L);
                    for (long[] w : f.writes().apply(h)) {
                        c.write(words, w[0], le(w[1])).onErrorResume(e -> reactor.core.publisher.Mono.empty())
                                .block(T);
                    }
                    StepVerifier.create(c.onDispose()).expectComplete().verify(T);
                    List<ConnectionEvent> events = c.events().collectList().block(T);
                    assertTrue(events.contains(ConnectionEvent.LOST), f.name() + ": the forger's events " + events);
                    awaitTrue(() -> rig.srv.serverStats().controlWordViolations() == violations + 1,
                            () -> f.name() + ": not counted, " + rig.srv.serverStats());
                    assertArrayEquals(before, rig.snapshot(), f.name() + " changed the server's exposed memory");
                    awaitTrue(() -> rig.publicSide.stats().exposures() == 0 && rig.publicSide.stats().connections() == 0,
                            () -> f.name() + ": the forger's connection or keys outlived it " + rig.publicSide.stats());
                    // The neighbour, on the same server loop, writes and reads on.
                    byte[] b = ByteBuffer.allocate(8).putLong(++v).array();
                    StepVerifier.create(neighbourConn.write(neighbourConn.remoteRegion(0), 0, b)).expectComplete()
                            .verify(T);
                    StepVerifier.create(neighbourConn.read(neighbourConn.remoteRegion(0), 0, 8))
                            .assertNext(x -> assertArrayEquals(b, x)).expectComplete().verify(T);
                    org.junit.jupiter.api.Assertions.assertFalse(neighbourConn.isDisposed(), "the neighbour ended");
                }
                assertEquals(forgeries.size(), rig.srv.serverStats().controlWordViolations(), "" + rig.srv.serverStats());
                assertEquals(1, rig.neighbourSide.stats().connections(), "the neighbour is still connected");
            } finally {
                neighbourConn.disposeNow(T);
            }
        }
        neighbourStillWorks();
    }

    @Test
    void aPlausibleCountAndAnHonestGoodbye_areNotViolations() {
        // What an honest peer may write: a count that grew (within any receive queue), and the
        // goodbye itself. Neither ends the connection nor is counted.
        try (ControlWordRig rig = new ControlWordRig()) {
            RdmaConnection c = attacker.connect(rig.publicSide.address(),
                    ConnectOptions.defaults().withReceivePrefetch(4)).block(T);
            try {
                PeerRegion words = c.remoteRegion(controlWordsDescriptor(c), RegionAccess.WRITE_DST,
                        RegionAccess.READ_SRC);
                awaitTrue(() -> readWord(c, words, 0) > 0, () -> "the client's cqflux granted no receive");
                long h = readWord(c, words, 0);
                StepVerifier.create(c.write(words, 0, le(h + 10))).expectComplete().verify(T);
                java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L); // several 50 ms ticks
                StepVerifier.create(c.read(c.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x66, b[0] & 0xff))
                        .expectComplete().verify(T);
                assertEquals(0, rig.srv.serverStats().controlWordViolations(), "" + rig.srv.serverStats());
                assertEquals(1, rig.publicSide.stats().connections());
            } finally {
                c.disposeNow(T);
            }
            assertEquals(0, rig.srv.serverStats().controlWordViolations(), "an orderly close counted: "
                    + rig.srv.serverStats());
        }
    }

    /**
     * A client that sends more messages than the server granted it receives for. Its hello (sent
     * as raw private data) names control words of its own, so the server grants it credits; its
     * connection is raw, so its sends ignore them. The server's application takes every message.
     */
    @Test
    void aPeerSendingBeyondItsCredits_isEndedAndCountedOrHeldBack_andTheNeighboursMessagesAllArrive() {
        int n = 400; // beyond the server's receive queue (128): the excess must wait for reposts
        java.util.Map<RdmaConnection, List<Long>> got = new java.util.concurrent.ConcurrentHashMap<>();
        try (ControlWordRig rig = new ControlWordRig(conn -> {
            // The server's application takes every message of every connection.
            List<Long> l = new CopyOnWriteArrayList<>();
            got.put(conn, l);
            conn.receive().subscribe(m -> l.add(ByteBuffer.wrap(m.data()).getLong()), e -> { });
        })) {
            RdmaConnection neighbourConn = trustedSide.connect(rig.neighbourSide.address()).block(T);
            Region words = attacker.register(ControlWordRig.fill(rig.mem, 0), RegionAccess.WRITE_DST);
            byte[] raw = words.rawDescriptor();
            ByteBuffer hello = ByteBuffer.allocate(4 + 1 + 1 + raw.length + 3);
            hello.put((byte) 'C').put((byte) 'Q').put((byte) 3).put((byte) 0); // version 3, no regions
            hello.put((byte) 0); // no transport handshake (tcp has none)
            hello.put((byte) raw.length).put(raw); // control words: credits will be written here
            hello.putShort((short) 0).put((byte) 0); // receive buffer size not told; not readable
            RdmaConnection c = attacker.connect(rig.publicSide.address(), ConnectOptions.rawPrivateData(hello.array()))
                    .block(T);
            try {
                reactor.core.publisher.Flux<Long> sends = reactor.core.publisher.Flux.range(0, n)
                        .concatMap(i -> c.send(ByteBuffer.allocate(8).putLong(0xBAD0_0000_0000_0000L | i).array())
                                .thenReturn(1L).onErrorResume(e -> reactor.core.publisher.Mono.empty()), 32);
                reactor.core.publisher.Flux<Long> honest = reactor.core.publisher.Flux.range(0, 50)
                        .concatMap(i -> neighbourConn.send(ByteBuffer.allocate(8).putLong(0x600D_0000_0000_0000L | i)
                                .array()).thenReturn(1L));
                StepVerifier.create(reactor.core.publisher.Flux.merge(sends, honest).count())
                        .assertNext(x -> assertTrue(x >= 50, "sends completed " + x)).expectComplete()
                        .verify(Duration.ofSeconds(30));
                awaitTrue(() -> got.entrySet().stream().anyMatch(e -> e.getValue().size() == 50
                        && e.getValue().getFirst() >> 48 == 0x600D), () -> "the neighbour's 50 messages: " + sizes(got));
                for (var e : got.entrySet()) {
                    List<Long> l = e.getValue();
                    if (!l.isEmpty() && l.getFirst() >> 48 == 0x600D) {
                        for (int i = 0; i < l.size(); i++) {
                            assertEquals(0x600D_0000_0000_0000L | i, l.get(i), "the neighbour's message " + i);
                        }
                    } else {
                        for (int i = 0; i < l.size(); i++) {
                            assertEquals(0xBAD0_0000_0000_0000L | i, l.get(i), "the offender's message " + i
                                    + " mis-delivered or out of order");
                        }
                    }
                }
                // Either the server caught a message beyond the grant (ended and counted), or the
                // transport held the excess back until receives were posted (all delivered, in order).
                awaitTrue(() -> rig.srv.serverStats().beyondCredits() == 1
                        || got.values().stream().anyMatch(l -> l.size() == n), () -> "neither ended nor all delivered: "
                        + rig.srv.serverStats() + " " + sizes(got));
                if (rig.srv.serverStats().beyondCredits() == 1) {
                    StepVerifier.create(c.onDispose()).expectComplete().verify(T);
                }
                System.out.println("FACT fabric/tcp: a raw client sent " + n + " messages against a receive queue of"
                        + " 128; beyondCredits " + rig.srv.serverStats().beyondCredits() + ", the server received "
                        + sizes(got) + ", the offender " + (c.isDisposed() ? "ended" : "still connected"));
                org.junit.jupiter.api.Assertions.assertFalse(neighbourConn.isDisposed(), "the neighbour ended");
                StepVerifier.create(neighbourConn.read(neighbourConn.remoteRegion(0), 0, 8)).expectNextCount(1)
                        .expectComplete().verify(T);
            } finally {
                c.dispose();
                neighbourConn.disposeNow(T);
                words.close();
            }
        }
        neighbourStillWorks();
    }

    private static String sizes(java.util.Map<RdmaConnection, List<Long>> got) {
        return got.values().stream().map(l -> l.size() + (l.isEmpty() ? "" : l.getFirst() >> 48 == 0x600D
                ? " (neighbour)" : " (offender)")).toList().toString();
    }
}
