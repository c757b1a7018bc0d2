package io.cqflux.samples.pipeline;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.WriteRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The pipeline sample: a write-ahead log replicated into a peer's memory.
 *
 * <pre>
 *  source (Flux.generate: pull-based; records with sequence number and CRC32C)
 *    -&gt; buffer(batch)
 *    -&gt; reserve ring slots (waits for the consumer's acknowledgements: the ring never overruns)
 *    -&gt; copy into the local staging mirror of the ring
 *    -&gt; writeAll(durable writes into the peer's ring)   at most sendCredits/2 in flight
 *    -&gt; per batch, once its records are durable: commit = write with immediate (the new head, into
 *       the ring's head word; the immediate is its low 32 bits) + flush of that word
 *  peer: receive() the commit notifications -&gt; read the records in order from its own ring,
 *        verify sequence and CRC32C -&gt; send its tail back (frees slots for the writer)
 * </pre>
 *
 * <p>Every stage pulls: nothing asks the source for more than the ring has room for, plus the
 * batch being assembled. A source faster than the link is therefore slowed to the link's (or the
 * consumer's) pace, and memory stays flat; the run reports how far ahead the source ever got.
 *
 * <p>Run: {@code ./cqflux demo pipeline --help}.
 */
public final class Pipeline {
    /** Exit status when every record verified. */
    static final int OK = 0;
    /** Exit status on any failure. */
    static final int FAILED = 1;
    /** Exit status on bad usage. */
    static final int USAGE = 2;

    /**
     * Commits in flight at once: each is two round trips (write with immediate, flush), so a
     * window keeps them from pacing the pipeline; each holds one of the staging control area's
     * head words ({@link Consumer#CONTROL} / 8 of them) until it completes.
     */
    static final int COMMIT_WINDOW = 16;
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);

    private Pipeline() {
    }

    /**
     * Runs the pipeline and exits with its status.
     *
     * @param args the command line ({@code --help} lists it)
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err).status());
    }

    /** What one run measured. */
    record Result(int status, long records, long verified, long verifiedBytes, double seconds, long maxAhead,
                  long aheadBound, long ringWaits, int maxInFlight, int sendCredits, int maxWaiting, long peakHeap, long peakLive,
                  long peakRss,
                  double sourceRecordsPerSecond, String failure) {
        double recordsPerSecond() {
            return verified / seconds;
        }

        double mbPerSecond() {
            return verifiedBytes / 1e6 / seconds;
        }
    }

    static Result run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("pipeline: " + e.getMessage());
            err.print(Options.USAGE);
            return failed(USAGE, e.getMessage());
        }
        if (o.help) {
            out.print(Options.USAGE);
            return failed(OK, null);
        }
        if (o.out != null) {
            // The report is written after the run: a directory that cannot take it fails now,
            // not after the whole run (Options' check of the nearest ancestor cannot tell, e.g.
            // root under /proc).
            try {
                Files.createDirectories(o.out);
                Path probe = Files.createTempFile(o.out, ".pipeline", ".probe");
                Files.delete(probe);
            } catch (IOException | RuntimeException e) {
                String why = "--out " + o.out + " cannot take the report: " + e;
                err.println("pipeline: " + why);
                return failed(USAGE, why);
            }
        }
        return run(o, out, err);
    }

    static Result run(Options o, PrintStream out, PrintStream err) {
        try {
            return new Run(o, out).run();
        } catch (Throwable t) {
            err.println("pipeline: FAILED: " + t);
            for (Throwable c = t.getCause(); c != null; c = c.getCause()) {
                err.println("  caused by: " + c);
            }
            return failed(FAILED, String.valueOf(t));
        }
    }

    private static Result failed(int status, String why) {
        return new Result(status, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, why);
    }

    /** The generated source's state. */
    private static final class Generator {
        final byte[] scratch;
        long seq;

        Generator(byte[] scratch) {
            this.scratch = scratch;
        }
    }

    /** One batch on its way: its slots and how many of its write requests have completed. */
    private static final class Batch {
        final long no;
        final long first;
        final int count;
        final long bytes;
        final int parts;
        int done;

        Batch(long no, long first, int count, long bytes, int parts) {
            this.no = no;
            this.first = first;
            this.count = count;
            this.bytes = bytes;
            this.parts = parts;
        }
    }

    /** One run. */
    private static final class Run {
        private final Options o;
        private final PrintStream out;
        private final int slotSize;
        private final RingGate gate;
        private final Queue<Batch> pending = new ConcurrentLinkedQueue<>();
        private final AtomicLong produced = new AtomicLong();
        private final AtomicLong committed = new AtomicLong();
        private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        private Scheduler producerThread;
        private volatile long maxAhead;
        private volatile long peakHeap;
        private volatile long peakLive;
        /** The most operations seen waiting for a send credit (sampled). */
        private volatile int maxWaiting;
        private long batches;

        Run(Options o, PrintStream out) {
            this.o = o;
            this.out = out;
            this.slotSize = o.slotSize();
            this.gate = new RingGate(o.ringSlots);
        }

        Result run() throws IOException {
            InetAddress local = InetAddress.getByName(o.address);
            long ringBytes = Consumer.CONTROL + (long) o.ringSlots * slotSize;
            Scheduler consumerThread = Schedulers.newSingle("pipeline-consumer");
            producerThread = Schedulers.newSingle("pipeline-source");
            try (Arena arena = Arena.ofShared();
                 Cqflux peer = Cqflux.builder().transport(o.transport).localAddress(local).waitStrategy(o.wait)
                         .threadNamePrefix("peer").build();
                 Cqflux writer = Cqflux.builder().transport(o.transport).localAddress(local).waitStrategy(o.wait)
                         .threadNamePrefix("writer").build()) {
                // The peer: its ring (head word + slots) and a word to send acknowledgements from.
                MemorySegment ringMem = arena.allocate(ringBytes, 4096);
                Region ring = peer.register(ringMem, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);
                MemorySegment ackMem = arena.allocate(64, 64);
                Region ackSrc = peer.register(ackMem, RegionAccess.SEND);
                Consumer consumer = new Consumer(o, ringMem, ackMem, ackSrc, consumerThread);
                RdmaServer srv = peer.bind(new InetSocketAddress(local, o.port != 0 ? o.port : freePort(local)),
                        consumer::serve, ring).block(SETUP_TIMEOUT);

                // The writer: a local mirror of the ring to stage records in (a slot is reused only
                // once the consumer has acknowledged it, long after its write completed).
                RdmaConnection conn = writer.connect(srv.address()).block(SETUP_TIMEOUT);
                PeerRegion remote = conn.remoteRegion(0);
                MemorySegment staging = arena.allocate(ringBytes, 4096);
                Region stagingRegion = writer.register(staging, RegionAccess.WRITE_SRC);

                long aheadBound = (long) o.ringSlots + 3L * o.batch;
                out.printf("cqflux pipeline: transport %s, %s, ring %d slots x %d B (%.1f MiB), batch %d%n",
                        writer.transportName(), o.source == null ? o.records + " generated records" : "lines of " + o.source,
                        o.ringSlots, slotSize, ringBytes / 1048576.0, o.batch);
                out.printf("  connected: %s; send credits %d (writeAll keeps at most %d writes in flight), flush %s%n",
                        conn.description(), conn.sendCredits(), Math.max(1, conn.sendCredits() / 2),
                        remote.strongestFlush());

                Mono<Void> acks = conn.receive(in -> in.data().get(Record.LONG, 0))
                        .doOnNext(gate::acknowledge)
                        .then(Mono.never());
                Mono<Long> written = replicate(conn, remote, stagingRegion, staging);
                Mono<Long> all = written.flatMap(n -> Flux.interval(Duration.ofMillis(1))
                        .filter(t -> consumer.tail() >= n)
                        .next()
                        .thenReturn(n));

                long t0 = System.nanoTime();
                samples.add(new Sample(0, 0, 0, 0, conn.inFlight(), conn.waiting(), gate.occupied(), 0, heapUsed()));
                Disposable progress = sampler(t0, conn, consumer);
                Long total;
                try {
                    Mono<Long> outcome = Mono.firstWithSignal(all, consumer.failure().then(Mono.empty()),
                            acks.then(Mono.empty()), watchdog(consumer).then(Mono.empty()));
                    // No hidden bound: a run that stops moving fails through the watchdog; a
                    // bound on the whole run is the caller's choice (--timeout).
                    total = o.timeout == null ? outcome.block() : outcome.block(o.timeout);
                } catch (RuntimeException e) {
                    // A record that failed verification closes the consumer's connection, and the
                    // writer may see that end first: report the cause, not its echo.
                    IllegalStateException cause = consumer.firstFailure();
                    if (cause != null && cause != e) {
                        cause.addSuppressed(e);
                        throw cause;
                    }
                    throw e;
                } finally {
                    progress.dispose();
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                finalSample(t0, conn, consumer);
                long verified = consumer.tail();
                // Measured after the run, its code compiled as during the run: the pace the source
                // keeps when nothing holds it back.
                double sourceRate = o.source == null ? sourceAlone() : 0;
                if (sourceRate > 0) {
                    out.printf("  the source alone makes %,.0f records/s (%.0f MB/s), measured after the run%n",
                            sourceRate, sourceRate * (Record.HEADER + (16 + o.payload) / 2.0) / 1e6);
                }
                Result r = new Result(total != null && verified == total ? OK : FAILED, total == null ? 0 : total,
                        verified, consumer.verifiedBytes(), seconds, maxAhead, aheadBound, gate.waits(),
                        conn.maxInFlight(), conn.sendCredits(), maxWaiting, peakHeap, peakLive, peakRss(), sourceRate,
                        total == null ? "the pipeline ended without a result" : null);
                report(r, conn);
                conn.disposeNow(SETUP_TIMEOUT);
                srv.disposeNow(SETUP_TIMEOUT);
                return r;
            } finally {
                consumerThread.dispose();
                producerThread.dispose();
            }
        }

        /** The writer's pipeline. {@return the number of records written and committed} */
        private Mono<Long> replicate(RdmaConnection conn, PeerRegion remote, Region stagingRegion,
                                     MemorySegment staging) {
            // The source runs on its own thread: demand arrives from completions on the event loop,
            // and subscribeOn moves each request(n), and so the generator's work, off it.
            Flux<WriteRequest> requests = source()
                    .subscribeOn(producerThread)
                    .doOnNext(r -> {
                        long ahead = r.seq() + 1 - gate.consumed();
                        if (ahead > maxAhead) {
                            maxAhead = ahead;
                        }
                        produced.incrementAndGet();
                    })
                    .buffer(o.batch)
                    // Waits for room in the peer's ring: the acknowledgements open it.
                    .concatMap(list -> gate.reserve(list.size()).map(first -> stage(first, list, remote, stagingRegion,
                            staging)), 1)
                    .concatMapIterable(reqs -> reqs, 1);
            // writeAll takes a request only when one of its sendCredits/2 writes completed.
            return conn.writeAll(requests)
                    .<Batch>handle((res, sink) -> {
                        Batch b = pending.peek();
                        if (++b.done == b.parts) {
                            pending.poll();
                            sink.next(b);
                        }
                    })
                    .flatMapSequential(b -> commit(conn, remote, stagingRegion, staging, b), COMMIT_WINDOW, 1)
                    .doOnNext(b -> committed.addAndGet(b.count))
                    .then(Mono.fromCallable(committed::get));
        }

        /**
         * The stall watchdog: fails with an error naming the stage that stopped when neither the
         * source, the commits, the consumer nor its acknowledgements moved for the stall timeout.
         * A lost commit notification, a consumer that stopped, or an operation that never completes
         * would otherwise hang the run (and a test or a script running it) with no word.
         * {@return a Mono that only ever fails}
         */
        private Mono<Void> watchdog(Consumer consumer) {
            long period = Math.max(10, Math.min(1000, o.stallTimeout.toMillis() / 10));
            long[] last = {-1, -1, -1, -1};
            long[] since = {System.nanoTime()};
            return Flux.interval(Duration.ofMillis(period))
                    .handle((Long tick, SynchronousSink<Void> sink) -> {
                        long[] now = {produced.get(), committed.get(), consumer.tail(), gate.consumed()};
                        long t = System.nanoTime();
                        if (!Arrays.equals(now, last)) {
                            System.arraycopy(now, 0, last, 0, now.length);
                            since[0] = t;
                        } else if (t - since[0] >= o.stallTimeout.toNanos()) {
                            sink.error(new IllegalStateException(stalled(now[0], now[1], now[2], now[3])));
                        }
                    })
                    .then();
        }

        /** {@return what the watchdog says: the counts, the last sequence numbers, the stage that stopped} */
        private String stalled(long made, long committedRecords, long verified, long acknowledged) {
            String which;
            if (committedRecords > verified) {
                which = "the consumer stopped verifying: " + (committedRecords - verified)
                        + " committed records are unverified (a lost commit notification or a stuck consumer)";
            } else if (verified > acknowledged) {
                which = "the consumer's acknowledgements stopped arriving (verified up to " + verified
                        + ", acknowledged up to " + acknowledged + ")";
            } else if (made > committedRecords) {
                which = "writes or commits stopped completing: " + (made - committedRecords)
                        + " records produced but not committed";
            } else {
                which = "the source stopped producing";
            }
            return String.format("pipeline stalled: no progress for %d s (--stall-timeout): %s; records produced %d,"
                            + " written and committed %d, verified %d (last verified sequence %d), acknowledged %d",
                    o.stallTimeout.toSeconds(), which, made, committedRecords, verified, verified - 1, acknowledged);
        }

        /** The records: generated, or the lines of a file; pulled one at a time either way. */
        private Flux<Record> source() {
            if (o.source == null) {
                // One scratch buffer per subscription: generate calls its generator one call at a time.
                return Flux.generate(() -> new Generator(new byte[o.payload]), (g, sink) -> {
                    if (g.seq == o.records) {
                        sink.complete();
                    } else {
                        sink.next(Record.generated(g.seq++, o.payload, g.scratch));
                    }
                    return g;
                });
            }
            Path file = o.source;
            return Flux.using(() -> Files.newBufferedReader(file, StandardCharsets.UTF_8),
                    (BufferedReader reader) -> Flux.<Record, long[]>generate(() -> new long[1], (seq, sink) -> {
                        String line;
                        try {
                            line = reader.readLine();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        if (line == null) {
                            sink.complete();
                            return seq;
                        }
                        byte[] b = line.getBytes(StandardCharsets.UTF_8);
                        if (b.length > o.payload) {
                            sink.error(new IllegalArgumentException(file + " line " + (seq[0] + 1) + " has " + b.length
                                    + " bytes, more than --payload " + o.payload));
                            return seq;
                        }
                        sink.next(Record.encode(seq[0]++, b, b.length));
                        return seq;
                    }), reader -> {
                        try {
                            reader.close();
                        } catch (IOException ignored) {
                            // read-only: nothing to lose
                        }
                    });
        }

        /** Copies a batch into its staging slots; {@return its write requests (two where it wraps)} */
        private List<WriteRequest> stage(long first, List<Record> records, PeerRegion remote, Region stagingRegion,
                                         MemorySegment staging) {
            long bytes = 0;
            for (int i = 0; i < records.size(); i++) {
                Record r = records.get(i);
                long off = Consumer.CONTROL + ((first + i) % o.ringSlots) * slotSize;
                MemorySegment.copy(MemorySegment.ofArray(r.bytes()), 0, staging, off, r.bytes().length);
                bytes += r.bytes().length;
            }
            List<WriteRequest> reqs = new ArrayList<>(2);
            long start = first % o.ringSlots;
            long n1 = Math.min(records.size(), o.ringSlots - start);
            long off1 = Consumer.CONTROL + start * slotSize;
            reqs.add(new WriteRequest(remote, off1, stagingRegion, off1, n1 * slotSize, true));
            if (n1 < records.size()) {
                reqs.add(new WriteRequest(remote, Consumer.CONTROL, stagingRegion, Consumer.CONTROL,
                        (records.size() - n1) * slotSize, true));
            }
            pending.add(new Batch(batches++, first, records.size(), bytes, reqs.size()));
            return reqs;
        }

        /**
         * The batch's commit marker, once its records are durable: the new head into the ring's
         * head word, with the head's low 32 bits as the immediate (the consumer's notification),
         * then a flush of that word, so that the marker is as durable as the records it commits.
         */
        private Mono<Batch> commit(RdmaConnection conn, PeerRegion remote, Region stagingRegion, MemorySegment staging,
                                   Batch b) {
            return Mono.defer(() -> {
                long head = b.first + b.count;
                long word = (b.no % (Consumer.CONTROL / 8)) * 8;
                staging.set(Record.LONG, word, head);
                return conn.writeWithImmediate(remote, 0, stagingRegion, word, 8, (int) head)
                        .then(conn.flush(remote, 0, 8, remote.strongestFlush()))
                        .thenReturn(b);
            });
        }

        /** How fast the source is alone, for a quarter of a second: the pace it is held back from. */
        private double sourceAlone() {
            byte[] scratch = new byte[o.payload];
            double rate = 0;
            long n = 0;
            long sink = 0;
            // Four rounds of a quarter second; the best counts (on a shared machine the others
            // may have lost the core).
            for (int round = 0; round < 4; round++) {
                long t0 = System.nanoTime();
                long deadline = t0 + 250_000_000L;
                long start = n;
                while (System.nanoTime() < deadline) {
                    for (int i = 0; i < 1000; i++) {
                        sink += Record.generated(n++, o.payload, scratch).bytes().length;
                    }
                }
                rate = Math.max(rate, (n - start) / ((System.nanoTime() - t0) / 1e9));
            }
            return sink == 42 ? 0 : rate;
        }

        private Disposable sampler(long t0, RdmaConnection conn, Consumer consumer) {
            return Flux.interval(o.interval, o.interval).subscribe(t -> {
                Sample s = sample(t0, conn, consumer);
                if (!o.quiet) {
                    out.printf("  %6.1f s %,10d rec/s %7.1f MB/s  in-flight %3d/%d ops (%d waiting)  ring %3.0f%%"
                                    + " (%d/%d)  source ahead %,d  heap %d MB%n", s.seconds(), (long) s.recordsPerSecond(),
                            s.mbPerSecond(), s.inFlight(), conn.sendCredits(), s.waiting(),
                            100.0 * s.ringOccupied() / o.ringSlots, s.ringOccupied(), o.ringSlots,
                            s.producerAhead(), s.heapUsed() >> 20);
                }
            });
        }

        private long lastVerified;
        private long lastBytes;
        private double lastSeconds;

        /** The end: a last sample unless the interval had barely begun (its rates would be noise). */
        private synchronized void finalSample(long t0, RdmaConnection conn, Consumer consumer) {
            double now = (System.nanoTime() - t0) / 1e9;
            if (now - lastSeconds >= o.interval.toNanos() / 4e9) {
                sample(t0, conn, consumer);
            }
        }

        /**
         * {@return the heap in use right after the most recent collection, summed over the heap's
         * pools (MemoryPoolMXBean.getCollectionUsage): what survived, so what the process retains;
         * it would grow if the pipeline buffered records. 0 before the first collection}
         */
        private static long liveHeap() {
            long live = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                MemoryUsage afterGc = pool.getType() == MemoryType.HEAP ? pool.getCollectionUsage() : null;
                if (afterGc != null) {
                    live += afterGc.getUsed();
                }
            }
            return live;
        }

        private static long heapUsed() {
            Runtime rt = Runtime.getRuntime();
            return rt.totalMemory() - rt.freeMemory();
        }

        private synchronized Sample sample(long t0, RdmaConnection conn, Consumer consumer) {
            double now = (System.nanoTime() - t0) / 1e9;
            long v = consumer.tail();
            long b = consumer.verifiedBytes();
            double dt = Math.max(1e-6, now - lastSeconds);
            long heap = heapUsed();
            if (heap > peakHeap) {
                peakHeap = heap;
            }
            long live = liveHeap();
            if (live > peakLive) {
                peakLive = live;
            }
            int waiting = conn.waiting();
            if (waiting > maxWaiting) {
                maxWaiting = waiting;
            }
            Sample s = new Sample(now, v, (v - lastVerified) / dt, (b - lastBytes) / 1e6 / dt, conn.inFlight(),
                    waiting, gate.occupied(), produced.get() - gate.consumed(), heap);
            lastVerified = v;
            lastBytes = b;
            lastSeconds = now;
            samples.add(s);
            return s;
        }

        private void report(Result r, RdmaConnection conn) throws IOException {
            out.printf("  replicated %,d records (%.1f MB) in %.2f s: %,.0f records/s, %.1f MB/s%n", r.verified(),
                    r.verifiedBytes() / 1e6, r.seconds(), r.recordsPerSecond(), r.mbPerSecond());
            out.printf("  backpressure: the source was at most %,d records ahead of the consumer (bound: ring %d +"
                            + " 3 batches = %d); the ring was full %,d times; in flight at most %d of %d credits%n",
                    r.maxAhead(), o.ringSlots, r.aheadBound(), r.ringWaits(), r.maxInFlight(), r.sendCredits());
            if (r.sourceRecordsPerSecond() > r.recordsPerSecond()) {
                out.printf("  the source was held to the link's pace: %.1fx slower than it runs alone%n",
                        r.sourceRecordsPerSecond() / r.recordsPerSecond());
            }
            out.printf("  memory: heap retained after a collection at most %d MB, heap used at most %d MB (sampled,"
                            + " garbage included), peak RSS %s%n", r.peakLive() >> 20, r.peakHeap() >> 20,
                    r.peakRss() > 0 ? (r.peakRss() >> 20) + " MB" : "unknown");
            Files.createDirectories(o.out);
            Path csv = o.out.resolve("pipeline.csv");
            List<Sample> copy;
            synchronized (samples) {
                copy = new ArrayList<>(samples);
            }
            List<String> lines = new ArrayList<>();
            lines.add(Sample.CSV_HEADER);
            for (Sample s : copy) {
                lines.add(s.csv());
            }
            Files.write(csv, lines);
            Path png = o.out.resolve("pipeline.png");
            Plot.write(copy, String.format("cqflux pipeline over %s: %,d records, %.1f MB/s average", conn.description()
                    .split(" ")[0], r.verified(), r.mbPerSecond()), conn.sendCredits(), o.ringSlots, png);
            out.printf("  wrote %s and %s%n", csv, png);
            if (r.status() == OK) {
                out.printf("pipeline: OK (%,d records verified in order, checksums intact)%n", r.verified());
            } else {
                out.printf("pipeline: FAILED: %,d of %,d records verified%n", r.verified(), r.records());
            }
        }

        /** librpma binds exactly the port it is given (rpma_ep_listen(3)): ask the OS for a free one. */
        private static int freePort(InetAddress local) throws IOException {
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, local)) {
                return s.getLocalPort();
            }
        }
    }

    /** {@return the process's peak resident set (VmHWM in /proc/self/status), or 0 where unknown} */
    static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}
