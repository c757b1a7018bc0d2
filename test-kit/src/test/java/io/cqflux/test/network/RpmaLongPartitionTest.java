package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link RpmaPartitionTest}'s guarantee across a partition of 10 s, the middle length:
 * with the library's default operation timeout (30 s) durable writes running into it each end
 * exactly once, within the timeout (plus the lane's deadline slack) of their start, completed or
 * with {@code ConnectionException(LOST)}, and every completed one is in the server's memory
 * (directly and read over a fresh connection) byte for byte.
 *
 * <p>Tagged {@code rpma}: part of the lane's default run (about 20 s, the partition alone 10 s);
 * alone with {@code scripts/softroce/run-tests.sh --build --
 * --select-class=io.cqflux.test.network.RpmaLongPartitionTest}.
 */
@Tag("rpma")
class RpmaLongPartitionTest {
    static final int CAPACITY = 4096;

    RxePair pair;

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    /*
     * The connect timeout is long: no connect's timing is under test here, and when this class is
     * the first of a fresh guest the first connect over a rig made moments before can take longer
     * than the partition suite's 3 s (three attempts of 3 s each timed out in one lane run).
     */
    @Test
    void durableWrites_tenSecondPartition_defaultOperationTimeout_everyWriteEndsOnceInBound_completedOnesLanded() {
        Duration opTimeout = Duration.ofSeconds(30); // the library's default
        RxeLinkRig rig = RxeLinkRig.create();
        pair = new RxePair(rig, (long) CAPACITY * Records.SIZE, b -> b, b -> b.operationTimeout(opTimeout)
                .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(10))));
        MemorySegment mem = pair.arena.allocate((long) CAPACITY * Records.SIZE, 64);
        Records records = new Records(System.nanoTime(), CAPACITY);
        records.fill(mem);
        Region local = pair.client.register(mem, RegionAccess.WRITE_SRC);
        Region readBack = pair.client.register(pair.arena.allocate((long) CAPACITY * Records.SIZE, 64),
                RegionAccess.READ_DST);
        RdmaConnection conn = pair.connectPatiently();
        PeerRegion remote = conn.remoteRegion(0);
        long drops;
        try (Writer w = new Writer(records, CAPACITY, RpmaPartitionTest.WINDOW, RpmaPartitionTest.PACE_NANOS,
                i -> conn.durableWrite(remote, (long) i * Records.SIZE, local, (long) i * Records.SIZE, Records.SIZE))) {
            assertTrue(PartitionTest.await(() -> records.ended() >= 100, RxePair.T), "no traffic: " + records);
            int endedAtPartition = records.ended();
            long t0 = System.nanoTime();
            rig.partition();
            long set = System.nanoTime();
            System.out.printf("FACT rpma setting the 10 s partition took %.0f ms%n", (set - t0) / 1e6);
            assertTrue(PartitionTest.await(() -> records.started() > records.ended(), Duration.ofSeconds(1)),
                    "no write ran into the partition: " + records);
            PartitionTest.sleep(Duration.ofNanos(Duration.ofSeconds(10).toNanos() - (System.nanoTime() - set)));
            int endedDuring = records.ended() - endedAtPartition;
            drops = rig.drops();
            rig.heal();
            long healed = System.nanoTime();
            int atHeal = records.ended();
            // Either the connection rides the partition out (rxe retransmits on its timer) or the
            // deadline ends it: wait for one or the other.
            assertTrue(PartitionTest.await(() -> records.ended() > atHeal + 100 || conn.isDisposed(),
                    opTimeout.plus(RpmaPartitionTest.SLACK)), "neither did writes resume after the heal nor did the"
                    + " connection end: " + records);
            System.out.printf("FACT rpma 10 s partition, operationTimeout %d ms: %d packets dropped, %d writes ended"
                    + " during it; %s %.0f ms after the heal%n", opTimeout.toMillis(), drops, endedDuring,
                    conn.isDisposed() ? "the connection ended" : "writes resumed", (System.nanoTime() - healed) / 1e6);
            w.close();
            assertTrue(PartitionTest.await(() -> records.ended() == records.started(),
                    opTimeout.plus(RpmaPartitionTest.SLACK)), "writes pending long after the heal: " + records);
        }
        assertTrue(drops > 0, "netem dropped nothing during the partition: it tested nothing");
        records.assertEveryWriteEndedOnce(opTimeout.plus(RpmaPartitionTest.SLACK), "rpma longest write");
        RdmaConnection fresh = pair.connectPatiently();
        byte[] read = records.readOver(fresh, readBack, RxePair.T);
        byte[] direct = pair.serverMem.asSlice(0, read.length).toArray(ValueLayout.JAVA_BYTE);
        records.assertCompletedWritesLanded("rpma 10 s partition", "server", "", direct, read, "; "
                + rig.rxeStatistics());
        fresh.dispose();
    }
}
