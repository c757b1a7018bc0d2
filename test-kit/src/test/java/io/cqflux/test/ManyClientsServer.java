package io.cqflux.test;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The server of {@link ManyClientsTest}, in its own JVM: at the native per-connection cost the
 * fabric/tcp transport has, one process cannot hold both ends of thousands of connections within
 * the machine's fd limit. A fabric/tcp cqflux server on 127.0.0.1 exposing one zeroed region
 * ({@code WRITE_DST}, {@code READ_SRC}); it prints {@code READY <port>} and then answers one line
 * per command on stdin:
 *
 * <ul>
 *   <li>{@code STAT}: {@code STAT <open fds> <resident KiB> <open connections> <accepted so far>};</li>
 *   <li>{@code LONG <offset>}: {@code LONG <the region's 8 bytes there, decimal>}.</li>
 * </ul>
 *
 * <p>It exits when its stdin ends, so it never outlives the test JVM.
 */
final class ManyClientsServer {
    private ManyClientsServer() {
    }

    /**
     * @param args the region's size in bytes
     */
    public static void main(String[] args) throws IOException {
        long size = Long.parseLong(args[0]);
        InetAddress lo = InetAddress.getLoopbackAddress();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        AtomicInteger open = new AtomicInteger();
        AtomicInteger accepted = new AtomicInteger();
        Cqflux cq = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).build();
        MemorySegment mem = Arena.global().allocate(size, 64);
        Region r = cq.register(mem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        RdmaServer s = cq.bind(new InetSocketAddress(lo, 0), r).block(Duration.ofSeconds(20));
        s.connections().subscribe(c -> {
            open.incrementAndGet();
            accepted.incrementAndGet();
            c.onDispose().subscribe(null, null, open::decrementAndGet);
        });
        out.println("READY " + s.address().getPort());
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            switch (f[0]) {
                case "STAT" -> out.println("STAT " + openFds() + " " + residentKib() + " " + open.get() + " "
                        + accepted.get());
                case "LONG" -> out.println("LONG " + mem.get(ValueLayout.JAVA_LONG, Long.parseLong(f[1])));
                default -> out.println("ERR unknown command " + line);
            }
            out.flush();
        }
        Runtime.getRuntime().halt(0);
    }

    /** {@return this process's open file descriptors} */
    static long openFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return this process's resident set in KiB ({@code VmRSS} of /proc/self/status)} */
    static long residentKib() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS line in /proc/self/status");
    }

    /** A running server process and its command channel. */
    static final class Handle implements AutoCloseable {
        private final Process process;
        private final int port;
        private final BlockingQueue<String> lines;
        private final PrintStream commands;

        private Handle(Process process, int port, BlockingQueue<String> lines) {
            this.process = process;
            this.port = port;
            this.lines = lines;
            this.commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        InetSocketAddress address() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        }

        /** {@return {open fds, resident KiB, open connections, accepted connections}} */
        long[] stat() {
            String[] f = command("STAT", "STAT ").split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])};
        }

        long longAt(long offset) {
            return Long.parseLong(command("LONG " + offset, "LONG "));
        }

        private synchronized String command(String cmd, String answer) {
            commands.println(cmd);
            try {
                String line = lines.poll(20, TimeUnit.SECONDS);
                if (line == null || !line.startsWith(answer)) {
                    throw new AssertionError("the server process answered " + (line == null ? "nothing within 20 s"
                            : line) + " to " + cmd + (process.isAlive() ? "" : " (it has exited)"));
                }
                return line.substring(answer.length()).trim();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for the server's answer to " + cmd, e);
            }
        }

        @Override
        public void close() {
            commands.close(); // its stdin ends: it halts
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    /**
     * Starts a server process with a fixed, pre-touched heap (so that its resident size follows
     * native memory, not heap growth) and waits (at most 30 s) for it to listen.
     */
    static Handle start(long regionSize) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xms192m", "-Xmx192m",
                "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), ManyClientsServer.class.getName(), Long.toString(regionSize)));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the server process: " + cmd, e);
        }
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().name("many-clients-server-" + p.pid()).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the process died: its commands fail with "nothing within 20 s"
            }
        });
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            String line = null;
            while (System.nanoTime() < end && (line == null || !line.startsWith("READY "))) {
                line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line == null && !p.isAlive()) {
                    break;
                }
            }
            if (line == null || !line.startsWith("READY ")) {
                p.destroyForcibly();
                throw new AssertionError("the server process ended or took over 30 s before listening; exit "
                        + (p.isAlive() ? "none" : p.exitValue()));
            }
            return new Handle(p, Integer.parseInt(line.split(" ")[1]), lines);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new AssertionError("interrupted waiting for the server process", e);
        }
    }
}
