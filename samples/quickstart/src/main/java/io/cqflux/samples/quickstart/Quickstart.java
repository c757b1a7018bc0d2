package io.cqflux.samples.quickstart;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The quickstart: a server exposes a memory-mapped file as a remote region; a client performs
 * durable writes (write + flush, one cold {@code Mono} each) into it with bounded concurrency,
 * reads everything back and verifies every byte — through RDMA reads and directly in the server's
 * mapped file — then prints throughput and latency percentiles.
 *
 * <p>Run: {@code java --enable-native-access=io.cqflux.transport.rpma,io.cqflux.transport.fabric,io.cqflux.epoll -p
 * samples/quickstart/target/lib:samples/quickstart/target/classes -m
 * io.cqflux.samples.quickstart/io.cqflux.samples.quickstart.Quickstart --help}
 */
public final class Quickstart {
    /** Exit status when every byte verified. */
    static final int OK = 0;
    /** Exit status on any failure. */
    static final int FAILED = 1;
    /** Exit status on bad usage. */
    static final int USAGE = 2;

    private static final long MAX_READ_CHUNK = 1 << 20;
    private static final Duration PHASE_TIMEOUT = Duration.ofMinutes(10);

    private Quickstart() {
    }

    /**
     * Runs the demo and exits with its status.
     *
     * @param args the command line ({@code --help} lists it)
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the demo.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors go
     * @return the exit status: 0 only when every byte verified
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("quickstart: " + e.getMessage());
            err.print(Options.USAGE);
            return USAGE;
        }
        if (o.help) {
            out.print(Options.USAGE);
            return OK;
        }
        return run(o, out, err);
    }

    static int run(Options o, PrintStream out, PrintStream err) {
        Path file = o.file;
        boolean deleteFile = false;
        try {
            if (file == null) {
                Path dir = Files.createTempDirectory("cqflux-quickstart");
                file = dir.resolve("records.dat");
                deleteFile = true;
                // Also on Ctrl-C and SIGTERM, which run the JVM's shutdown hooks but not the finally
                // below; deleted in reverse order: the file, then its directory.
                dir.toFile().deleteOnExit();
                file.toFile().deleteOnExit();
            }
            try {
                checkSpace(o, file);
            } catch (IllegalArgumentException e) {
                err.println("quickstart: " + e.getMessage());
                return USAGE;
            }
            return new Demo(o, file, out, err).run();
        } catch (Throwable t) {
            err.println("quickstart: FAILED: " + t);
            Throwable c = t.getCause();
            while (c != null) {
                err.println("  caused by: " + c);
                c = c.getCause();
            }
            return FAILED;
        } finally {
            if (deleteFile && file != null) {
                try {
                    Files.deleteIfExists(file);
                    Files.deleteIfExists(file.getParent());
                } catch (IOException ignored) {
                    // best effort clean-up of a temp file
                }
            }
        }
    }

    /**
     * Refuses a run whose records do not fit where the file goes, before anything is written: the
     * demo writes every byte of its {@code --count} x {@code --size} records there.
     */
    static void checkSpace(Options o, Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        checkSpace(o, file, Files.getFileStore(dir).getUsableSpace());
    }

    /** {@link #checkSpace(Options, Path)} with the usable bytes given. */
    static void checkSpace(Options o, Path file, long usable) throws IOException {
        long total = (long) o.count * o.size;
        long have = Files.exists(file) ? Files.size(file) : 0;
        Path dir = file.toAbsolutePath().getParent();
        if (total - have > usable) {
            throw new IllegalArgumentException("--count " + o.count + " x --size " + o.size + " = " + total
                    + " bytes of records do not fit in " + dir + " (" + usable + " bytes usable"
                    + (have > 0 ? ", the file holds " + have : "") + "): choose fewer or smaller records, or --file"
                    + " elsewhere");
        }
    }

    /** The deterministic contents of record {@code index}, word {@code k}: splitmix64. */
    static long word(long index, long k) {
        long z = index * 0x9E3779B97F4A7C15L + k * 0xBF58476D1CE4E5B9L + 0x632BE59BD9B4E5L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Fills {@code dst} (one record) with the contents of record {@code index}. */
    static void fill(MemorySegment dst, long index) {
        long size = dst.byteSize();
        long words = size / 8;
        for (long k = 0; k < words; k++) {
            dst.set(ValueLayout.JAVA_LONG_UNALIGNED, k * 8, word(index, k));
        }
        long tail = word(index, words);
        for (long b = words * 8; b < size; b++) {
            dst.set(ValueLayout.JAVA_BYTE, b, (byte) (tail >>> (8 * (b - words * 8))));
        }
    }

    /** One run of the demo. */
    private static final class Demo {
        private final Options o;
        private final Path file;
        private final PrintStream out;
        private final PrintStream err;
        private final long total;

        Demo(Options o, Path file, PrintStream out, PrintStream err) {
            this.o = o;
            this.file = file;
            this.out = out;
            this.err = err;
            this.total = (long) o.count * o.size;
        }

        /** One entry point's configuration, the same for the server and the client. */
        private Cqflux.Builder builder() throws IOException {
            Cqflux.Builder b = Cqflux.builder().transport(o.transport).localAddress(InetAddress.getByName(o.address))
                    .waitStrategy(o.wait);
            return o.provider == null ? b : b.fabricProvider(o.provider);
        }

        int run() throws IOException {
            InetAddress local = InetAddress.getByName(o.address);
            try (Arena arena = Arena.ofShared();
                 FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                         StandardOpenOption.WRITE);
                 Cqflux server = builder().build();
                 Cqflux client = builder().build()) {
                boolean fresh = ch.size() == 0;
                MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, total, arena);
                if (!fresh) {
                    mapped.fill((byte) 0); // a fresh file reads as zeros already: no pass over it
                }
                // A PERSISTENT flush needs persistent memory at the server, declared with
                // Cqflux.Builder.directWriteToPersistentMemory(true) (on rpma its handshake tells the
                // client, rpma_flush(3)), and a transport that can make earlier writes persistent
                // (fabric/tcp cannot: registering FLUSH_TYPE_PERSISTENT there fails). A mapped file
                // on a disk or tmpfs is not pmem, so the strongest honest flush is VISIBILITY: a
                // durable write resolves once the record is in the server's memory (its page cache,
                // for this file); remote.strongestFlush() below says so.
                Region exposed = server.register(mapped, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                        RegionAccess.FLUSH_TYPE_VISIBILITY);
                // Each accepted connection goes to the handler; it is kept until the handler's
                // publisher ends: onDispose() ends when the client closes it.
                RdmaServer srv = server.bind(new InetSocketAddress(local, o.port != 0 ? o.port : freePort(local)),
                                c -> c.onDispose(), exposed)
                        .block(PHASE_TIMEOUT);
                out.printf("cqflux quickstart: transport %s, %d records x %d B (%s) into %s%n", client.transportName(),
                        o.count, o.size, mib(total), file);
                out.printf("  concurrency %d, wait %s, server %s%n", o.concurrency, o.waitName, srv.address());
                RdmaConnection conn = client.connect(srv.address()).block(PHASE_TIMEOUT);
                PeerRegion remote = conn.remoteRegion(0);
                out.printf("  connected: %s; remote region %d B, flush %s%n", conn.description(), remote.size(),
                        remote.strongestFlush());

                // Phase 1: durable writes.
                MemorySegment srcMem = arena.allocate((long) o.concurrency * o.size, 64);
                Region src = client.register(srcMem, RegionAccess.WRITE_SRC);
                ConcurrentLinkedQueue<Integer> slots = new ConcurrentLinkedQueue<>();
                for (int i = 0; i < o.concurrency; i++) {
                    slots.add(i);
                }
                Latencies lat = new Latencies(o.count);
                AtomicLong done = new AtomicLong();
                Disposable progress = progress("written", done, o.count);
                long t0 = System.nanoTime();
                try {
                    Flux.range(0, o.count)
                            .flatMap(i -> Mono.defer(() -> {
                                int slot = slots.poll();
                                long off = (long) slot * o.size;
                                fill(srcMem.asSlice(off, o.size), i);
                                long start = System.nanoTime();
                                return conn.durableWrite(remote, (long) i * o.size, src, off, o.size)
                                        .doOnSuccess(v -> {
                                            lat.record(i, System.nanoTime() - start);
                                            done.incrementAndGet();
                                        })
                                        // Before the signal travels on: flatMap asks for the next record then.
                                        .doOnTerminate(() -> slots.add(slot))
                                        .doOnCancel(() -> slots.add(slot));
                            }), o.concurrency, 1)
                            .then()
                            .block(PHASE_TIMEOUT);
                } finally {
                    progress.dispose();
                }
                long writeNanos = System.nanoTime() - t0;
                out.printf("  durable writes: %d in %.3f s: %.0f ops/s, %.1f MB/s%n", o.count, writeNanos / 1e9,
                        o.count / (writeNanos / 1e9), total / 1e6 / (writeNanos / 1e9));
                out.printf("  latency per durable write: %s%n", lat.summary());

                if (o.injectCorruption) {
                    // Test hook: a byte the verification must catch.
                    long at = total / 2;
                    mapped.set(ValueLayout.JAVA_BYTE, at, (byte) ~mapped.get(ValueLayout.JAVA_BYTE, at));
                }

                // Phase 2: read everything back over RDMA and verify every byte.
                long readVerified = readBack(client, conn, remote, arena);
                // Phase 3: the server's own view of the file.
                mapped.force();
                long fileVerified = verifyMapped(mapped);
                boolean ok = readVerified == o.count && fileVerified == o.count;
                out.printf("  verified %d/%d records via RDMA read, %d/%d in the server's mapped file: %s%n",
                        readVerified, o.count, fileVerified, o.count, ok ? "OK" : "MISMATCH");
                conn.disposeNow(PHASE_TIMEOUT);
                srv.disposeNow(PHASE_TIMEOUT);
                if (!ok) {
                    err.println("quickstart: FAILED: verification found mismatching records");
                    return FAILED;
                }
                out.println("quickstart: OK (every byte verified)");
                return OK;
            }
        }

        private long readBack(Cqflux client, RdmaConnection conn, PeerRegion remote, Arena arena) {
            int perChunk = (int) Math.max(1, Math.min(o.count, MAX_READ_CHUNK / o.size));
            int chunks = (o.count + perChunk - 1) / perChunk;
            int parallel = Math.min(o.concurrency, 4);
            long chunkBytes = (long) perChunk * o.size;
            MemorySegment dstMem = arena.allocate(chunkBytes * parallel, 64);
            Region dst = client.register(dstMem, RegionAccess.READ_DST);
            ConcurrentLinkedQueue<Integer> slots = new ConcurrentLinkedQueue<>();
            for (int i = 0; i < parallel; i++) {
                slots.add(i);
            }
            AtomicLong good = new AtomicLong();
            AtomicLong done = new AtomicLong();
            Disposable progress = progress("read back", done, o.count);
            long t0 = System.nanoTime();
            try {
                Flux.range(0, chunks)
                        .flatMap(c -> Mono.defer(() -> {
                            int slot = slots.poll();
                            int first = c * perChunk;
                            int n = Math.min(perChunk, o.count - first);
                            long len = (long) n * o.size;
                            MemorySegment buf = dstMem.asSlice(slot * chunkBytes, len);
                            return conn.read(dst, slot * chunkBytes, remote, (long) first * o.size, len)
                                    .publishOn(Schedulers.parallel())
                                    .doOnSuccess(v -> {
                                        good.addAndGet(verify(buf, first, n));
                                        done.addAndGet(n);
                                    })
                                    .doOnTerminate(() -> slots.add(slot))
                                    .doOnCancel(() -> slots.add(slot));
                        }), parallel, 1)
                        .then()
                        .block(PHASE_TIMEOUT);
            } finally {
                progress.dispose();
            }
            long nanos = System.nanoTime() - t0;
            out.printf("  read back: %d B in %.3f s: %.1f MB/s%n", total, nanos / 1e9, total / 1e6 / (nanos / 1e9));
            dst.close();
            return good.get();
        }

        private long verifyMapped(MemorySegment mapped) {
            return verify(mapped, 0, o.count);
        }

        /** {@return how many of the {@code n} records starting at {@code first} in {@code buf} are intact} */
        private long verify(MemorySegment buf, int first, int n) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment expected = a.allocate(o.size);
                long good = 0;
                int reported = 0;
                for (int r = 0; r < n; r++) {
                    fill(expected, first + r);
                    long m = buf.asSlice((long) r * o.size, o.size).mismatch(expected);
                    if (m == -1) {
                        good++;
                    } else if (reported++ < 3) {
                        err.printf("  record %d differs at byte %d%n", first + r, m);
                    }
                }
                return good;
            }
        }

        private Disposable progress(String what, AtomicLong done, long of) {
            if (o.quiet) {
                return () -> { };
            }
            long start = System.nanoTime();
            // A quarter second: the default run takes about a second on loopback.
            return Flux.interval(Duration.ofMillis(250)).subscribe(t -> {
                long d = done.get();
                double s = (System.nanoTime() - start) / 1e9;
                out.printf("    ... %s %d/%d (%.0f%%), %.0f ops/s%n", what, d, of, 100.0 * d / of, d / s);
            });
        }

        /** librpma binds exactly the port it is given (rpma_ep_listen(3)): ask the OS for a free one. */
        private static int freePort(InetAddress local) throws IOException {
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, local)) {
                return s.getLocalPort();
            }
        }

        private static String mib(long bytes) {
            return String.format("%.1f MiB", bytes / (1024.0 * 1024.0));
        }
    }
}
