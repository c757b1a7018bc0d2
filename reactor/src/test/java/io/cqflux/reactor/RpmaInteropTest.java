package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * cqflux against a peer written with librpma alone ({@code rpma_peer.c} beside this class,
 * compiled with gcc at test time), which speaks librpma's examples' {@code struct common_data}:
 * a cqflux client reads and writes a C server's memory and the C server writes into the client's,
 * and a C client does the same to a cqflux server; every byte is checked on the side that owns
 * it, and the C side exits non-zero on any mismatch. PERSISTENT flushes cross in both directions
 * through the peer configurations. Runs only in the Soft-RoCE lane (tag {@code rpma}).
 */
@Tag("rpma")
class RpmaInteropTest {
    static final Duration T = Duration.ofSeconds(30);
    static final int CLIENT_OFFSET = 512;
    static Path peerExe;

    Arena arena;
    Process peer;
    /** Copies the peer's output into {@link #peerOut}; ends at the output's end, once the peer exited. */
    Thread reader;
    final List<String> peerOut = Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Void> listening = new CompletableFuture<>();

    @BeforeAll
    static void compilePeer() throws Exception {
        Path dir = Files.createTempDirectory("cqflux-rpma-peer");
        Path src = dir.resolve("rpma_peer.c");
        try (InputStream in = RpmaInteropTest.class.getResourceAsStream("rpma_peer.c")) {
            Files.copy(in, src);
        }
        peerExe = dir.resolve("rpma_peer");
        Process gcc = new ProcessBuilder("gcc", "-std=gnu11", "-Wall", "-O1", "-o", peerExe.toString(), src.toString(),
                "-lrpma", "-libverbs").redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(gcc.waitFor(60, TimeUnit.SECONDS), "gcc timed out");
        assertEquals(0, gcc.exitValue(), "compiling rpma_peer.c (needs gcc and librpma-dev, libibverbs-dev):\n" + out);
    }

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        if (peer != null && peer.isAlive()) {
            peer.destroyForcibly();
        }
        arena.close();
    }

    static byte pattern(int i, int s) {
        return (byte) ((i * 31 + s) & 0xff);
    }

    static void fill(MemorySegment m, long offset, int n, int s) {
        for (int i = 0; i < n; i++) {
            m.set(ValueLayout.JAVA_BYTE, offset + i, pattern(i, s));
        }
    }

    static void assertPattern(String what, MemorySegment m, long offset, int n, int s) {
        for (int i = 0; i < n; i++) {
            assertEquals(pattern(i, s), m.get(ValueLayout.JAVA_BYTE, offset + i), what + ": byte " + i);
        }
    }

    void startPeer(String mode, InetSocketAddress where, String... more) throws IOException {
        peerOut.clear();
        List<String> cmd = new ArrayList<>(List.of(peerExe.toString(), mode, where.getAddress().getHostAddress(),
                Integer.toString(where.getPort())));
        cmd.addAll(List.of(more));
        peer = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    System.out.println("rpma_peer " + mode + "| " + line);
                    peerOut.add(line);
                    if (line.equals("listening")) {
                        listening.complete(null);
                    }
                }
            } catch (IOException e) {
                listening.completeExceptionally(e);
            }
            listening.completeExceptionally(new AssertionError("rpma_peer ended without listening: " + peerOut));
        }, "rpma-peer-reader");
        reader.setDaemon(true);
        reader.start();
    }

    String awaitPeer() throws Exception {
        assertTrue(peer.waitFor(T.toSeconds(), TimeUnit.SECONDS), "rpma_peer did not exit: " + peerOut);
        // The peer's exit does not mean the reader has taken its last lines: the pipe may still
        // hold them. The reader ends at the pipe's end (nothing else writes to it), so once it is
        // joined every line is in peerOut (a fixed pause here was a guess, short on the lane).
        reader.join(T.toMillis());
        assertFalse(reader.isAlive(), "the reader of rpma_peer's output did not reach its end: " + peerOut);
        String out = String.join("\n", peerOut);
        assertEquals(0, peer.exitValue(), "rpma_peer failed:\n" + out);
        return out;
    }

    @Test
    void cqfluxClient_readsWritesAndFlushesPersistent_intoACServer_andTheServerWritesIntoTheClient()
            throws Exception {
        InetSocketAddress where = new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort());
        startPeer("server", where);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = Cqflux.builder().transport(TransportChoice.RPMA)
                .localAddress(RpmaReactiveContractTest.address()).build()) {
            MemorySegment mem = arena.allocate(4096, 4096);
            Region local = cq.register(mem, RegionAccess.READ_DST, RegionAccess.WRITE_SRC, RegionAccess.WRITE_DST,
                    RegionAccess.RECV, RegionAccess.FLUSH_TYPE_VISIBILITY);
            byte[] mine = RpmaCommonData.encode(local.rawDescriptor(), cq.peerConfigurationDescriptor(), CLIENT_OFFSET);
            RdmaConnection c = cq.connect(where, ConnectOptions.rawPrivateData(mine)).block(T);
            // the server writes into our memory, then sends one byte: our receive must be posted
            StepVerifier.create(c.receive().next())
                    .assertNext(m -> assertEquals(1, m.data().length))
                    .expectComplete().verify(T);
            assertPattern("pattern 3 written and flushed by the C server", mem, CLIENT_OFFSET, 64, 3);

            byte[] accept = c.peerPrivateData();
            assertEquals(196, accept.length, "RDMA CM pads accept data to 196 bytes, delivered as is");
            RpmaCommonData theirs = RpmaCommonData.decode(accept);
            StepVerifier.create(c.applyPeerConfiguration(theirs.peerConfigDescriptor())).expectComplete().verify(T);
            PeerRegion remote = c.remoteRegion(theirs.mrDescriptor(), RegionAccess.READ_SRC, RegionAccess.WRITE_DST);
            assertEquals(4096, remote.size());
            assertEquals(FlushType.PERSISTENT, remote.strongestFlush());

            StepVerifier.create(c.read(local, 0, remote, theirs.dataOffset(), 1024)).expectComplete().verify(T);
            assertPattern("pattern 1 read from the C server", mem, 0, 1024, 1);
            fill(mem, 2048, 1024, 2);
            StepVerifier.create(c.durableWrite(remote, theirs.dataOffset() + 2048, local, 2048, 1024))
                    .expectComplete().verify(T);
            c.dispose();
            c.onDispose().block(T);
        }
        String out = awaitPeer();
        assertTrue(out.contains("server: ok pattern 2 written and flushed by the client at 2048"), out);
        assertTrue(out.contains("server: verified"), out);
    }

    @Test
    void cClient_readsWritesAndFlushesPersistent_intoACqfluxServer_andTheServerWritesIntoTheClient()
            throws Exception {
        InetSocketAddress where = new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort());
        try (Cqflux cq = Cqflux.builder().transport(TransportChoice.RPMA).directWriteToPersistentMemory(true)
                .localAddress(RpmaReactiveContractTest.address()).build()) {
            MemorySegment mem = arena.allocate(4096, 4096);
            fill(mem, 0, 1024, 1);
            Region region = cq.register(mem, RegionAccess.READ_SRC, RegionAccess.WRITE_DST, RegionAccess.WRITE_SRC,
                    RegionAccess.SEND, RegionAccess.FLUSH_TYPE_PERSISTENT, RegionAccess.FLUSH_TYPE_VISIBILITY);
            byte[] mine = RpmaCommonData.encode(region.rawDescriptor(), cq.peerConfigurationDescriptor(), 0);
            CompletableFuture<RpmaCommonData> request = new CompletableFuture<>();
            RdmaServer server = cq.bind(where, AcceptOptions.rawPrivateData(data -> {
                assertEquals(56, data.length, "RDMA CM pads request data to 56 bytes, delivered as is");
                request.complete(RpmaCommonData.decode(data));
                return AcceptDecision.accept(mine);
            })).block(T);
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            server.connections().subscribe(accepted::complete);
            startPeer("client", where);

            RdmaConnection c = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
            RpmaCommonData theirs = request.get();
            assertEquals(CLIENT_OFFSET, theirs.dataOffset());
            StepVerifier.create(c.applyPeerConfiguration(theirs.peerConfigDescriptor())).expectComplete().verify(T);
            PeerRegion remote = c.remoteRegion(theirs.mrDescriptor(), RegionAccess.WRITE_DST);
            assertEquals(FlushType.VISIBILITY, remote.strongestFlush(), "the C client registered VISIBILITY only");
            fill(mem, 3072, 64, 3);
            StepVerifier.create(c.durableWrite(remote, theirs.dataOffset(), region, 3072, 64)
                            .then(c.send(region, 3072, 1)))
                    .expectComplete().verify(T);
            // the C client reads, writes and flushes, then disconnects: CLOSED ends the connection
            c.onDispose().block(T);
            String out = awaitPeer();
            assertTrue(out.contains("client: ok pattern 3 written by the server at 512"), out);
            assertTrue(out.contains("client: ok pattern 1 read from the server"), out);
            assertTrue(out.contains("write and flush PERSISTENT completed"), out);
            assertPattern("pattern 2 written and flushed by the C client", mem, 2048, 1024, 2);
            assertPattern("pattern 1 untouched", mem, 0, 1024, 1);
        }
    }

    static final long I_M_DONE = -1L;

    static Cqflux rpma() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address()).build();
    }

    /**
     * Example 08's client: no private data, a ping-pong of counters, then I_M_DONE sent with
     * "completion on error" only and a disconnect at once. The server is the natural pattern,
     * {@code receive().takeWhile(...).concatMap(reply)}, subscribed only once the connection is
     * handed over: the receives posted before the accept take the first message, the prefetch
     * the last. Several connections in a row, since a lost last message was a race.
     */
    @Test
    void cExampleClient_lastMessageSentAsItDisconnects_arrives_withTheNaturalReceivePattern() throws Exception {
        int connections = 5;
        int rounds = 8;
        PingPong r = pingPong(AcceptOptions.rawPrivateData(data -> {
            assertTrue(RpmaCommonData.tryDecode(data).isEmpty(), "example 08's client sends no common_data");
            return AcceptDecision.accept(new byte[0]);
        }), connections, rounds);
        for (int i = 0; i < connections; i++) {
            List<Long> values = r.values().get(i);
            assertEquals(rounds, values.size(), "connection " + i + ": every counter and I_M_DONE: " + values);
            assertEquals(I_M_DONE, values.get(rounds - 1), "connection " + i + ": the last message: " + values);
        }
        // Both sides run on the one rxe device: a send that found no posted receive would be
        // counted as an RNR NAK sent (send_rnr_err) and received (rcvd_rnr_err).
        assertEquals(0, r.rnrNaks(), "RNR NAKs: a message found no posted receive");
    }

    /** What the server saw of each connection, and the device's RNR NAK count meanwhile (-1 where unknown). */
    record PingPong(List<List<Long>> values, long rnrNaks) {
    }

    static long rnrNaks() throws IOException {
        Path dir = Path.of("/sys/class/infiniband/rxe0/ports/1/hw_counters");
        if (!Files.isDirectory(dir)) {
            return -1;
        }
        return Long.parseLong(Files.readString(dir.resolve("send_rnr_err")).trim())
                + Long.parseLong(Files.readString(dir.resolve("rcvd_rnr_err")).trim());
    }

    PingPong pingPong(AcceptOptions options, int connections, int rounds) throws Exception {
        InetSocketAddress where = new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort());
        List<List<Long>> all = new ArrayList<>();
        long rnrBefore = rnrNaks();
        try (Cqflux cq = rpma()) {
            MemorySegment mem = arena.allocate(4096, 4096);
            Region replies = cq.register(mem, RegionAccess.SEND);
            List<CompletableFuture<List<Long>>> seen = Collections.synchronizedList(new ArrayList<>());
            RdmaServer server = cq.bind(where, options).block(T);
            server.connections().subscribe(c -> {
                int slot = seen.size() * 8;
                CompletableFuture<List<Long>> got = new CompletableFuture<>();
                seen.add(got);
                List<Long> values = Collections.synchronizedList(new ArrayList<>());
                // the natural pattern, subscribed only once the connection is handed over
                c.receive(m -> m.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0))
                        .doOnNext(values::add)
                        .takeWhile(v -> v != I_M_DONE)
                        .concatMap(v -> {
                            mem.set(ValueLayout.JAVA_LONG, slot, v + 1);
                            return c.send(replies, slot, 8);
                        })
                        .subscribe(null, got::completeExceptionally, () -> got.complete(values));
            });
            for (int i = 0; i < connections; i++) {
                startPeer("pingclient", where, Integer.toString(rounds));
                String out = awaitPeer();
                assertTrue(out.contains("pingclient: verified"), out);
                all.add(seen.get(i).get(T.toMillis(), TimeUnit.MILLISECONDS));
            }
        }
        long rnrAfter = rnrNaks();
        return new PingPong(all, rnrBefore < 0 ? -1 : rnrAfter - rnrBefore);
    }

    /**
     * Examples 02 and 05's clients send no private data (56 zero bytes arrive) and expect the
     * server's whole 28-byte common_data: a server that recognises instead of decoding serves
     * them, and a client of that kind reads and writes its region.
     */
    @Test
    void cClientWithoutPrivateData_isRecognised_andGetsTheWhole28ByteStruct() throws Exception {
        InetSocketAddress where = new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort());
        try (Cqflux cq = rpma()) {
            MemorySegment mem = arena.allocate(4096, 4096);
            fill(mem, 0, 1024, 1);
            Region region = cq.register(mem, RegionAccess.READ_SRC, RegionAccess.WRITE_DST,
                    RegionAccess.FLUSH_TYPE_VISIBILITY);
            byte[] mine = RpmaCommonData.encode(region.rawDescriptor(), cq.peerConfigurationDescriptor(), 0);
            assertEquals(RpmaCommonData.SIZE, mine.length);
            CompletableFuture<byte[]> request = new CompletableFuture<>();
            RdmaServer server = cq.bind(where, AcceptOptions.rawPrivateData(data -> {
                request.complete(data);
                return AcceptDecision.accept(mine);
            })).block(T);
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            server.connections().subscribe(accepted::complete);
            startPeer("zeroclient", where);
            RdmaConnection c = accepted.get(T.toMillis(), TimeUnit.MILLISECONDS);
            byte[] data = request.get();
            assertEquals(56, data.length);
            assertTrue(RpmaCommonData.tryDecode(data).isEmpty(), "56 zero bytes are no common_data");
            c.onDispose().block(T);
            String out = awaitPeer();
            assertTrue(out.contains("zeroclient: sizeof common_data " + RpmaCommonData.SIZE), out);
            assertTrue(out.contains("zeroclient: verified"), out);
            assertPattern("pattern 2 written and flushed by the C client", mem, 2048, 1024, 2);
        }
    }

    /**
     * A C server's region registered READ_SRC only: its descriptor's usage byte says so; the
     * region made from it takes that access, and a claim of WRITE_DST is refused naming both.
     */
    @Test
    void cServerReadOnlyRegion_accessComesFromTheDescriptor_andAClaimedWriteIsRefused() throws Exception {
        InetSocketAddress where = new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort());
        startPeer("roserver", where);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = rpma()) {
            MemorySegment mem = arena.allocate(4096, 4096);
            Region local = cq.register(mem, RegionAccess.READ_DST);
            RdmaConnection c = cq.connect(where, ConnectOptions.rawPrivateData(new byte[0])).block(T);
            RpmaCommonData theirs = RpmaCommonData.tryDecode(c.peerPrivateData()).orElseThrow();
            PeerRegion remote = c.remoteRegion(theirs.mrDescriptor());
            assertEquals(java.util.Set.of(RegionAccess.READ_SRC), remote.access());
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> c.remoteRegion(theirs.mrDescriptor(), RegionAccess.READ_SRC, RegionAccess.WRITE_DST));
            assertTrue(e.getMessage().contains("WRITE_DST") && e.getMessage().contains("[READ_SRC]")
                    && e.getMessage().contains("0x1"), e.getMessage());
            StepVerifier.create(c.read(local, 0, remote, 0, 1024)).expectComplete().verify(T);
            assertPattern("pattern 1 read from the C server", mem, 0, 1024, 1);
            c.dispose();
            c.onDispose().block(T);
        }
        String out = awaitPeer();
        assertTrue(out.contains("roserver: verified"), out);
    }

    // ---------------------------------------------------------------- docs/interop.md, as written

    /** {@return the NUL-terminated string at the start of some private data} */
    // tag::c-string[]
    static String cString(byte[] data) {
        int n = 0;
        while (n < data.length && data[n] != 0) {
            n++;
        }
        return new String(data, 0, n, StandardCharsets.US_ASCII);
    }
    // end::c-string[]

    InetSocketAddress freeAddress() {
        return new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort());
    }

    @Test
    void guide01_cqfluxServer_greetsExample01sClient() throws Exception {
        InetSocketAddress address = freeAddress();
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (Cqflux cq = rpma()) {
            // tag::server-01[]
            RdmaServer server = cq.bind(address, AcceptOptions.rawPrivateData(
                    request -> AcceptDecision.accept("Hello client!\0".getBytes(StandardCharsets.US_ASCII))))
                    .block();
            server.connections().subscribe(c -> log.add(cString(c.peerPrivateData())));
            // end::server-01[]
            startPeer("connclient", address);
            String out = awaitPeer();
            assertTrue(out.contains("connclient: the peer says: Hello client!"), out);
            assertTrue(out.contains("connclient: verified"), out);
            assertEquals(List.of("Hello server!"), log);
        }
    }

    @Test
    void guide01_cqfluxClient_greetsExample01sServer() throws Exception {
        InetSocketAddress address = freeAddress();
        startPeer("connserver", address);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = rpma()) {
            // tag::client-01[]
            RdmaConnection c = cq.connect(address, ConnectOptions.rawPrivateData(
                    "Hello server!\0".getBytes(StandardCharsets.US_ASCII))).block();
            String greeting = cString(c.peerPrivateData()); // "Hello client!"
            c.dispose();
            // end::client-01[]
            assertEquals("Hello client!", greeting);
            c.onDispose().block(T);
        }
        String out = awaitPeer();
        assertTrue(out.contains("connserver: the peer says: Hello server!"), out);
        assertTrue(out.contains("connserver: verified"), out);
    }

    @Test
    void guide02_cqfluxClient_readsExample02sServer() throws Exception {
        InetSocketAddress address = freeAddress();
        startPeer("roserver", address);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = rpma()) {
            MemorySegment memory = arena.allocate(4096, 4096);
            Region local = cq.register(memory, RegionAccess.READ_DST);
            // tag::client-02[]
            RdmaConnection c = cq.connect(address, ConnectOptions.rawPrivateData(new byte[0])).block();
            RpmaCommonData theirs = RpmaCommonData.tryDecode(c.peerPrivateData())
                    .orElseThrow(() -> new IllegalStateException("the server sent no common_data"));
            PeerRegion remote = c.remoteRegion(theirs.mrDescriptor()); // READ_SRC: what the server registered
            c.read(local, 0, remote, theirs.dataOffset(), 1024).block();
            // end::client-02[]
            assertPattern("pattern 1 read from example 02's server", memory, 0, 1024, 1);
            c.dispose();
            c.onDispose().block(T);
        }
        assertTrue(awaitPeer().contains("roserver: verified"));
    }

    @Test
    void guide05_cqfluxClient_writesPersistentIntoExample05sServer() throws Exception {
        InetSocketAddress address = freeAddress();
        startPeer("pmemserver", address);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = rpma()) {
            MemorySegment memory = arena.allocate(4096, 4096);
            fill(memory, 0, 1024, 2);
            Region local = cq.register(memory, RegionAccess.WRITE_SRC);
            // tag::client-05[]
            RdmaConnection c = cq.connect(address, ConnectOptions.rawPrivateData(new byte[0])).block();
            RpmaCommonData theirs = RpmaCommonData.tryDecode(c.peerPrivateData()).orElseThrow();
            c.applyPeerConfiguration(theirs.peerConfigDescriptor()).block(); // its direct write to pmem
            PeerRegion remote = c.remoteRegion(theirs.mrDescriptor());
            c.durableWrite(remote, theirs.dataOffset(), local, 0, 1024).block(); // write + PERSISTENT flush
            // end::client-05[]
            assertEquals(FlushType.PERSISTENT, remote.strongestFlush());
            c.dispose();
            c.onDispose().block(T);
        }
        String out = awaitPeer();
        assertTrue(out.contains("pmemserver: ok pattern 2 written and flushed by the client at 0"), out);
        assertTrue(out.contains("pmemserver: verified"), out);
    }

    @Test
    void guide05_cqfluxServer_servesExample02And05sClient() throws Exception {
        InetSocketAddress address = freeAddress();
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (Cqflux cq = rpma()) {
            MemorySegment memory = arena.allocate(4096, 4096);
            fill(memory, 0, 1024, 1);
            // tag::server-05[]
            Region region = cq.register(memory, RegionAccess.READ_SRC, RegionAccess.WRITE_DST,
                    RegionAccess.FLUSH_TYPE_VISIBILITY);
            byte[] commonData = RpmaCommonData.encode(region.rawDescriptor(), cq.peerConfigurationDescriptor(), 0);
            RdmaServer server = cq.bind(address, AcceptOptions.rawPrivateData(request -> {
                // the examples' clients send none: 56 zero bytes arrive, which are no common_data
                RpmaCommonData.tryDecode(request).ifPresent(theirs -> log.add("client sent " + theirs));
                return AcceptDecision.accept(commonData);
            })).block();
            // end::server-05[]
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            server.connections().subscribe(accepted::complete);
            startPeer("zeroclient", address);
            accepted.get(T.toMillis(), TimeUnit.MILLISECONDS).onDispose().block(T);
            String out = awaitPeer();
            assertTrue(out.contains("zeroclient: verified"), out);
            assertPattern("pattern 2 written and flushed by example 05's client", memory, 2048, 1024, 2);
            assertEquals(List.of(), log);
        }
    }

    @Test
    void guide08_cqfluxServer_answersExample08sClient() throws Exception {
        InetSocketAddress address = freeAddress();
        try (Cqflux cq = rpma()) {
            MemorySegment replyMemory = arena.allocate(64, 64);
            // tag::server-08[]
            Region replies = cq.register(replyMemory, RegionAccess.SEND);
            RdmaServer server = cq.bind(address, AcceptOptions.rawPrivateData(
                    request -> AcceptDecision.accept(new byte[0]))).block();
            server.connections().subscribe(c -> c.receive(m -> m.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0))
                    .takeWhile(counter -> counter != I_M_DONE)
                    .concatMap(counter -> {
                        replyMemory.set(ValueLayout.JAVA_LONG, 0, counter + 1);
                        return c.send(replies, 0, 8);
                    })
                    .subscribe());
            // end::server-08[]
            startPeer("pingclient", address, "8");
            String out = awaitPeer();
            assertTrue(out.contains("pingclient: sent I_M_DONE after 7 rounds, last counter 1007"), out);
            assertTrue(out.contains("pingclient: verified"), out);
        }
    }

    @Test
    void guide08_cqfluxClient_pingsExample08sServer() throws Exception {
        InetSocketAddress address = freeAddress();
        startPeer("pingserver", address);
        listening.get(T.toMillis(), TimeUnit.MILLISECONDS);
        try (Cqflux cq = rpma()) {
            MemorySegment outMemory = arena.allocate(64, 64);
            Region out = cq.register(outMemory, RegionAccess.SEND);
            // tag::client-08[]
            RdmaConnection c = cq.connect(address, ConnectOptions.rawPrivateData(new byte[0])).block();
            java.util.function.LongFunction<reactor.core.publisher.Mono<Void>> send = v -> reactor.core.publisher.Mono
                    .defer(() -> {
                        outMemory.set(ValueLayout.JAVA_LONG, 0, v);
                        return c.send(out, 0, 8);
                    });
            // receives are posted from the connect on: an answer that comes before receive() is kept
            List<Long> answers = send.apply(1000)
                    .thenMany(c.receive(m -> m.data().get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).take(7))
                    .concatMap(v -> send.apply(v < 1007 ? v : I_M_DONE).thenReturn(v))
                    .collectList().block();
            c.dispose();
            // end::client-08[]
            assertEquals(List.of(1001L, 1002L, 1003L, 1004L, 1005L, 1006L, 1007L), answers);
            c.onDispose().block(T);
        }
        String out = awaitPeer();
        assertTrue(out.contains("pingserver: I_M_DONE after 7 answers"), out);
        assertTrue(out.contains("pingserver: verified"), out);
    }
}
