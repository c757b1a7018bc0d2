package io.cqflux.test;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What keys scoped to their connection ({@code AcceptOptions.withKeysScopedToConnection}) cost per
 * connection, through the public API on fabric/tcp over 127.0.0.1: one server exposing 4 regions
 * of 4 KiB, N clients connected one after another and kept open, then all closed; with and without
 * the option, alternating, several rounds. Reports per connection: the connect time (p50, mean),
 * the open fds and the native heap (mallinfo2(3) uordblks + hblkhd, settled) that both sides add
 * together (they live in this one process, so the option's difference is the server's), and
 * whether the fds and exposures went back after the closes. Not a test (no assertion, not run by
 * the build): a measurement tool for docs/security.md. Run from the module's test classpath:
 * {@code IPATH_NO_BACKTRACE=1 java --enable-native-access=ALL-UNNAMED -cp <test classpath>
 * io.cqflux.test.ScopedKeysCostProbe [connections] [rounds]}.
 */
final class ScopedKeysCostProbe {

    private static final Duration T = Duration.ofSeconds(30);

    private ScopedKeysCostProbe() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared()) {
            Cqflux server = Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(lo)
                    .threadNamePrefix("cost-server").build();
            Cqflux client = Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(lo)
                    .threadNamePrefix("cost-client").build();
            try {
                Region[] exposed = new Region[4];
                for (int i = 0; i < exposed.length; i++) {
                    exposed[i] = server.register(arena.allocate(4096, 4096), RegionAccess.READ_SRC,
                            RegionAccess.WRITE_DST);
                }
                System.out.println("mode,connections,connect_p50_us,connect_mean_us,fds_per_conn,heap_bytes_per_conn,"
                        + "fds_left_after_close,exposures_left");
                for (int r = 0; r < rounds + 1; r++) {
                    for (boolean scoped : new boolean[] {false, true}) {
                        // Round 0 warms the JIT and the loops' shared queues up; it is not printed.
                        run(server, client, exposed, scoped, r == 0 ? Math.min(n, 200) : n, r > 0);
                    }
                }
            } finally {
                client.disposeNow(T);
                server.disposeNow(T);
            }
        }
    }

    private static void run(Cqflux server, Cqflux client, Region[] exposed, boolean scoped, int n, boolean print)
            throws IOException {
        RdmaServer s = server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                AcceptOptions.exposing(exposed).withKeysScopedToConnection(scoped)).block(T);
        List<RdmaConnection> served = new ArrayList<>();
        var sub = s.connections().subscribe(served::add);
        List<RdmaConnection> clients = new ArrayList<>(n);
        long[] micros = new long[n];
        try {
            System.gc();
            long fds0 = openFds();
            long heap0 = settledNativeInUse();
            for (int i = 0; i < n; i++) {
                long t0 = System.nanoTime();
                clients.add(client.connect(s.address()).block(T));
                micros[i] = (System.nanoTime() - t0) / 1000;
            }
            long fds1 = openFds();
            long heap1 = settledNativeInUse();
            for (RdmaConnection c : clients) {
                c.disposeNow(T);
            }
            long end = System.nanoTime() + T.toNanos();
            while (s.stats().exposures() > 0 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            Thread.sleep(500);
            long fds2 = openFds();
            long[] sorted = micros.clone();
            Arrays.sort(sorted);
            if (print) {
                System.out.printf(Locale.ROOT, "%s,%d,%d,%.0f,%.2f,%d,%d,%d%n", scoped ? "scoped" : "instance-domain", n,
                        sorted[n / 2], Arrays.stream(micros).average().orElse(0), (fds1 - fds0) / (double) n,
                        (heap1 - heap0) / n, fds2 - fds0, s.stats().exposures());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            clients.forEach(RdmaConnection::dispose);
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            s.disposeNow(T);
        }
    }

    /** {@code struct mallinfo2}: ten {@code size_t} fields, mallinfo(3). */
    private static final MemoryLayout MALLINFO2 = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("arena"), ValueLayout.JAVA_LONG.withName("ordblks"),
            ValueLayout.JAVA_LONG.withName("smblks"), ValueLayout.JAVA_LONG.withName("hblks"),
            ValueLayout.JAVA_LONG.withName("hblkhd"), ValueLayout.JAVA_LONG.withName("usmblks"),
            ValueLayout.JAVA_LONG.withName("fsmblks"), ValueLayout.JAVA_LONG.withName("uordblks"),
            ValueLayout.JAVA_LONG.withName("fordblks"), ValueLayout.JAVA_LONG.withName("keepcost"));
    private static final MethodHandle MALLINFO2_CALL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mallinfo2").orElseThrow(), FunctionDescriptor.of(MALLINFO2));

    /** {@return the least of five readings of malloc's bytes in use (uordblks + hblkhd), 100 ms apart} */
    private static long settledNativeInUse() throws InterruptedException {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment m = (MemorySegment) MALLINFO2_CALL.invokeExact((SegmentAllocator) a);
                least = Math.min(least, m.get(ValueLayout.JAVA_LONG, 7 * 8) + m.get(ValueLayout.JAVA_LONG, 4 * 8));
            } catch (Throwable e) {
                throw new AssertionError("mallinfo2 failed", e);
            }
            Thread.sleep(100);
        }
        return least;
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
