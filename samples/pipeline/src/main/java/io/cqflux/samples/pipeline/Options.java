package io.cqflux.samples.pipeline;

import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.TransportChoice;
import java.nio.file.Path;
import java.time.Duration;

/** The pipeline's command line, parsed. */
final class Options {
    static final String USAGE = """
            Usage: pipeline [options]

            Replicates a write-ahead log into a peer's memory: a pull-based source of records (each
            with a sequence number and a CRC32C) is batched and written durably into a ring that the
            peer exposes; a commit marker per batch (a write with immediate carrying the sequence,
            then a flush) notifies the peer's consumer, which reads the records in order from its
            ring, verifies sequence and checksum, and acknowledges what it consumed, which frees
            ring slots for the writer. Prints progress, writes a CSV and a PNG plot of throughput
            and in-flight operations over time. Exits 0 only when every record was verified.

            Options:
              --records N        records to replicate (default 2000000; ignored with --source)
              --source FILE      replicate the lines of FILE instead of generated records
              --payload BYTES    largest payload, 16..65520 (default 240; generated payloads are
                                 16..BYTES long); a ring slot is 16 B of header plus this, rounded
                                 up to 64
              --ring-slots N     slots in the peer's ring, 2..1048576 (default 8192)
              --batch N          records per batch, 1..ring-slots/2 (default 64)
              --consumer-delay-us N  the consumer sleeps N µs per batch (a slow consumer; default 0)
              --interval-ms N    progress and sample interval (default 500)
              --stall-timeout S  fail the run (exit 1, naming what stalled) when no record was
                                 produced, committed or verified for S seconds, 1..86400
                                 (default 30): a lost notification or a consumer that stopped
                                 ends the run instead of hanging it
              --timeout S        fail the run if it takes longer than S seconds in all
                                 (default: no limit; the stall timeout catches a hang)
              --out DIR          where pipeline.csv and pipeline.png go (default pipeline-out)
              --wait MODE        blocking | busy | adaptive[:SPINS] (default blocking)
              --transport T      auto | fabric | rpma (default fabric: libfabric tcp on loopback)
              --address HOST     address to listen on and connect to (default 127.0.0.1)
              --port N           port to listen on (default: a free one)
              --quiet            no progress lines
              --help             this text

            Exit status: 0 every record verified, 1 failure (lost, reordered or corrupted record,
            transport or operation error), 2 bad usage.
            """;

    long records = 2_000_000;
    Path source;
    int payload = 240;
    int ringSlots = 8192;
    int batch = 64;
    int consumerDelayMicros;
    Duration interval = Duration.ofMillis(500);
    Duration stallTimeout = Duration.ofSeconds(30);
    /** The whole run's bound; null: none (the stall watchdog is what ends a hung run). */
    Duration timeout;
    Path out = Path.of("pipeline-out");
    WaitStrategy wait = WaitStrategy.BLOCKING;
    String waitName = "blocking";
    TransportChoice transport = TransportChoice.FABRIC;
    String address = "127.0.0.1";
    int port;
    boolean quiet;
    boolean help;
    /** Test hook: the consumer finds this record (sequence number) with a flipped payload byte; -1: none. */
    long corruptRecord = -1;
    /**
     * Test hook: the consumer silently stops verifying (and acknowledging) once it has verified
     * this many records, as a consumer that hangs would; -1: never.
     */
    long consumerStopsAfter = -1;

    /** {@return the bytes of one ring slot: header and the largest payload, rounded up to 64} */
    int slotSize() {
        return (Record.HEADER + payload + 63) & ~63;
    }

    /**
     * Parses the arguments.
     *
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException with a message naming the bad option and its bound
     */
    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> o.help = true;
                case "--quiet", "-q" -> o.quiet = true;
                case "--records" -> o.records = longArg(args, ++i, a, 1, 1L << 40);
                case "--source" -> o.source = Path.of(value(args, ++i, a));
                case "--payload" -> o.payload = (int) longArg(args, ++i, a, 16, 65_520);
                case "--ring-slots" -> o.ringSlots = (int) longArg(args, ++i, a, 2, 1 << 20);
                case "--batch" -> o.batch = (int) longArg(args, ++i, a, 1, 1 << 19);
                case "--consumer-delay-us" -> o.consumerDelayMicros = (int) longArg(args, ++i, a, 0, 1_000_000);
                case "--interval-ms" -> o.interval = Duration.ofMillis(longArg(args, ++i, a, 10, 60_000));
                case "--stall-timeout" -> o.stallTimeout = Duration.ofSeconds(longArg(args, ++i, a, 1, 86_400));
                case "--timeout" -> o.timeout = Duration.ofSeconds(longArg(args, ++i, a, 1, 1L << 31));
                case "--out" -> o.out = Path.of(value(args, ++i, a));
                case "--wait" -> o.parseWait(value(args, ++i, a));
                case "--transport" -> {
                    String v = value(args, ++i, a);
                    o.transport = switch (v) {
                        case "auto" -> TransportChoice.AUTO;
                        case "fabric" -> TransportChoice.FABRIC;
                        case "rpma" -> TransportChoice.RPMA;
                        default -> throw new IllegalArgumentException("--transport " + v
                                + " is not one of auto, fabric, rpma");
                    };
                }
                case "--address" -> o.address = value(args, ++i, a);
                case "--port" -> o.port = (int) longArg(args, ++i, a, 1, 65535);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        // Paths are checked before anything connects: a bad one would otherwise show only after
        // the whole run (--out) or after the transports came up (--source).
        if (o.source != null) {
            // A file, or a pipe (/dev/stdin, <(zcat wal.gz)): anything readable but a directory.
            if (!java.nio.file.Files.exists(o.source)) {
                throw new IllegalArgumentException("--source " + o.source + " does not exist");
            }
            if (java.nio.file.Files.isDirectory(o.source)) {
                throw new IllegalArgumentException("--source " + o.source + " is a directory, not a file");
            }
            if (!java.nio.file.Files.isReadable(o.source)) {
                throw new IllegalArgumentException("--source " + o.source + " is not readable");
            }
        }
        if (o.out != null) {
            // The directory or its nearest existing ancestor must be a writable directory: the
            // report is written after the run, and nothing should fail only then.
            java.nio.file.Path at = o.out.toAbsolutePath();
            while (at != null && !java.nio.file.Files.exists(at)) {
                at = at.getParent();
            }
            if (at == null || !java.nio.file.Files.isDirectory(at)) {
                throw new IllegalArgumentException("--out " + o.out + (at == null ? " has no existing ancestor"
                        : ": " + at + " exists and is not a directory"));
            }
            if (!java.nio.file.Files.isWritable(at)) {
                throw new IllegalArgumentException("--out " + o.out + ": " + at + " is not writable");
            }
        }
        if (o.batch > o.ringSlots / 2) {
            throw new IllegalArgumentException("--batch " + o.batch + " exceeds half the ring ("
                    + o.ringSlots / 2 + " of --ring-slots " + o.ringSlots + ")");
        }
        if ((long) o.ringSlots * o.slotSize() > (1L << 30)) {
            throw new IllegalArgumentException("--ring-slots " + o.ringSlots + " x slot " + o.slotSize()
                    + " B exceeds the 1 GiB ring bound");
        }
        return o;
    }

    private void parseWait(String v) {
        waitName = v;
        if (v.equals("blocking")) {
            wait = WaitStrategy.BLOCKING;
        } else if (v.equals("busy")) {
            wait = WaitStrategy.BUSY_POLL;
        } else if (v.equals("adaptive")) {
            wait = WaitStrategy.adaptive(1000);
        } else if (v.startsWith("adaptive:")) {
            String n = v.substring("adaptive:".length());
            try {
                int spins = Integer.parseInt(n);
                if (spins < 1) {
                    throw new NumberFormatException();
                }
                wait = WaitStrategy.adaptive(spins);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--wait adaptive:" + n + ": the spin budget must be an integer in [1, "
                        + Integer.MAX_VALUE + "]");
            }
        } else {
            throw new IllegalArgumentException("--wait " + v + " is not one of blocking, busy, adaptive[:SPINS]");
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static long longArg(String[] args, int i, String option, long min, long max) {
        String v = value(args, i, option);
        long n;
        try {
            n = Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + v + " is not a number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(option + " " + v + " is outside [" + min + ", " + max + "]");
        }
        return n;
    }
}
