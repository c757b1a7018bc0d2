package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionLevel;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Many fabric connections on one event loop per side, both sides writing to each other: every
 * completion is accounted for exactly once: a per-operation bitmap, confined to each side's single
 * loop thread, and a count of every completion-queue entry seen by the connections' monitors. (The
 * loop's own counter is published after each batch, so it may lag the signals: not used here.)
 */
class ManyConnectionsTest {
    static final int CONNECTIONS = Integer.getInteger("mc.conns", 16);
    static final int OPS_EACH_WAY = Integer.getInteger("mc.ops", 100_000);
    static final int RECORD = 8;
    static final int SLOTS = 256;

    @Test
    void sixteenConnections_eachSideWritesTheOther_everyCompletionAccountedExactlyOnce() throws Exception {
        InetAddress lo = InetAddress.getLoopbackAddress();
        // TRANSMIT: each write completes once tcp took it (fi_cq(3) completion levels); every
        // write still produces exactly one completion to account for, at several times the rate
        // of DELIVERY's per-write acknowledgement round trip on two shared cores.
        ConnectionConfig cfg = ConnectionConfig.DEFAULT.withReceiveQueueSize(0)
                .withWriteCompletion(CompletionLevel.TRANSMIT);
        try (Arena arena = Arena.ofShared();
             Cqflux a = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).connectionConfig(cfg)
                     .batchSize(64).build();
             Cqflux b = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).connectionConfig(cfg)
                     .batchSize(64).build()) {
            long regionSize = (long) CONNECTIONS * SLOTS * RECORD;
            Region aMem = a.register(arena.allocate(regionSize, 64), RegionAccess.WRITE_DST, RegionAccess.WRITE_SRC);
            Region bMem = b.register(arena.allocate(regionSize, 64), RegionAccess.WRITE_DST, RegionAccess.WRITE_SRC);
            RdmaServer server = a.bind(new InetSocketAddress(lo, 0), aMem).block(Duration.ofSeconds(10));
            assertNotNull(server);
            CompletableFuture<List<RdmaConnection>> accepted =
                    server.connections().take(CONNECTIONS).collectList().toFuture();
            List<RdmaConnection> bSide = Flux.range(0, CONNECTIONS)
                    .concatMap(i -> b.connect(server.address(), bMem))
                    .collectList().block(Duration.ofSeconds(30));
            assertNotNull(bSide);
            assertEquals(CONNECTIONS, bSide.size());
            List<RdmaConnection> aSide = accepted.get(30, TimeUnit.SECONDS);
            assertEquals(CONNECTIONS, aSide.size());
            // Each side wrote NO_RECEIVES into its peer's credit word at establishment
            // (receiveQueueSize 0): one write of each connection, before the monitors count. A
            // write of each connection completes after it (tcp completes in order), so none of
            // those control writes is counted below.
            Flux.fromIterable(aSide).concatWith(Flux.fromIterable(bSide))
                    .concatMap(c -> c.write(c.remoteRegion(0), 0, aSide.contains(c) ? aMem : bMem,
                            0, RECORD))
                    .then().block(Duration.ofSeconds(30));
            // The hot completion Flux sees every CQ entry, on the loop thread, before the
            // operation's own signal: after all operations signalled, these counts are final.
            AtomicLong aEntries = new AtomicLong();
            AtomicLong bEntries = new AtomicLong();
            aSide.forEach(c -> c.completions().subscribe(x -> aEntries.incrementAndGet()));
            bSide.forEach(c -> c.completions().subscribe(x -> bEntries.incrementAndGet()));
            // Per side one bitmap of operations: signals of one side all arrive on its single loop thread.
            BitSet aSeen = new BitSet(CONNECTIONS * OPS_EACH_WAY);
            BitSet bSeen = new BitSet(CONNECTIONS * OPS_EACH_WAY);
            AtomicReference<String> twice = new AtomicReference<>();
            long t0 = System.nanoTime();
            Mono.when(traffic(aSide, aMem, aSeen, twice), traffic(bSide, bMem, bSeen, twice))
                    .block(Duration.ofSeconds(120));
            long nanos = System.nanoTime() - t0;
            assertNull(twice.get());
            assertEquals(CONNECTIONS * OPS_EACH_WAY, aSeen.cardinality());
            assertEquals(CONNECTIONS * OPS_EACH_WAY, bSeen.cardinality());
            assertEquals((long) CONNECTIONS * OPS_EACH_WAY, aEntries.get(), "side A completion entries");
            assertEquals((long) CONNECTIONS * OPS_EACH_WAY, bEntries.get(), "side B completion entries");
            for (RdmaConnection c : aSide) {
                assertTrue(c.maxInFlight() <= c.sendCredits());
            }
            System.out.printf("ManyConnectionsTest: %d connections, %d ops each way each, %.2f s, %.0f ops/s total%n",
                    CONNECTIONS, OPS_EACH_WAY, nanos / 1e9, 2.0 * CONNECTIONS * OPS_EACH_WAY / (nanos / 1e9));
        }
    }

    private static Mono<Void> traffic(List<RdmaConnection> conns, Region src, BitSet seen,
                                      AtomicReference<String> twice) {
        List<Mono<Void>> all = new ArrayList<>();
        for (int ci = 0; ci < conns.size(); ci++) {
            RdmaConnection c = conns.get(ci);
            PeerRegion dst = c.remoteRegion(0);
            int base = ci * OPS_EACH_WAY;
            long slotBase = (long) ci * SLOTS * RECORD;
            all.add(Flux.range(0, OPS_EACH_WAY)
                    .flatMap(i -> c.write(dst, slotBase + (long) (i % SLOTS) * RECORD, src, slotBase, RECORD)
                            .doOnSuccess(v -> {
                                int id = base + i;
                                if (seen.get(id)) {
                                    twice.compareAndSet(null, "operation " + id + " completed twice");
                                }
                                seen.set(id);
                            }), c.sendCredits(), 1)
                    .then());
        }
        return Mono.when(all);
    }

}
