package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * One-sided operations, regions and lifecycle as a hostile user drives them, over libfabric's tcp
 * provider on loopback: extreme and malformed arguments refused before posting, memory kept while
 * the NIC may use it, closed things refusing further use.
 */
class OneSidedHostileTest {
    FaultRig rig;
    /** Lets a loop go that {@link #blockServerLoop()} holds; tearDown opens it too. */
    final CountDownLatch unblock = new CountDownLatch(1);

    @BeforeEach
    void setUp() {
        rig = new FaultRig();
    }

    @AfterEach
    void tearDown() {
        unblock.countDown();
        rig.close();
    }

    /** Occupies the server's loop (fabric/tcp: it progresses the client's operations) until the latch opens. */
    void blockServerLoop() throws InterruptedException {
        CountDownLatch blocked = new CountDownLatch(1);
        rig.server.nextLoop().execute(() -> {
            blocked.countDown();
            try {
                unblock.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(blocked.await(10, TimeUnit.SECONDS));
    }

    private static Throwable failureOf(Supplier<Mono<?>> call) {
        try {
            call.get().block(FaultRig.T);
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("no error");
    }

    private static void assertIae(Throwable e, String... words) {
        assertInstanceOf(IllegalArgumentException.class, e, String.valueOf(e));
        for (String w : words) {
            assertTrue(e.getMessage().contains(w), "'" + w + "' not in: " + e.getMessage());
        }
    }

    @Test
    void operations_atTheExtremesOfOffsetAndLength_areRefusedNamingTheValue_andTheConnectionCarriesOn() {
        PeerRegion r = rig.remote();
        Region l = rig.local;
        long s = FaultRig.SIZE;
        assertIae(failureOf(() -> rig.conn.write(r, 0, l, -1, 8)), "-1");
        assertIae(failureOf(() -> rig.conn.write(r, Long.MAX_VALUE, l, 0, 8)), String.valueOf(Long.MAX_VALUE));
        assertIae(failureOf(() -> rig.conn.write(r, 0, l, 0, Long.MAX_VALUE)), String.valueOf(Long.MAX_VALUE));
        assertIae(failureOf(() -> rig.conn.write(r, 0, l, 0, 0)), "length 0");
        assertIae(failureOf(() -> rig.conn.write(r, s - 4, l, 0, 8)), String.valueOf(s));
        assertIae(failureOf(() -> rig.conn.read(l, 0, r, 0, -1)), "-1");
        assertIae(failureOf(() -> rig.conn.read(l, 1, r, 0, s)), String.valueOf(s));
        assertIae(failureOf(() -> rig.conn.flush(r, s + 1, 0, FlushType.VISIBILITY)), String.valueOf(s));
        assertIae(failureOf(() -> rig.conn.flush(r, 0, -1, FlushType.VISIBILITY)), "-1");
        assertIae(failureOf(() -> rig.conn.durableWrite(r, 0, l, 0, 8, FlushType.PERSISTENT)), "PERSISTENT");
        assertIae(failureOf(() -> rig.conn.writeWithImmediate(r, -8, l, 0, 8, 1)), "-8");
        assertIae(failureOf(() -> rig.conn.writeWithImmediate(r, 0, l, 0, 0, 1)), "0");
        assertIae(failureOf(() -> rig.conn.writeWithImmediate(r, 0, l, s, 1, -1)), String.valueOf(s));
        // The alignment is checked before the transport's capability (reliability.md's row).
        assertIae(failureOf(() -> rig.conn.atomicWrite(r, 3, 1)), "3");
        assertInstanceOf(UnsupportedCapabilityException.class, failureOf(() -> rig.conn.atomicWrite(r, 8, 1)));
        // the connection still works
        rig.conn.write(r, 0, l, 0, 8).block(FaultRig.T);
        assertEquals(0, rig.conn.inFlight());
        assertEquals(0, l.inFlight());
    }

    @Test
    void flushOfZeroBytesAtTheRegionsEnd_andADurableWriteOfItsLastByte_complete() {
        PeerRegion r = rig.remote();
        rig.conn.flush(r, FaultRig.SIZE, 0, FlushType.VISIBILITY).block(FaultRig.T);
        rig.conn.flush(r, 0, 0, FlushType.VISIBILITY).block(FaultRig.T);
        rig.conn.durableWrite(r, FaultRig.SIZE - 1, rig.local, 0, 1).block(FaultRig.T);
        rig.conn.write(r, 0, rig.local, 0, 8).block(FaultRig.T);
    }

    @Test
    void stagedForms_badLengthsAndRanges_areRefusedLeasingNothing_andReadOnlyOrDirectBuffersAreSources() {
        PeerRegion r = rig.remote();
        int bs = rig.client.buffers().bufferSize();
        assertIae(failureOf(() -> rig.conn.write(r, 0, new byte[0])), "0");
        assertIae(failureOf(() -> rig.conn.write(r, 0, ByteBuffer.allocate(0))), "0");
        assertIae(failureOf(() -> rig.conn.write(r, -1, new byte[8])), "-1");
        assertIae(failureOf(() -> rig.conn.write(r, 0, new byte[bs + 1])), String.valueOf(bs));
        assertIae(failureOf(() -> rig.conn.read(r, 0, 0)), "0");
        assertIae(failureOf(() -> rig.conn.read(r, 0, -5)), "-5");
        assertIae(failureOf(() -> rig.conn.read(r, FaultRig.SIZE - 4, 8)), String.valueOf(FaultRig.SIZE));
        assertIae(failureOf(() -> rig.conn.read(r, 0, bs + 1)), String.valueOf(bs));
        assertIae(failureOf(() -> rig.conn.durableWrite(r, FaultRig.SIZE, new byte[1])), String.valueOf(FaultRig.SIZE));
        assertThrows(NullPointerException.class, () -> rig.conn.write(r, 0, (byte[]) null));
        assertEquals(0, rig.client.buffers().leased());
        // read-only heap and direct buffers are data sources like any other
        ByteBuffer ro = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).asReadOnlyBuffer();
        rig.conn.write(r, 64, ro).block(FaultRig.T);
        ByteBuffer direct = ByteBuffer.allocateDirect(16).put(new byte[16]).flip().position(8);
        rig.conn.write(r, 72, direct).block(FaultRig.T);
        assertEquals(8, direct.position());
        byte[] back = rig.conn.read(r, 64, 8).block(FaultRig.T);
        assertEquals(5, back[4]);
        assertEquals(0, rig.client.buffers().leased());
    }

    @Test
    void leaseForms_refusedAtSubscription_giveTheLeaseBack_andASecondSubscriptionIsRefused() {
        PeerRegion r = rig.remote();
        BufferPool pool = rig.client.buffers();
        BufferLease l1 = pool.acquire().block(FaultRig.T);
        assertIae(failureOf(() -> rig.conn.write(r, 0, l1, 0)), "0");
        assertFalse(l1.isHeld());
        assertEquals(0, pool.leased());
        BufferLease l2 = pool.acquire().block(FaultRig.T);
        assertIae(failureOf(() -> rig.conn.write(r, 0, l2, l2.size() + 1)), String.valueOf(l2.size()));
        assertEquals(0, pool.leased());
        BufferLease l3 = pool.acquire().block(FaultRig.T);
        assertIae(failureOf(() -> rig.conn.write(null, 0, l3, 8)), "null");
        assertEquals(0, pool.leased());
        BufferLease l4 = pool.acquire().block(FaultRig.T);
        Mono<Void> m = rig.conn.write(r, 0, l4, 8);
        m.block(FaultRig.T);
        assertInstanceOf(IllegalStateException.class, failureOf(() -> m));
        assertEquals(0, pool.leased());
        BufferLease l5 = pool.acquire().block(FaultRig.T);
        l5.release();
        assertInstanceOf(IllegalStateException.class, failureOf(() -> rig.conn.write(r, 0, l5, 8)));
        assertEquals(0, pool.leased());
        BufferLease l6 = rig.server.buffers().acquire().block(FaultRig.T);
        assertIae(failureOf(() -> rig.conn.write(r, 0, l6, 8)), "another");
        assertEquals(0, rig.server.buffers().leased());
    }

    @Test
    void register_refusesHeapEmptyFreedOrRightlessMemory_andAMisalignedSegmentRoundTrips() {
        Cqflux c = rig.client;
        assertIae(assertThrows(IllegalArgumentException.class,
                () -> c.register(MemorySegment.ofArray(new byte[64]), RegionAccess.WRITE_SRC)), "heap");
        Arena a = Arena.ofConfined();
        MemorySegment zero = a.allocate(0);
        assertThrows(IllegalArgumentException.class, () -> c.register(zero, RegionAccess.WRITE_SRC));
        MemorySegment freed = a.allocate(64);
        a.close();
        assertThrows(IllegalArgumentException.class, () -> c.register(freed, RegionAccess.WRITE_SRC));
        assertThrows(IllegalArgumentException.class, () -> c.register(MemorySegment.NULL, RegionAccess.WRITE_SRC));
        assertThrows(IllegalArgumentException.class, () -> c.register(rig.arena.allocate(64)));
        assertThrows(IllegalArgumentException.class,
                () -> c.register(rig.arena.allocate(64), RegionAccess.WRITE_SRC, null));
        // misaligned: works and round-trips
        MemorySegment odd = rig.arena.allocate(4097, 64).asSlice(1, 4095);
        Region mis = c.register(odd, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        odd.set(ValueLayout.JAVA_LONG_UNALIGNED, 3, 0x0102_0304_0506_0708L);
        rig.conn.write(rig.remote(), 100, mis, 3, 8).block(FaultRig.T);
        assertEquals(0x0102_0304_0506_0708L, rig.serverRegion.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 100));
        odd.fill((byte) 0);
        rig.conn.read(mis, 7, rig.remote(), 100, 8).block(FaultRig.T);
        assertEquals(0x0102_0304_0506_0708L, odd.get(ValueLayout.JAVA_LONG_UNALIGNED, 7));
        mis.close();
        mis.close();
        mis.onClose().block(FaultRig.T);
    }

    @Test
    void operation_onARegionWhoseArenaWasClosed_failsResourceClosed() {
        Arena a = Arena.ofShared();
        Region r = rig.client.register(a.allocate(4096), RegionAccess.WRITE_SRC);
        a.close();
        Throwable e = failureOf(() -> rig.conn.write(rig.remote(), 0, r, 0, 8));
        assertInstanceOf(ResourceClosedException.class, e);
        r.close();
        r.onClose().block(FaultRig.T);
    }

    @Test
    void operation_onAClosedRegion_failsResourceClosed() {
        Region r = rig.client.register(rig.arena.allocate(4096), RegionAccess.WRITE_SRC);
        r.close();
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> rig.conn.write(rig.remote(), 0, r, 0, 8)));
    }

    @Test
    void remoteRegion_malformedRawDescriptors_areRefused_andAGoodOneWorksUntilTheConnectionCloses() {
        // A region handed out by its raw descriptor is reachable where keys are not scoped to
        // their connection (the opt-out); on a default (scoped) fabric/tcp server it is not
        // (HostilePeerTest.aRegionHandedOutByItsRawDescriptor_...).
        rig.close();
        rig = new FaultRig(UnaryOperator.identity(), UnaryOperator.identity(), o -> o.withKeysScopedToConnection(false));
        byte[] good = rig.serverRegion.rawDescriptor();
        assertEquals(24, good.length);
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(new byte[0], RegionAccess.WRITE_DST));
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(new byte[23], RegionAccess.WRITE_DST));
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(new byte[24], RegionAccess.WRITE_DST));
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(good));
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(good, new RegionAccess[0]));
        byte[] overflow = good.clone();
        ByteBuffer.wrap(overflow).putLong(8, -16).putLong(16, 64);
        assertThrows(IllegalArgumentException.class, () -> rig.conn.remoteRegion(overflow, RegionAccess.WRITE_DST));
        PeerRegion p = rig.conn.remoteRegion(good, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        assertEquals(-1, p.index());
        rig.conn.write(p, 0, rig.local, 0, 8).block(FaultRig.T);
        rig.conn.durableWrite(p, 0, rig.local, 0, 8).block(FaultRig.T);
        // a region stated without READ_SRC: a read of it is refused
        PeerRegion wo = rig.conn.remoteRegion(good, RegionAccess.WRITE_DST);
        Throwable e = failureOf(() -> rig.conn.read(rig.local, 0, wo, 0, 8));
        assertInstanceOf(IllegalArgumentException.class, e);
        rig.conn.dispose();
        assertThrows(ResourceClosedException.class, () -> rig.conn.remoteRegion(good, RegionAccess.WRITE_DST));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> rig.conn.write(p, 0, rig.local, 0, 8)));
    }

    @Test
    void builder_outOfBoundSettings_areRefused() {
        Cqflux.Builder b = Cqflux.builder();
        assertThrows(IllegalArgumentException.class, () -> b.operationTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> b.operationTimeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.operationTimeout(Duration.ofDays(2)));
        assertThrows(NullPointerException.class, () -> b.operationTimeout(null));
        assertThrows(IllegalArgumentException.class, () -> b.bufferPool(0, 16));
        assertThrows(IllegalArgumentException.class, () -> b.bufferPool(1, 0));
        assertThrows(IllegalArgumentException.class, () -> b.bufferPool(1, 16, -1));
        assertThrows(IllegalArgumentException.class, () -> b.bufferPool(Integer.MAX_VALUE, Integer.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> b.pendingLimit(-1));
        assertThrows(IllegalArgumentException.class, () -> b.loops(0));
        assertThrows(IllegalArgumentException.class, () -> b.batchSize(0));
        assertThrows(IllegalArgumentException.class, () -> b.shutdownTimeout(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.blockSpin(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.blockedLoopThreshold(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.receiveBufferSize(0));
        assertThrows(IllegalArgumentException.class, () -> b.notificationBacklog(0));
        Throwable t = assertThrows(RuntimeException.class, () -> Cqflux.builder().transport("nonsense").build());
        assertTrue(t instanceof io.cqflux.core.TransportUnavailableException || t instanceof IllegalArgumentException,
                t.toString());
    }

    @Test
    void connectionAndInstance_disposedTwiceOrClosed_refuseLaterOperationsWithResourceClosed() {
        RdmaConnection c = rig.conn;
        c.dispose();
        c.dispose();
        c.close();
        assertTrue(c.isDisposed());
        c.onDispose().block(FaultRig.T);
        c.disposeNow(Duration.ZERO);
        assertThrows(NullPointerException.class, () -> c.disposeNow(null));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c.write(rig.remote(), 0, rig.local, 0, 8)));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c.write(rig.remote(), 0, new byte[8])));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c.read(rig.remote(), 0, 8)));
        assertInstanceOf(ResourceClosedException.class,
                failureOf(() -> c.flush(rig.remote(), 0, 8, FlushType.VISIBILITY)));
        assertInstanceOf(ResourceClosedException.class,
                failureOf(() -> c.writeWithImmediate(rig.remote(), 0, rig.local, 0, 8, 7)));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c.atomicWrite(rig.remote(), 0, 7)));
        assertInstanceOf(ResourceClosedException.class,
                failureOf(() -> c.durableWrite(rig.remote(), 0, rig.local, 0, 8)));
        assertEquals(0, rig.client.buffers().leased());
        RdmaConnection c2 = rig.connectOne();
        rig.client.disposeNow(FaultRig.T);
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c2.write(c2.remoteRegion(0), 0, rig.local, 0, 8)));
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> c2.write(c2.remoteRegion(0), 0, new byte[8])));
        assertThrows(ResourceClosedException.class,
                () -> rig.client.register(rig.arena.allocate(64), RegionAccess.WRITE_SRC));
        rig.client.dispose();
        rig.client.disposeNow(Duration.ZERO);
        rig.client.close();
        assertFalse(rig.local.isOpen());
    }

    @Test
    void cqfluxDisposedFromACompletionCallback_shutsDown_whileDisposeNowThereIsRefused() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        rig.conn.write(rig.remote(), 0, rig.local, 0, 8).doOnSuccess(v -> {
            rig.client.dispose();
            rig.client.close();
            try {
                rig.client.disposeNow(FaultRig.T);
            } catch (IllegalStateException expected) {
                done.countDown();
            }
        }).subscribe();
        assertTrue(done.await(10, TimeUnit.SECONDS));
        rig.client.onDispose().block(FaultRig.T);
        assertFalse(rig.local.isOpen());
    }

    /** A pending read held by the server's blocked loop (fabric/tcp: the peer's loop progresses it). */
    @Test
    void cancelledReads_keepTheirRegionAndBufferUntilTerminal_andRegionCloseWaitsForThem() throws Exception {
        blockServerLoop();
        Region dst = rig.client.register(rig.arena.allocate(1 << 16), RegionAccess.READ_DST);
        reactor.core.Disposable d = rig.conn.read(dst, 0, rig.remote(), 0, 1 << 16).subscribe();
        reactor.core.Disposable d2 = rig.conn.read(rig.remote(), 0, 64).subscribe();
        // Both posted (they hold their credits), not only subscribed: a read cancelled before its
        // post is discarded unposted, which is not what this test is about.
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 2, FaultRig.T), "the reads were never posted");
        d.dispose();
        d2.dispose();
        dst.close();
        boolean closedEarly = dst.onClose().toFuture().isDone();
        long inflight = dst.inFlight();
        int leased = rig.client.buffers().leased();
        unblock.countDown();
        dst.onClose().block(FaultRig.T);
        FaultRig.await(() -> rig.client.buffers().leased() == 0, FaultRig.T);
        assertFalse(closedEarly, "deregistered with a cancelled read in flight");
        assertEquals(1, inflight);
        assertEquals(1, leased);
        assertEquals(0, rig.client.buffers().leased());
        assertEquals(0, rig.conn.inFlight());
    }

    @Test
    void stagedMonos_verifiedTwice_postTwice_andWorkUnderVirtualTime() {
        Mono<Void> w = rig.conn.write(rig.remote(), 0, new byte[] {1, 2, 3});
        MemorySegment peer = rig.serverRegion.segment();
        StepVerifier.create(w).expectComplete().verify(FaultRig.T);
        peer.set(ValueLayout.JAVA_BYTE, 2, (byte) 0);
        StepVerifier.create(w).expectComplete().verify(FaultRig.T);
        assertEquals(3, peer.get(ValueLayout.JAVA_BYTE, 2), "the second verification posted nothing");
        Mono<byte[]> r = rig.conn.read(rig.remote(), 0, 3);
        StepVerifier.withVirtualTime(() -> r.timeout(Duration.ofSeconds(30)))
                .expectNextMatches(b -> b[2] == 3).expectComplete().verify(FaultRig.T);
        StepVerifier.withVirtualTime(() -> rig.conn.write(rig.remote(), 0, rig.local, 0, 8).timeout(Duration.ofHours(1)))
                .expectComplete().verify(FaultRig.T);
        StepVerifier.create(r, 0).thenAwait(Duration.ofMillis(100)).thenRequest(1).expectNextCount(1)
                .expectComplete().verify(FaultRig.T);
    }

    @Test
    void byteBufferForm_readsThePositionAtSubscription_notAtAssembly() {
        ByteBuffer b = ByteBuffer.allocate(16);
        for (int i = 0; i < 16; i++) {
            b.put(i, (byte) (i + 1));
        }
        Mono<Void> m = rig.conn.write(rig.remote(), 200, b);
        b.position(8);
        m.block(FaultRig.T);
        assertEquals(8, b.position());
        assertEquals(9, rig.serverRegion.segment().get(ValueLayout.JAVA_BYTE, 200));
        assertEquals(0, rig.serverRegion.segment().get(ValueLayout.JAVA_BYTE, 208));
    }

    @Test
    void write_cancelledWhileWaitingForASendCredit_isNeverPosted() throws Exception {
        int credits = rig.conn.sendCredits();
        blockServerLoop();
        List<reactor.core.Disposable> held = new ArrayList<>();
        for (int i = 0; i < credits; i++) {
            held.add(rig.conn.write(rig.remote(), 0, rig.local, 0, 8).subscribe());
        }
        rig.local.segment().set(ValueLayout.JAVA_LONG, 4096, 0x77L);
        rig.serverRegion.segment().set(ValueLayout.JAVA_LONG, 4096, 0);
        reactor.core.Disposable waiting = rig.conn.write(rig.remote(), 4096, rig.local, 4096, 8).subscribe();
        FaultRig.await(() -> rig.conn.waiting() == 1, FaultRig.T);
        int w = rig.conn.waiting();
        waiting.dispose();
        unblock.countDown();
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0 && rig.local.inFlight() == 0, FaultRig.T));
        rig.conn.write(rig.remote(), 0, rig.local, 0, 8).block(FaultRig.T);
        assertEquals(1, w);
        assertEquals(0, rig.serverRegion.segment().get(ValueLayout.JAVA_LONG, 4096), "a cancelled waiting write was posted");
        assertEquals(0, rig.conn.waiting());
    }

    @Test
    void timeout_ofAHeldWrite_keepsItsRegionUntilTheWriteIsTerminal() throws Exception {
        blockServerLoop();
        Throwable e = reactor.core.Exceptions.unwrap(
                failureOf(() -> rig.conn.write(rig.remote(), 0, rig.local, 0, 8).timeout(Duration.ofMillis(50))));
        long during = rig.local.inFlight();
        unblock.countDown();
        assertInstanceOf(java.util.concurrent.TimeoutException.class, e);
        assertTrue(FaultRig.await(() -> rig.local.inFlight() == 0, FaultRig.T));
        assertEquals(1, during);
    }

    @Test
    void regionClosedWithWritesQueuedBehindTheCredits_refusesNewOnes_completesThemThenDeregisters() throws Exception {
        Region mine = rig.client.register(rig.arena.allocate(4096), RegionAccess.WRITE_SRC);
        int credits = rig.conn.sendCredits();
        blockServerLoop();
        Tally t = new Tally(credits + 3);
        for (int i = 0; i < credits + 3; i++) {
            t.subscribe(i, rig.conn.write(rig.remote(), 0, mine, 0, 8));
        }
        mine.close();
        assertInstanceOf(ResourceClosedException.class, failureOf(() -> rig.conn.write(rig.remote(), 0, mine, 0, 8)));
        boolean early = mine.onClose().toFuture().isDone();
        unblock.countDown();
        mine.onClose().block(FaultRig.T);
        assertFalse(early);
        assertTrue(t.awaitAll(FaultRig.T), t.toString());
        assertEquals(java.util.Map.of("complete", credits + 3), t.kinds());
    }

    @Test
    void afterThePeerClosed_operationsFailConnectionClosed_andDisposeNowReturns() {
        rig.serverConn.disposeNow(FaultRig.T);
        rig.conn.onDispose().block(FaultRig.T);
        Throwable e = failureOf(() -> rig.conn.write(rig.remote(), 0, rig.local, 0, 8));
        assertInstanceOf(io.cqflux.core.ConnectionException.class, e);
        assertEquals(io.cqflux.core.ConnectionEvent.CLOSED, ((io.cqflux.core.ConnectionException) e).event());
        Throwable s = failureOf(() -> rig.conn.write(rig.remote(), 0, new byte[4]));
        assertInstanceOf(io.cqflux.core.ConnectionException.class, s);
        assertTrue(rig.conn.isDisposed());
        rig.conn.disposeNow(Duration.ZERO);
    }

    @Test
    void write_cancelledInFlight_stillEndsItsConnectionAtTheOperationTimeout_andThenReleasesItsRegion() throws Exception {
        rig.close();
        rig = new FaultRig(b -> b, b -> b.operationTimeout(Duration.ofMillis(300)));
        blockServerLoop();
        Region mine = rig.client.register(rig.arena.allocate(4096), RegionAccess.WRITE_SRC);
        reactor.core.Disposable d = rig.conn.write(rig.remote(), 0, mine, 0, 8).subscribe();
        assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 1, FaultRig.T));
        d.dispose();
        mine.close();
        long t0 = System.nanoTime();
        rig.conn.onDispose().block(Duration.ofSeconds(5));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        mine.onClose().block(Duration.ofSeconds(1));
        assertTrue(ms < 3000, ms + " ms");
        assertEquals(io.cqflux.core.ConnectionEvent.LOST, rig.conn.events().blockLast(Duration.ofSeconds(1)));
    }


    @Test
    void disposeNow_andShutdownTimeout_ofTheLongestDuration_returnOnceReleased_withoutOverflow() {
        Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
        RdmaConnection c = rig.conn;
        c.disposeNow(forever);
        assertTrue(c.isDisposed());
        Cqflux extra = FaultRig.fabric().shutdownTimeout(forever).build();
        Region r = extra.register(rig.arena.allocate(64), RegionAccess.WRITE_SRC);
        extra.close();
        assertFalse(r.isOpen());
        rig.client.disposeNow(forever);
        rig.server.disposeNow(Duration.ofSeconds(Long.MAX_VALUE));
    }

    /** A misspelt option of the transport that opens fails the build instead of leaving its default. */
    @Test
    void aMisspeltFabricProperty_failsTheBuildNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().transport("fabric").transportProperty("fabric.provder", "verbs").build());
        assertTrue(e.getMessage().contains("fabric.provder") && e.getMessage().contains("fabric.provider"), e.getMessage());
    }
}
