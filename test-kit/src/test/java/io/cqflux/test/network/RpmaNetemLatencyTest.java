package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A short measurement, not a guarantee: the latency of one durable write of 512 bytes at a time
 * (librpma: a write and a VISIBILITY flush, which it carries out as a read, so one round trip)
 * between two Cqflux instances on an {@link RxeLinkRig}, under no fault, 1, 5 and 20 % loss
 * each way, and 1 and 50 ms delay each way. Prints p50/p99 per condition and writes every sample to
 * {@code netem-latency.csv} in {@code CQFLUX_VM_OUT} (the lane copies it out). Asserts only what
 * shows that the condition was applied: every write completed, netem dropped packets under loss,
 * and a delayed write took at least the round trip's two delays.
 *
 * <p>Tagged {@code rpma-netem-bench}, which the lane does not select by default (minutes under
 * TCG): {@code scripts/softroce/run-tests.sh -- --select-class=io.cqflux.test.network.RpmaNetemLatencyTest
 * --include-tag rpma-netem-bench}.
 */
@Tag("rpma-netem-bench")
class RpmaNetemLatencyTest {
    static final Duration T = Duration.ofSeconds(60);
    static final int SIZE = 512;

    record Condition(String name, Consumer<RxeLinkRig> apply, int samples, Duration budget, Duration minRoundTrip,
                     boolean lossy) {
    }

    @Test
    void durableWriteLatency_underLossAndDelay_everyWriteCompletes_andDelayedOnesTakeTheRoundTrip() throws IOException {
        List<Condition> conditions = List.of(
                new Condition("none", RxeLinkRig::heal, 3000, Duration.ofSeconds(8), Duration.ZERO, false),
                new Condition("loss 1%", r -> r.loss(1), 3000, Duration.ofSeconds(30), Duration.ZERO, true),
                new Condition("loss 5%", r -> r.loss(5), 3000, Duration.ofSeconds(40), Duration.ZERO, true),
                new Condition("loss 20%", r -> r.loss(20), 3000, Duration.ofSeconds(60), Duration.ZERO, true),
                new Condition("delay 1ms", r -> r.delay(Duration.ofMillis(1)), 3000, Duration.ofSeconds(8),
                        Duration.ofMillis(2), false),
                new Condition("delay 50ms", r -> r.delay(Duration.ofMillis(50)), 3000, Duration.ofSeconds(10),
                        Duration.ofMillis(100), false));
        StringBuilder csv = new StringBuilder("condition,sample,nanos\n");
        List<String> summary = new ArrayList<>();
        try (RxeLinkRig rig = RxeLinkRig.create(); Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.RPMA).localAddress(rig.serverAddress).build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.RPMA).localAddress(rig.clientAddress)
                     .operationTimeout(Duration.ofSeconds(30)).build()) {
            MemorySegment serverMem = arena.allocate(1 << 20, 64);
            Region exposed = server.register(serverMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                    RegionAccess.FLUSH_TYPE_VISIBILITY);
            RdmaServer bound = server.bind(new InetSocketAddress(rig.serverAddress, freePort()), exposed).block(T);
            bound.connections().subscribe();
            MemorySegment mem = arena.allocate(1 << 20, 64);
            mem.fill((byte) 0x5a);
            Region local = client.register(mem, RegionAccess.WRITE_SRC);
            RdmaConnection conn = client.connect(bound.address()).block(T);
            PeerRegion remote = conn.remoteRegion(0);
            // Warm-up with no fault: the first writes load and compile the path (TCG).
            for (int i = 0; i < 3000; i++) {
                conn.durableWrite(remote, (long) (i % 2048) * SIZE, local, (long) (i % 2048) * SIZE, SIZE).block(T);
            }
            for (Condition c : conditions) {
                c.apply().accept(rig);
                long[] took = new long[c.samples()];
                int n = 0;
                long end = System.nanoTime() + c.budget().toNanos();
                while (n < took.length && System.nanoTime() < end) {
                    long off = (long) (n % 2048) * SIZE;
                    long t0 = System.nanoTime();
                    conn.durableWrite(remote, off, local, off, SIZE).block(T);
                    took[n++] = System.nanoTime() - t0;
                }
                long drops = rig.drops();
                rig.heal();
                long[] s = Arrays.copyOf(took, n);
                for (int i = 0; i < n; i++) {
                    csv.append(c.name()).append(',').append(i).append(',').append(s[i]).append('\n');
                }
                Arrays.sort(s);
                String line = String.format(Locale.ROOT, "FACT rpma netem %-10s durable write %d B: n %5d p50 %9.1f us"
                        + "  p99 %9.1f us  max %9.1f us  netem drops %d", c.name(), SIZE, n, pct(s, 50) / 1e3,
                        pct(s, 99) / 1e3, s[n - 1] / 1e3, drops);
                System.out.println(line);
                summary.add(line);
                assertTrue(n >= 20, c.name() + ": only " + n + " writes in " + c.budget());
                if (c.lossy()) {
                    assertTrue(drops > 0, c.name() + ": netem dropped nothing, so it tested nothing");
                }
                assertTrue(s[0] >= c.minRoundTrip().toNanos(), c.name() + ": a write took " + s[0] / 1e3
                        + " us, less than the round trip's delays " + c.minRoundTrip().toNanos() / 1e3 + " us");
            }
            assertEquals(false, conn.isDisposed(), "the connection ended under the faults");
        } finally {
            String out = System.getenv("CQFLUX_VM_OUT");
            if (out != null) {
                Files.writeString(Path.of(out, "netem-latency.csv"), csv);
                Files.write(Path.of(out, "netem-latency-summary.txt"), summary);
            }
        }
    }

    private static double pct(long[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
