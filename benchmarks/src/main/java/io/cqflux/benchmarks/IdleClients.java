package io.cqflux.benchmarks;

import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.TransportChoice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import reactor.core.publisher.Flux;

/**
 * The idle clients of {@link ScaleBench}'s split mode ({@code -P}), in a process of their own so
 * that their file descriptors count against this process's limit and not the server's: one
 * {@link Cqflux} (fabric/tcp, one loop, {@link WaitStrategy#BLOCKING}: an idle client must not
 * take CPU from the measured pair) connects {@code count} connections to {@code host:port},
 * {@value #IN_FLIGHT} at a time, prints {@code connected <count> fds <open fds> ms <connect time>}
 * and holds them until its standard input ends, then closes them all, prints {@code closed} and exits 0. Any
 * failure prints {@code failed <reason>} and exits 1.
 *
 * <p>Usage: {@code IdleClients <host> <port> <count> [<cq group, or default> [<keep-alive ms, 0: off, or default>]]}.
 */
public final class IdleClients {

    /** Connects in flight at once: well under the server's default pending-handshake limit (128). */
    static final int IN_FLIGHT = 16;

    private static final Duration TIMEOUT = Duration.ofSeconds(300);

    private IdleClients() {
    }

    /**
     * @param args {@code <host> <port> <count> [<connections per completion queue> [<keep-alive ms>]]}
     * @throws IOException when standard input cannot be read
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 3 || args.length > 5) {
            throw new IllegalArgumentException("usage: IdleClients <host> <port> <count>"
                    + " [<cq group, or default> [<keep-alive ms>]],"
                    + " got " + List.of(args));
        }
        String group = args.length >= 4 ? args[3] : "default";
        InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
        int count = Integer.parseInt(args[2]);
        if (count < 1) {
            throw new IllegalArgumentException("count " + count + " must be >= 1");
        }
        Cqflux.Builder builder = Cqflux.builder().transport(TransportChoice.FABRIC)
                .localAddress(InetAddress.getLoopbackAddress()).waitStrategy(WaitStrategy.BLOCKING).loops(1);
        if (!group.equals("default")) {
            builder.transportProperty(io.cqflux.core.spi.TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, group);
        }
        ScaleBench.keepAlive(builder, args.length == 5 ? args[4] : null);
        try (Cqflux client = builder.build()) {
            List<RdmaConnection> idle;
            long connectNanos;
            try {
                long t0 = System.nanoTime();
                idle = Flux.range(0, count).flatMap(i -> client.connect(server), IN_FLIGHT).collectList().block(TIMEOUT);
                connectNanos = System.nanoTime() - t0;
            } catch (RuntimeException e) {
                System.out.println("failed " + e);
                System.exit(1);
                return;
            }
            System.out.printf(Locale.ROOT, "connected %d fds %d ms %.1f%n", idle.size(), openFds(), connectNanos / 1e6);
            System.out.flush();
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII))) {
                while (in.readLine() != null) {
                    // held until the parent closes our standard input
                }
            }
            for (RdmaConnection c : idle) {
                c.close();
            }
        }
        System.out.println("closed");
    }

    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
