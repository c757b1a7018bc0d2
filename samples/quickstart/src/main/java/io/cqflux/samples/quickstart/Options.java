package io.cqflux.samples.quickstart;

import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.TransportChoice;
import java.nio.file.Path;

/** The quickstart's command line, parsed. */
final class Options {
    static final String USAGE = """
            Usage: quickstart [options]

            Starts a server that exposes a memory-mapped file as an RDMA region, connects a client,
            performs durable writes (write + flush) into it, reads everything back and verifies every
            byte, also in the server's mapped file. Exits 0 only when every byte verified.

            Options:
              --count N          records to write (default 20000)
              --size BYTES       record size, 8..1048576 (default 4096)
              --concurrency N    operations in flight, 1..1024 (default 32)
              --wait MODE        blocking | busy | adaptive[:SPINS] (default blocking)
              --transport T      auto | fabric | rpma (default auto: rpma when an RDMA device is
                                 usable, else libfabric tcp on loopback)
              --provider P       the libfabric provider for --transport fabric: tcp (default) or
                                 verbs (an RDMA device, e.g. Soft-RoCE; see the guide's tcp/verbs table)
              --address HOST     address to listen on and connect to (default 127.0.0.1)
              --port N           port to listen on (default: a free one; librpma cannot pick one)
              --file PATH        the server's file (default: a new file in a temp directory, deleted
                                 afterwards)
              --quiet            no progress lines
              --help             this text

            Exit status: 0 success, 1 failure (transport, operation or verification), 2 bad usage.
            """;

    int count = 20_000;
    int size = 4096;
    int concurrency = 32;
    WaitStrategy wait = WaitStrategy.BLOCKING;
    String waitName = "blocking";
    TransportChoice transport = TransportChoice.AUTO;
    /** The libfabric provider; null: the transport's default (tcp). */
    String provider;
    String address = "127.0.0.1";
    int port;
    Path file;
    boolean quiet;
    boolean help;
    /** Test hook: corrupt one byte of the server's file before verification. */
    boolean injectCorruption;

    /**
     * Parses the arguments.
     *
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException with a message naming the bad option
     */
    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--help", "-h" -> o.help = true;
                case "--quiet", "-q" -> o.quiet = true;
                case "--count" -> o.count = intArg(args, ++i, a, 1, 100_000_000);
                case "--size" -> o.size = intArg(args, ++i, a, 8, 1 << 20);
                case "--concurrency" -> o.concurrency = intArg(args, ++i, a, 1, 1024);
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
                case "--provider" -> {
                    String v = value(args, ++i, a);
                    if (!v.equals("tcp") && !v.equals("verbs")) {
                        throw new IllegalArgumentException("--provider " + v + " is not one of tcp, verbs");
                    }
                    o.provider = v;
                }
                case "--address" -> o.address = value(args, ++i, a);
                case "--port" -> o.port = intArg(args, ++i, a, 1, 65535);
                case "--file" -> o.file = Path.of(value(args, ++i, a));
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        // Checked before anything connects: a bad path would otherwise show only after the run began.
        if (o.file != null) {
            java.nio.file.Path dir = o.file.toAbsolutePath().getParent();
            if (java.nio.file.Files.isDirectory(o.file)) {
                throw new IllegalArgumentException("--file " + o.file + " is a directory");
            }
            if (dir != null && !java.nio.file.Files.isDirectory(dir)) {
                throw new IllegalArgumentException("--file " + o.file + ": its directory " + dir + " does not exist");
            }
        }
        if (o.provider != null && o.transport != TransportChoice.FABRIC) {
            throw new IllegalArgumentException("--provider " + o.provider + " chooses a libfabric provider: it needs"
                    + " --transport fabric (the transport is " + o.transport.name().toLowerCase(java.util.Locale.ROOT) + ")");
        }
        if ((long) o.count * o.size > (1L << 40)) {
            throw new IllegalArgumentException("--count " + o.count + " x --size " + o.size + " exceeds 1 TiB");
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

    private static int intArg(String[] args, int i, String option, int min, int max) {
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
        return (int) n;
    }
}
