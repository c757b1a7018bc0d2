package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link HostilePeerContract} on fabric/tcp over 127.0.0.1, on the host; with the cases that
 * need what only tcp has: keys from the whole 64-bit space and raw TCP sockets on the listener.
 *
 * <p>Bounded: one attacker connection per forged key, 40 in all, 64 bytes each, loopback only.
 */
@Tag("hostile-peer")
class HostilePeerTest extends HostilePeerContract {

    @Override
    Cqflux.Builder builder(String role) {
        return Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(InetAddress.getLoopbackAddress())
                .threadNamePrefix("cqflux-hostile-" + role);
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    @Override
    boolean offersScopedKeys() {
        return true;
    }

    /** None: tcp has no RDMA CM. */
    @Override
    int cmIdsFrom(InetSocketAddress server) {
        return -1;
    }

    /**
     * No: libfabric 1.17's tcp sends a connect's request as the client's event queue is read
     * (fi_connect(3) starts the socket's connect and returns); measured here, nothing reaches the
     * server until the client's loop runs again.
     */
    @Override
    boolean stalledRequestReachesTheServer() {
        return false;
    }

    /** The fabric raw form: key, base, length, 8 bytes each. */
    @Override
    int rawDescriptorLength() {
        return 24;
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
    String rejectReasonPrefix(String reason) {
        return reason; // fi_reject(3) carries it
    }

    @Override
    byte[][] malformedHellos() {
        return malformedHellosAsSent();
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

    /**
     * Hellos well-formed as hellos whose parts are not: a region descriptor of 3 bytes, 32 bytes of
     * garbage as one, a control-words descriptor of 5 bytes, a handshake of 7 bytes on a transport
     * that has none. They are refused before anything is accepted and counted as malformed hellos;
     * before, each was accepted (control words and exposures registered for it, the authenticator
     * asked) and then ended once established, counted nowhere.
     */
    @Test
    void wellFormedHellosWithMalformedParts_areRefusedBeforeTheAccept_andCounted() {
        byte[] garbage = new byte[32];
        new java.util.Random(11).nextBytes(garbage);
        byte[] garbageRegion = new byte[4 + 2 + 32 + 2];
        garbageRegion[0] = 'C';
        garbageRegion[1] = 'Q';
        garbageRegion[2] = 3;
        garbageRegion[3] = 1;
        garbageRegion[5] = 32;
        System.arraycopy(garbage, 0, garbageRegion, 6, 32);
        byte[][] hellos = {
            {'C', 'Q', 3, 1, 0, 3, 1, 2, 3, 0, 0},          // one region of 3 bytes, no handshake, no control words
            garbageRegion,                                  // one region of 32 random bytes
            {'C', 'Q', 3, 0, 0, 5, 1, 2, 3, 4, 5},          // control words' descriptor of 5 bytes
            {'C', 'Q', 3, 0, 7, 1, 2, 3, 4, 5, 6, 7, 0},    // a handshake of 7 bytes: fabric has none
        };
        io.cqflux.reactor.RdmaServer s = server.bind(listenAddress(), io.cqflux.reactor.AcceptOptions.exposing(readOnly))
                .block(T);
        try {
            for (byte[] hello : hellos) {
                reactor.test.StepVerifier.create(attacker.connect(s.address(),
                                io.cqflux.reactor.ConnectOptions.rawPrivateData(hello)))
                        .expectErrorSatisfies(e -> {
                            io.cqflux.core.ConnectionException c = org.junit.jupiter.api.Assertions.assertInstanceOf(
                                    io.cqflux.core.ConnectionException.class, e,
                                    () -> "hello " + java.util.HexFormat.of().formatHex(hello));
                            assertEquals(io.cqflux.core.ConnectionEvent.REJECTED, c.event(), c::toString);
                            assertTrue(c.getMessage().contains("malformed hello: "), c::getMessage);
                        })
                        .verify(T);
            }
            assertEquals(hellos.length, s.stats().malformedHellos(), () -> "" + s.stats());
            assertEquals(0, s.stats().exposures(), () -> "" + s.stats());
            aProperClientIsServedBy(s.address());
        } finally {
            s.disposeNow(T);
        }
        neighbourStillWorks();
    }

    /**
     * Clients that send part of a connection request (libfabric 1.17 tcp's 32-byte header, which
     * announces 4 bytes of private data) and then nothing, their sockets kept open. The provider
     * reads requests with a blocking recv inside the listener's event-queue read, which the
     * server's loop makes: before RequestReadBound one such socket held that loop, and every
     * connection it served, for as long as the socket stayed open. Now each holds it at most the
     * bound (2 ms, rounded up to the kernel's tick): the neighbour and a proper client are served
     * at once, and once the sockets close the loop does not spin on them.
     */
    @Test
    void partialConnectionRequests_holdTheServersLoopNoLongerThanTheBound() throws Exception {
        byte[] header = new byte[32];
        header[0] = 3;
        header[3] = 4;
        header[24] = 1;
        List<Socket> partial = new ArrayList<>();
        long fds0 = openFds();
        try {
            for (int i = 0; i < 16; i++) {
                Socket k = new Socket(publicServer.address().getAddress(), publicServer.address().getPort());
                partial.add(k);
                k.getOutputStream().write(header);
                k.getOutputStream().flush();
            }
            Thread.sleep(100);
            long t0 = System.nanoTime();
            neighbourStillWorks();
            aProperClientIsStillServed();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("FACT fabric/tcp: beside 16 partial connection requests, the neighbour and a proper"
                    + " client were served in %d ms%n", ms);
            assertTrue(ms < 3_000, "served after " + ms + " ms");
        } finally {
            for (Socket k : partial) {
                k.close();
            }
        }
        Thread.sleep(200);
        io.cqflux.epoll.LoopStats before = server.loopStats().getFirst();
        Thread.sleep(500);
        io.cqflux.epoll.LoopStats after = server.loopStats().getFirst();
        long wakeups = after.wakeups() - before.wakeups();
        System.out.printf("FACT fabric/tcp: after the partial requests' sockets closed, the server's first loop woke %d"
                + " times in 500 ms; open fds %d before, %d after%n", wakeups, fds0, openFds());
        assertTrue(wakeups < 200, "the server's loop spins on closed sockets: " + wakeups + " wake-ups in 500 ms");
        aProperClientIsStillServed();
        neighbourStillWorks();
    }

    /**
     * A flood of partial connection requests: 128 sockets opened at once, each sending the 32-byte
     * header and then nothing. Each holds the provider's read of the request up to the bound
     * (above), and that read now runs on the listener's own thread (RequestReader), not on the
     * server's loop: the loop serves its connections meanwhile, with few units of work over 1 ms
     * (a preempted loop thread's), where reading the flood on the loop held it over 1 ms about once
     * per two sockets (33 of 64 measured with the reads on the loop).
     */
    @Test
    void aFloodOfPartialConnectionRequests_isReadOffTheServersLoop() throws Exception {
        final int flood = 128;
        byte[] header = new byte[32];
        header[0] = 3;
        header[3] = 4;
        header[24] = 1;
        List<Socket> partial = new ArrayList<>();
        io.cqflux.epoll.LoopStats before = server.loopStats().getFirst();
        try {
            for (int i = 0; i < flood; i++) {
                Socket k = new Socket(publicServer.address().getAddress(), publicServer.address().getPort());
                partial.add(k);
                k.getOutputStream().write(header);
                k.getOutputStream().flush();
            }
            long t0 = System.nanoTime();
            aProperClientIsStillServed();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            neighbourStillWorks();
            io.cqflux.epoll.LoopStats after = server.loopStats().getFirst();
            long over10 = after.unitsOver10ms() - before.unitsOver10ms();
            long over1 = after.unitsOver1ms() - before.unitsOver1ms();
            System.out.printf("FACT fabric/tcp: %d partial connection requests at once: a proper client served after"
                    + " %d ms; the server's listening loop held over 10 ms %d times, over 1 ms %d times%n", flood, ms,
                    over10, over1);
            assertTrue(over1 < flood / 4, "the server's loop was held over 1 ms " + over1 + " times by " + flood
                    + " partial requests");
            assertTrue(over10 <= 2, "the server's loop was held over 10 ms " + over10 + " times by the flood");
        } finally {
            for (Socket k : partial) {
                k.close();
            }
        }
    }

    @Test
    void scopedConnections_leaveNoFileDescriptorsBehind_andServeMessagesFromTheSharedReceivePool() throws Exception {
        // Each scoped connection's domain closes after its endpoint, CQs, control words and
        // exposures; its receives come from the shared pool, registered in the instance's domain
        // (tcp needs no local descriptor of the endpoint's own domain).
        Region r = server.register(filled(0x66), RegionAccess.READ_SRC);
        io.cqflux.reactor.RdmaServer s = server.bind(listenAddress(), io.cqflux.reactor.AcceptOptions.exposing(r)
                .withKeysScopedToConnection(true).withSharedReceivePool(), c -> c.receive()
                .concatMap(m -> c.send(m.data())).then()).block(T);
        try {
            echo(s); // the first connection opens what stays for the instance's life (the loops' event queues)
            long before = openFds();
            for (int i = 0; i < 16; i++) {
                echo(s);
            }
            awaitTrue(() -> s.stats().exposures() == 0, () -> "exposures left: " + s.stats());
            awaitTrue(() -> openFds() <= before, () -> "file descriptors left behind by 16 scoped connections: "
                    + before + " before, " + openFds() + " after");
        } finally {
            s.disposeNow(T);
            r.close();
        }
    }

    /** One client of {@code s} reads its exposure, sends a message and reads the echo, then leaves. */
    private void echo(io.cqflux.reactor.RdmaServer s) {
        io.cqflux.reactor.RdmaConnection c = attacker.connect(s.address()).block(T);
        try {
            reactor.test.StepVerifier.create(c.read(c.remoteRegion(0), 0, 8))
                    .assertNext(b -> assertEquals(0x66, b[0] & 0xff)).expectComplete().verify(T);
            byte[] hello = "scoped".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            reactor.test.StepVerifier.create(c.send(hello).thenMany(c.receive().take(1)))
                    .assertNext(m -> org.junit.jupiter.api.Assertions.assertArrayEquals(hello, m.data()))
                    .expectComplete().verify(T);
        } finally {
            c.disposeNow(T);
        }
    }

    private static long openFds() {
        try (java.util.stream.Stream<java.nio.file.Path> fds = java.nio.file.Files.list(java.nio.file.Path.of(
                "/proc/self/fd"))) {
            return fds.count();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
