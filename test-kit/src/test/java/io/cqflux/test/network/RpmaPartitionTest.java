package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.TransportChoice;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The {@link RxePartitionContract} on librpma over Soft-RoCE (tag {@code rpma}), and one case of
 * rpma's own: writes under netem delay. Figures in docs/reliability.md ("On rpma, in the Soft-RoCE
 * lane").
 */
@Tag("rpma")
class RpmaPartitionTest extends RxePartitionContract {

    @Override
    Cqflux.Builder transport(Cqflux.Builder b) {
        return b.transport(TransportChoice.RPMA);
    }

    @Override
    String name() {
        return "rpma";
    }

    /**
     * Delay is no fault: with 1 ms and then 50 ms added to what each end sends, durable writes
     * one at a time all complete, and their median takes at least the round trip's two delays
     * (a durable write waits for the flush's read response, one round trip at least).
     */
    @Test
    void durableWrites_underOneAndFiftyMillisecondsDelay_allComplete_medianAtLeastTheRoundTrip() {
        Duration opTimeout = Duration.ofSeconds(5);
        start(opTimeout, Duration.ofSeconds(3));
        RdmaConnection conn = connectPatiently();
        PeerRegion remote = conn.remoteRegion(0);
        for (int i = 0; i < 100; i++) { // warm, no fault: the first writes load and compile the path (TCG)
            conn.durableWrite(remote, 0, local, 0, Records.SIZE).block(T);
        }
        int next = 0;
        for (Duration delay : List.of(Duration.ofMillis(1), Duration.ofMillis(50))) {
            rig.delay(delay);
            long[] took = new long[CAPACITY];
            int n = 0;
            long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            while (System.nanoTime() < end && next < CAPACITY) {
                int i = next++;
                long t0 = System.nanoTime();
                records.track(i, conn.durableWrite(remote, (long) i * Records.SIZE, local, (long) i * Records.SIZE,
                        Records.SIZE)).block(T);
                took[n++] = System.nanoTime() - t0;
            }
            rig.heal();
            long[] s = java.util.Arrays.copyOf(took, n);
            java.util.Arrays.sort(s);
            long p50 = s[(n - 1) / 2];
            long p99 = s[Math.max(0, (int) Math.ceil(0.99 * n) - 1)];
            System.out.printf("FACT rpma delay %d ms each way: %d durable writes of %d B one at a time, p50 %.2f ms,"
                    + " p99 %.2f ms, max %.2f ms%n", delay.toMillis(), n, Records.SIZE, p50 / 1e6, p99 / 1e6,
                    s[n - 1] / 1e6);
            assertTrue(n >= 10, "only " + n + " writes under a delay of " + delay);
            assertTrue(p50 >= delay.multipliedBy(2).toNanos(), "the median write took " + p50 / 1e6 + " ms under a"
                    + " delay of " + delay.toMillis() + " ms each way: less than the round trip, so the delay was not"
                    + " applied");
        }
        assertEquals(java.util.Map.of("ok", records.started()), records.outcomes(), "a write failed under delay: "
                + records);
        assertTrue(!conn.isDisposed(), "the connection ended under delay");
        assertCompletedWritesLanded("delay");
    }
}
