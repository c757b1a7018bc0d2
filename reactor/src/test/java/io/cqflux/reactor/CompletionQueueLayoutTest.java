package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.TransportOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The completion-queue layout on fabric/tcp as a user gets it: many connections of one loop per
 * side, the first 16 of each loop with queues of their own and the rest in groups of 32 (or
 * another setting on one side), every connection writing with immediate, writing, reading and
 * sending both ways at once; each notification and message reaches its own connection, exactly
 * once, with its own immediate or payload. Real library, real loops, both sides in this process.
 */
class CompletionQueueLayoutTest {

    private static final Duration T = Duration.ofSeconds(60);
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final int SLOT = 256;
    private static final RegionAccess[] ALL = {RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.WRITE_SRC,
        RegionAccess.READ_DST};

    private static Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1);
    }

    @Test
    void manyConnectionsInTheDefaultLayout_eachGetsItsOwnNotificationsAndMessagesOnce() throws Exception {
        int[] grouped = exchange(builder(), builder(), 40, 8);
        assertEquals(24, grouped[0], "client ends beyond the loop's first 16 share queues");
        assertEquals(24, grouped[1], "server ends beyond the loop's first 16 share queues");
    }

    /** Each side's setting is its own: the tag is the receiver's to choose, told in its hello. */
    @Test
    void aClientWithQueuesOfItsOwn_andAServerInGroupsOfTwo_routeEachOthersNotifications() throws Exception {
        int[] grouped = exchange(builder().transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "2"),
                builder().transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "1"), 24, 8);
        assertEquals(0, grouped[0]);
        assertEquals(24, grouped[1]);
    }

    /** An authenticated client shares queues as any other: the server reads its tag before deciding. */
    @Test
    void anAuthenticatedClientInGroups_reachesItsServerEndAndBack() throws Exception {
        byte[] secret = "a secret of the test".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        pair(r -> AcceptOptions.exposing(r).authenticatedBy(SharedSecretAuthenticator.of(secret)),
                r -> ConnectOptions.exposing(r).credentials(SharedSecretAuthenticator.credentials(secret)), true);
    }

    /**
     * A hello with no room left for the connection's parameters (here long credentials, which a
     * server without an authenticator ignores) goes without them: neither end shares a queue,
     * since neither peer could learn a tag, and writes with immediate arrive both ways.
     */
    @Test
    void aHelloWithoutRoomForTheTag_leavesBothEndsOnQueuesOfTheirOwn() throws Exception {
        pair(AcceptOptions::exposing, r -> ConnectOptions.exposing(r).credentials(new byte[186]), false);
    }

    /**
     * Parameters of another length than the transport's are a malformed hello: refused before
     * anything is accepted, and counted.
     */
    @Test
    void parametersOfTheWrongLength_areAMalformedHello_refusedAndCounted() {
        try (Cqflux server = builder().build(); Cqflux client = builder().build()) {
            RdmaServer srv = server.bind(new InetSocketAddress(LO, 0)).block(T);
            assertNotNull(srv);
            srv.connections().subscribe();
            byte[] hello = new io.cqflux.reactor.internal.connection.PeerHello(List.of(), new byte[0], new byte[0],
                    4096, new byte[] {1}, true, new byte[] {1, 2, 3}).encode(client.maxConnectPrivateData());
            Throwable e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                    () -> client.connect(srv.address(), ConnectOptions.rawPrivateData(hello)).block(T));
            assertTrue(String.valueOf(e.getMessage()).contains("malformed hello"), String.valueOf(e));
            assertEquals(1, srv.stats().malformedHellos());
        }
    }

    /** One pair with K = 2 on both sides, writes with immediate both ways; {@code grouped}: both ends share queues. */
    private static void pair(java.util.function.Function<Region, AcceptOptions> accept,
                             java.util.function.Function<Region, ConnectOptions> connect, boolean grouped)
            throws Exception {
        Cqflux.Builder k2 = builder().transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "2");
        try (Arena a = Arena.ofShared(); Cqflux server = k2.build(); Cqflux client = k2.build()) {
            Region sMem = server.register(a.allocate(4096, 64), ALL);
            Region cMem = client.register(a.allocate(4096, 64), ALL);
            RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), accept.apply(sMem)).block(T);
            assertNotNull(srv);
            LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            srv.connections().subscribe(accepted::add);
            RdmaConnection c = client.connect(srv.address(), connect.apply(cMem)).block(T);
            assertNotNull(c);
            RdmaConnection s = accepted.poll(T.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(s);
            assertEquals(grouped, grouped(c), "client end");
            assertEquals(grouped, grouped(s), "server end");
            reactor.test.StepVerifier.create(s.receive(m -> m.immediate()).take(1))
                    .then(() -> c.writeWithImmediate(c.remoteRegion(0), 0, cMem, 64, 8, 0x1234).subscribe())
                    .expectNext(0x1234).expectComplete().verify(T);
            reactor.test.StepVerifier.create(c.receive(m -> m.immediate()).take(1))
                    .then(() -> s.writeWithImmediate(s.remoteRegion(0), 0, sMem, 64, 8, 0x4321).subscribe())
                    .expectNext(0x4321).expectComplete().verify(T);
            c.dispose();
            c.onDispose().block(T);
        }
    }

    /** {@return how many client and server ends share a queue} after the exchange on {@code n} connections */
    private static int[] exchange(Cqflux.Builder serverBuilder, Cqflux.Builder clientBuilder, int n, int rounds)
            throws Exception {
        try (Arena a = Arena.ofShared(); Cqflux server = serverBuilder.build(); Cqflux client = clientBuilder.build()) {
            Region sMem = server.register(a.allocate((long) n * SLOT, 64), ALL);
            Region cMem = client.register(a.allocate((long) n * SLOT, 64), ALL);
            RdmaServer srv = server.bind(new InetSocketAddress(LO, 0), sMem).block(T);
            assertNotNull(srv);
            LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            srv.connections().subscribe(accepted::add);
            List<RdmaConnection> cs = new ArrayList<>();
            List<RdmaConnection> ss = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RdmaConnection c = client.connect(srv.address(), cMem).block(T);
                assertNotNull(c);
                RdmaConnection s = accepted.poll(T.toMillis(), TimeUnit.MILLISECONDS);
                assertNotNull(s, "accept " + i);
                cs.add(c);
                ss.add(s);
            }
            List<Set<String>> gotC = new ArrayList<>();
            List<Set<String>> gotS = new ArrayList<>();
            List<String> doubled = Collections.synchronizedList(new ArrayList<>());
            List<Disposable> subs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                gotC.add(collect(cs.get(i), "client " + i, subs, doubled));
                gotS.add(collect(ss.get(i), "server " + i, subs, doubled));
            }
            List<Mono<Void>> ops = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                RdmaConnection c = cs.get(i);
                RdmaConnection s = ss.get(i);
                long at = (long) i * SLOT;
                for (int j = 0; j < rounds; j++) {
                    ops.add(c.writeWithImmediate(c.remoteRegion(0), at, cMem, at, 64, (i << 16) | j));
                    ops.add(s.writeWithImmediate(s.remoteRegion(0), at, sMem, at, 64, 0x4000_0000 | (i << 16) | j));
                    ops.add(c.write(c.remoteRegion(0), at + 64, cMem, at + 64, 64));
                    ops.add(s.read(sMem, at + 128, s.remoteRegion(0), at + 128, 64));
                    ops.add(c.send(bytes(((long) i << 32) | j)));
                    ops.add(s.send(bytes(0x4000_0000_0000_0000L | ((long) i << 32) | j)));
                }
            }
            Flux.fromIterable(ops).flatMap(m -> m, 256).then().block(T);
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos(); // all arrive within milliseconds
            while (System.nanoTime() < end && (!all(gotC, 2 * rounds) || !all(gotS, 2 * rounds))) {
                Thread.sleep(10);
            }
            Thread.sleep(100); // anything misrouted or doubled would show by now
            subs.forEach(Disposable::dispose);
            for (int i = 0; i < n; i++) {
                Set<String> wantC = new TreeSet<>();
                Set<String> wantS = new TreeSet<>();
                for (int j = 0; j < rounds; j++) {
                    wantS.add(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":" + Integer.toHexString((i << 16) | j));
                    wantS.add(Opcode.RECEIVE + ":" + Long.toHexString(((long) i << 32) | j));
                    wantC.add(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":"
                            + Integer.toHexString(0x4000_0000 | (i << 16) | j));
                    wantC.add(Opcode.RECEIVE + ":" + Long.toHexString(0x4000_0000_0000_0000L | ((long) i << 32) | j));
                }
                assertEquals(wantC, gotC.get(i), "client " + i);
                assertEquals(wantS, gotS.get(i), "server " + i);
            }
            assertTrue(doubled.isEmpty(), "received twice: " + doubled);
            int[] grouped = {(int) cs.stream().filter(CompletionQueueLayoutTest::grouped).count(),
                (int) ss.stream().filter(CompletionQueueLayoutTest::grouped).count()};
            for (RdmaConnection c : cs) {
                c.dispose();
            }
            for (int i = 0; i < n; i++) {
                cs.get(i).onDispose().block(T);
                ss.get(i).onDispose().block(T);
            }
            return grouped;
        }
    }

    private static Set<String> collect(RdmaConnection c, String who, List<Disposable> subs, List<String> doubled) {
        Set<String> got = Collections.synchronizedSet(new TreeSet<>());
        subs.add(c.receive(m -> m.opcode() + ":" + (m.hasImmediate() ? Integer.toHexString(m.immediate())
                : Long.toHexString(m.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0)))).subscribe(x -> {
                    if (!got.add(x)) {
                        doubled.add(who + ": " + x);
                    }
                }));
        return got;
    }

    private static boolean all(List<Set<String>> got, int each) {
        return got.stream().allMatch(s -> s.size() >= each);
    }

    private static boolean grouped(RdmaConnection c) {
        return c.core().conn.completionQueues().get(0).sharedBy() != null;
    }

    private static byte[] bytes(long v) {
        byte[] b = new byte[8];
        MemorySegment.ofArray(b).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, v);
        return b;
    }
}
