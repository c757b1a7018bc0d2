package io.cqflux.reactor;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A peer in its own JVM for the fault tests: binds a fabric/tcp server on 127.0.0.1, port 0,
 * exposing one region of {@link FaultRig#SIZE} bytes, prints {@code PORT <n>} on stdout and serves
 * until killed or until its stdin ends (so it never outlives the test JVM).
 *
 * <p>{@link #start()} launches it with the test JVM's own {@code java}, class path and native
 * access flag.
 */
final class PeerProcess {
    private PeerProcess() {
    }

    /**
     * @param args none; or the port to bind and a generation: the region is then
     *     {@link #regionSize(int)} bytes and its first 8 bytes hold the generation (native order)
     */
    public static void main(String[] args) throws IOException {
        List<RdmaConnection> keep = new ArrayList<>();
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        int generation = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        try (Cqflux cq = FaultRig.fabric().build()) {
            java.lang.foreign.MemorySegment mem = Arena.global().allocate(regionSize(generation), 64);
            mem.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, generation);
            Region r = cq.register(mem, FaultRig.ALL);
            RdmaServer s = cq.bind(new InetSocketAddress(FaultRig.LO, port), r).block(Duration.ofSeconds(10));
            s.connections().subscribe(keep::add);
            System.out.println("PORT " + s.address().getPort());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the parent goes away
            }
        }
    }

    /** A running peer: its process and the address it serves. */
    record Handle(Process process, InetSocketAddress address) {
        long pid() {
            return process.pid();
        }

        /** Sends a signal with kill(1), bounded. */
        void signal(String sig) {
            try {
                Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid())).inheritIO().start();
                if (!k.waitFor(5, TimeUnit.SECONDS)) {
                    k.destroyForcibly();
                }
            } catch (IOException e) {
                throw new AssertionError("kill -" + sig + " " + pid() + " failed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** SIGCONT (in case it was stopped), then SIGKILL, and wait (bounded). */
        void destroy() {
            if (process.isAlive()) {
                signal("CONT");
                process.destroyForcibly();
            }
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@return the size of the region a peer of {@code generation} exposes: smaller by 4 KiB per generation} */
    static long regionSize(int generation) {
        return FaultRig.SIZE - 4096L * generation;
    }

    /** Starts a peer and waits (at most 30 s) for its port. */
    static Handle start() throws IOException {
        return start(List.of());
    }

    /**
     * Starts a peer on {@code port} exposing a region of {@link #regionSize(int)} bytes that
     * begins with {@code generation}, and waits (at most 30 s) for it to listen.
     */
    static Handle start(int port, int generation) throws IOException {
        return start(List.of(Integer.toString(port), Integer.toString(generation)));
    }

    private static Handle start(List<String> args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), PeerProcess.class.getName()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        Handle h = null;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            Thread watchdog = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(30_000);
                    p.destroyForcibly();
                } catch (InterruptedException e) {
                    // the port came in time
                }
            });
            String line;
            while ((line = out.readLine()) != null && !line.startsWith("PORT ")) {
                // skip anything else
            }
            watchdog.interrupt();
            if (line == null) {
                throw new AssertionError("the peer process ended (or took over 30 s) before printing its port");
            }
            h = new Handle(p, new InetSocketAddress(FaultRig.LO, Integer.parseInt(line.substring(5).trim())));
            return h;
        } finally {
            if (h == null) {
                p.destroyForcibly();
            }
        }
    }
}
