package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A soak on fabric/tcp over 127.0.0.1: 16 connections, over 1,000,000 mixed operations (writes,
 * durable writes, reads) of random sizes from 1 byte to 4 KiB, every byte verified with a
 * checksum where it landed: each round of 128 operations per connection writes 128 distinct
 * slots of the peer's region, and once the round is done the peer's memory is checksummed slot by
 * slot against the source; every read is checksummed against the peer's memory it came from.
 * {@link #run} is the soak itself, on any pair of entry points ({@code RpmaSoakTest} runs it on
 * librpma in the Soft-RoCE lane).
 */
class SoakTest {
    static final int CONNECTIONS = 16;
    static final int ROUND = 128;
    static final int SLOT = 4096;
    static final long TOTAL = 1_000_000;
    static final int ROUNDS = (int) ((TOTAL + (long) CONNECTIONS * ROUND - 1) / ((long) CONNECTIONS * ROUND));
    static final long SOURCE = 1 << 20;

    enum Kind { WRITE, DURABLE_WRITE, READ }

    /** One planned operation: kind, where from, where to, how long. */
    record Planned(Kind kind, long localOffset, long remoteOffset, int length) {
    }

    @Test
    void sixteenConnections_millionMixedOperations_everyByteVerified() throws Exception {
        try (Cqflux server = FaultRig.fabric().batchSize(64).build();
             Cqflux client = FaultRig.fabric().loops(2).batchSize(64).build()) {
            Result r = run(server, client, new InetSocketAddress(FaultRig.LO, 0), CONNECTIONS, ROUNDS,
                    Duration.ofSeconds(120));
            System.out.println("FACT soak: " + r);
            r.assertClean();
            assertEquals((long) CONNECTIONS * ROUNDS * ROUND, r.operations());
        }
    }

    /**
     * What one soak did: operations per kind, bytes, seconds, the first checksum mismatch (or null)
     * and what was still in flight at the end on the connections and the client's regions.
     */
    record Result(int connections, long writes, long durableWrites, long reads, long bytes, double seconds,
                  String mismatch, long leftInFlight) {
        long operations() {
            return writes + durableWrites + reads;
        }

        /** Asserts no mismatch, at least one round per connection, and nothing left in flight. */
        void assertClean() {
            assertNull(mismatch);
            assertTrue(operations() >= (long) connections * ROUND, "not one round per connection: " + this);
            assertEquals(0, leftInFlight, "operations still in flight after the soak: " + this);
        }

        @Override
        public String toString() {
            return String.format("%d connections, %d operations (%d writes, %d durable writes, %d reads), %.1f MB,"
                    + " %.1f s, %.0f ops/s, %.1f MB/s, every byte checksummed%s", connections, operations(), writes,
                    durableWrites, reads, bytes / 1e6, seconds, operations() / seconds, bytes / 1e6 / seconds,
                    mismatch == null ? "" : ", MISMATCH " + mismatch);
        }
    }

    /**
     * Soaks {@code connections} connections from {@code client} to a server of {@code server}
     * bound at {@code listen}: each connection runs rounds of {@link #ROUND} mixed operations, at
     * most {@code rounds} of them, and starts no new round once {@code budget} has passed.
     */
    static Result run(Cqflux server, Cqflux client, InetSocketAddress listen, int connections, int rounds,
                      Duration budget) throws Exception {
        long area = (long) connections * ROUND * SLOT; // write area (server) / read destination (client)
        try (Arena arena = Arena.ofShared()) {
            // Server: [write area][read area of SOURCE bytes, a fixed pattern].
            MemorySegment sMem = arena.allocate(area + SOURCE, 64);
            MemorySegment cSrc = arena.allocate(SOURCE + SLOT, 64);
            MemorySegment cDst = arena.allocate(area, 64);
            SplittableRandom fill = new SplittableRandom(7);
            for (long i = 0; i < SOURCE; i += 8) {
                sMem.set(ValueLayout.JAVA_LONG, area + i, fill.nextLong());
            }
            for (long i = 0; i < SOURCE + SLOT; i += 8) {
                cSrc.set(ValueLayout.JAVA_LONG, i, fill.nextLong());
            }
            Region sRegion = server.register(sMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                    RegionAccess.FLUSH_TYPE_VISIBILITY);
            Region src = client.register(cSrc, RegionAccess.WRITE_SRC);
            Region dst = client.register(cDst, RegionAccess.READ_DST);
            RdmaServer srv = null;
            List<RdmaConnection> conns = null;
            // The memory is the arena's: everything registered over it ends before the arena does.
            try {
                srv = server.bind(listen, sRegion).block(FaultRig.T);
                assertNotNull(srv);
                RdmaServer bound = srv;
                CompletableFuture<List<RdmaConnection>> accepted = srv.connections().take(connections).collectList()
                        .toFuture();
                conns = Flux.range(0, connections).concatMap(i -> client.connect(bound.address()))
                        .collectList().block(Duration.ofSeconds(30));
                assertNotNull(conns);
                accepted.get(30, TimeUnit.SECONDS);

                AtomicLong[] perKind = {new AtomicLong(), new AtomicLong(), new AtomicLong()};
                AtomicLong bytes = new AtomicLong();
                AtomicReference<String> mismatch = new AtomicReference<>();
                List<Mono<Void>> all = new ArrayList<>();
                long t0 = System.nanoTime();
                long deadline = t0 + budget.toNanos();
                for (int ci = 0; ci < connections; ci++) {
                    all.add(soak(ci, conns.get(ci), rounds, deadline, area, src, dst, sMem, cSrc, cDst, perKind, bytes,
                            mismatch));
                }
                Mono.when(all).block(budget.plusSeconds(60));
                double s = (System.nanoTime() - t0) / 1e9;
                long left = src.inFlight() + dst.inFlight();
                for (RdmaConnection c : conns) {
                    left += c.inFlight();
                }
                return new Result(connections, perKind[0].get(), perKind[1].get(), perKind[2].get(), bytes.get(), s,
                        mismatch.get(), left);
            } finally {
                if (conns != null) {
                    for (RdmaConnection c : conns) {
                        c.disposeNow(FaultRig.T);
                    }
                }
                if (srv != null) {
                    srv.disposeNow(FaultRig.T);
                }
                sRegion.close();
                src.close();
                dst.close();
            }
        }
    }

    private static Mono<Void> soak(int ci, RdmaConnection c, int rounds, long deadline, long area, Region src,
                                   Region dst, MemorySegment sMem, MemorySegment cSrc, MemorySegment cDst,
                                   AtomicLong[] perKind, AtomicLong bytes, AtomicReference<String> mismatch) {
        SplittableRandom rnd = new SplittableRandom(1000 + ci);
        PeerRegion remote = c.remoteRegion(0);
        long base = (long) ci * ROUND * SLOT;
        return Flux.range(0, rounds).takeWhile(round -> round == 0 || System.nanoTime() < deadline).concatMap(round -> {
            Planned[] plan = new Planned[ROUND];
            for (int j = 0; j < ROUND; j++) {
                int len = 1 + rnd.nextInt(SLOT);
                int p = rnd.nextInt(100);
                Kind k = p < 45 ? Kind.WRITE : p < 65 ? Kind.DURABLE_WRITE : Kind.READ;
                plan[j] = k == Kind.READ
                        ? new Planned(k, base + (long) j * SLOT, area + rnd.nextLong(SOURCE - len + 1), len)
                        : new Planned(k, rnd.nextLong(SOURCE + 1), base + (long) j * SLOT, len);
            }
            return Flux.range(0, ROUND).flatMap(j -> {
                        Planned o = plan[j];
                        return switch (o.kind()) {
                            case WRITE -> c.write(remote, o.remoteOffset(), src, o.localOffset(), o.length());
                            case DURABLE_WRITE -> c.durableWrite(remote, o.remoteOffset(), src, o.localOffset(), o.length());
                            case READ -> c.read(dst, o.localOffset(), remote, o.remoteOffset(), o.length());
                        };
                    }, 64, 1)
                    .then(Mono.fromRunnable(() -> verify(ci, round, plan, sMem, cSrc, cDst, perKind, bytes, mismatch))
                            .subscribeOn(Schedulers.parallel()))
                    .then();
        }).then();
    }

    private static void verify(int ci, int round, Planned[] plan, MemorySegment sMem, MemorySegment cSrc,
                               MemorySegment cDst, AtomicLong[] perKind, AtomicLong bytes,
                               AtomicReference<String> mismatch) {
        for (int j = 0; j < plan.length; j++) {
            Planned o = plan[j];
            long expected;
            long actual;
            if (o.kind() == Kind.READ) {
                expected = crc(sMem, o.remoteOffset(), o.length()); // at the peer, where it came from
                actual = crc(cDst, o.localOffset(), o.length());
            } else {
                expected = crc(cSrc, o.localOffset(), o.length());
                actual = crc(sMem, o.remoteOffset(), o.length()); // at the peer, where it landed
            }
            if (expected != actual) {
                mismatch.compareAndSet(null, "connection " + ci + " round " + round + " op " + j + " " + o
                        + ": checksum " + Long.toHexString(actual) + ", expected " + Long.toHexString(expected));
            }
            perKind[o.kind().ordinal()].incrementAndGet();
            bytes.addAndGet(o.length());
        }
    }

    private static long crc(MemorySegment s, long offset, int length) {
        CRC32C c = new CRC32C();
        c.update(s.asSlice(offset, length).asByteBuffer());
        return c.getValue();
    }
}
