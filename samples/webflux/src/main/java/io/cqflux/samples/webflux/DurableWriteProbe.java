package io.cqflux.samples.webflux;

import io.cqflux.core.RegionAccess;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The library's own durable write, without HTTP or Spring, against the service's storage peer:
 * {@code java -cp ... io.cqflux.samples.webflux.DurableWriteProbe address port slot slot-size seconds [wait]}.
 * {@code load.sh} runs it in the same run as its HTTP load, so that a record POST's latency can be
 * set beside what the durable write inside it costs by itself.
 *
 * <p>One connection, one write in flight: each write of a record-sized slot (header and the
 * POST's 255-byte payload, a valid record of id {@code slot}) is subscribed when the previous one
 * has completed, on the loop's thread, as a pipeline chaining its writes would. The instance
 * waits as the service's does: {@code wait} is the service's {@code cqflux.wait-strategy}
 * ({@code blocking}, the starter's default; {@code busy-poll}; {@code adaptive}, with the
 * starter's default of 1,000 spins). Prints one line:
 * {@code probe <writes> <p50_us> <p99_us>}, after a warm-up of a quarter of the time (the JIT).
 * The slot must be one the HTTP load never writes: it holds a valid record afterwards, which the
 * storage peer's verification counts.
 */
public final class DurableWriteProbe {
    private DurableWriteProbe() {
    }

    /**
     * @param args the storage peer's address and port, the slot to write, the slot size, seconds
     * @throws Exception when the address does not resolve or the peer cannot be reached
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 5 && args.length != 6) {
            System.err.println("usage: DurableWriteProbe address port slot slot-size seconds [blocking|busy-poll|adaptive]");
            System.exit(2);
        }
        InetSocketAddress peer = new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
        WaitStrategy wait = waitStrategy(args.length == 6 ? args[5] : "blocking");
        Result r = measure(peer, Long.parseLong(args[2]), Integer.parseInt(args[3]), Double.parseDouble(args[4]), wait);
        System.out.printf(Locale.ROOT, "probe %d %.1f %.1f%n", r.writes(), r.p50Nanos() / 1e3, r.p99Nanos() / 1e3);
    }

    /**
     * What one probe measured.
     *
     * @param writes the durable writes timed (after the warm-up)
     * @param p50Nanos their median latency
     * @param p99Nanos their 99th percentile
     */
    public record Result(int writes, long p50Nanos, long p99Nanos) {
    }

    /**
     * Runs the probe.
     *
     * @param peer the storage peer
     * @param slot the slot written (a valid record of this id lands there)
     * @param slotSize the peer's slot size
     * @param seconds how long to time writes, after a warm-up of a quarter of it
     * @param wait how the probe's loop waits
     * @return the latencies
     */
    public static Result measure(InetSocketAddress peer, long slot, int slotSize, double seconds, WaitStrategy wait) {
        byte[] payload = (String.format(Locale.ROOT, "%015d", slot) + "p".repeat(240)).getBytes(StandardCharsets.US_ASCII);
        byte[] header = RecordFormat.header(slot, ByteBuffer.wrap(payload));
        int length = header.length + payload.length;
        if (length > slotSize) {
            throw new IllegalArgumentException("a record of " + length + " bytes does not fit a slot of " + slotSize);
        }
        try (Arena arena = Arena.ofShared(); Cqflux cq = Cqflux.builder().threadNamePrefix("probe").waitStrategy(wait).build()) {
            MemorySegment src = arena.allocate(length, 64);
            MemorySegment.copy(header, 0, src, ValueLayout.JAVA_BYTE, 0, header.length);
            MemorySegment.copy(payload, 0, src, ValueLayout.JAVA_BYTE, header.length, payload.length);
            Region local = cq.register(src, RegionAccess.WRITE_SRC);
            RdmaConnection c = cq.connect(peer).block(Duration.ofSeconds(10));
            try {
                PeerRegion store = c.remoteRegion(0);
                long offset = slot * slotSize;
                if (slot < 0 || offset + length > store.size()) {
                    throw new IllegalArgumentException("slot " + slot + " of " + slotSize + " B lies outside the peer's region of "
                            + store.size() + " B");
                }
                run(c, store, offset, local, length, (long) (seconds * 0.25e9));
                long[] lat = run(c, store, offset, local, length, (long) (seconds * 1e9));
                Arrays.sort(lat);
                return new Result(lat.length, lat[lat.length / 2], lat[(int) Math.min(lat.length - 1, lat.length * 99L / 100)]);
            } finally {
                c.dispose();
            }
        }
    }

    /** {@return the strategy a {@code cqflux.wait-strategy} value names, as the starter maps it} */
    static WaitStrategy waitStrategy(String name) {
        return switch (name.toLowerCase(Locale.ROOT).replace('_', '-')) {
            case "blocking" -> WaitStrategy.BLOCKING;
            case "busy-poll" -> WaitStrategy.BUSY_POLL;
            case "adaptive" -> WaitStrategy.adaptive(1000);
            default -> throw new IllegalArgumentException("wait strategy '" + name
                    + "' is none of blocking, busy-poll, adaptive");
        };
    }

    /** Chained durable writes for {@code nanos}; {@return each one's latency, in ns} */
    private static long[] run(RdmaConnection c, PeerRegion store, long offset, Region local, int length, long nanos) {
        long end = System.nanoTime() + nanos;
        long[][] lat = {new long[1 << 16]};
        int[] n = {0};
        Flux.range(0, Integer.MAX_VALUE)
                .concatMap(i -> {
                    long t0 = System.nanoTime();
                    return c.durableWrite(store, offset, local, 0, length).then(Mono.fromSupplier(() -> System.nanoTime() - t0));
                }, 0)
                .takeUntil(x -> System.nanoTime() >= end)
                .doOnNext(x -> {
                    if (n[0] == lat[0].length) {
                        lat[0] = Arrays.copyOf(lat[0], lat[0].length * 2);
                    }
                    lat[0][n[0]++] = x;
                })
                .blockLast(Duration.ofNanos(nanos).plusSeconds(30));
        return Arrays.copyOf(lat[0], n[0]);
    }
}
