package io.cqflux.reactor;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A peer in its own JVM for the fault tests: binds a server (fabric/tcp on 127.0.0.1, port 0, by
 * default; or the transport and address it is given) exposing one region of {@link FaultRig#SIZE}
 * bytes, prints {@code PORT <n>} on stdout once it listens and serves until killed or until its
 * stdin ends (so it never outlives the test JVM).
 *
 * <p>{@link #start()} launches it with the test JVM's own {@code java}, class path and native
 * access flag. On rpma the peer must be given its port: librpma binds exactly the port it is
 * given and cannot report one the kernel chose ({@code rpma_ep_listen(3)}).
 */
final class PeerProcess {
    private PeerProcess() {
    }

    /**
     * @param args none; or the port to bind and a generation: the region is then
     *     {@link #regionSize(int)} bytes and its first 8 bytes hold the generation (native order);
     *     optionally followed by a {@link TransportChoice} name and the address to serve on
     */
    public static void main(String[] args) throws IOException {
        long t0 = System.nanoTime();
        List<RdmaConnection> keep = new ArrayList<>();
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        int generation = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        TransportChoice transport = args.length > 2 ? TransportChoice.valueOf(args[2]) : TransportChoice.FABRIC;
        InetAddress address = args.length > 3 ? InetAddress.getByName(args[3]) : FaultRig.LO;
        try (Cqflux cq = Cqflux.builder().transport(transport).localAddress(address).build()) {
            java.lang.foreign.MemorySegment mem = Arena.global().allocate(regionSize(generation), 64);
            mem.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, generation);
            Region r = cq.register(mem, FaultRig.ALL);
            RdmaServer s = cq.bind(new InetSocketAddress(address, port), r).block(Duration.ofSeconds(10));
            s.connections().subscribe(keep::add);
            // Where a start's time goes (JVM and classes versus the transport's set-up) on stderr,
            // which the test JVM inherits: in the Soft-RoCE lane a start takes tens of seconds.
            long upMs = ProcessHandle.current().info().startInstant()
                    .map(i -> Duration.between(i, java.time.Instant.now()).toMillis()).orElse(-1L);
            System.err.printf("peer %s: listening %d ms after the process started, %d ms of them after main()"
                    + " began%n", transport, upMs, (System.nanoTime() - t0) / 1_000_000);
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
        return start(List.of(), FaultRig.LO, Duration.ofSeconds(30));
    }

    /**
     * Starts a peer serving on {@code transport} at {@code address} and {@code port} (0: the
     * kernel's choice, fabric only), and waits at most {@code startBound} for it to listen.
     */
    static Handle start(TransportChoice transport, InetAddress address, int port, Duration startBound)
            throws IOException {
        return start(List.of(Integer.toString(port), "0", transport.name(), address.getHostAddress()), address,
                startBound);
    }

    /**
     * Starts a peer on {@code port} exposing a region of {@link #regionSize(int)} bytes that
     * begins with {@code generation}, and waits (at most 30 s) for it to listen.
     */
    static Handle start(int port, int generation) throws IOException {
        return start(List.of(Integer.toString(port), Integer.toString(generation)), FaultRig.LO,
                Duration.ofSeconds(30));
    }

    /**
     * {@return this JVM's class path plus, where the test classes came through a class loader of
     * their own (the JUnit console launcher's {@code --class-path}, as in the Soft-RoCE lane), that
     * loader's entries: {@code java.class.path} alone then holds only the launcher}
     */
    static String classPath() {
        List<String> entries = new ArrayList<>(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        for (ClassLoader l = PeerProcess.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        String e = Path.of(url.toURI()).toString();
                        if (!entries.contains(e)) {
                            entries.add(e);
                        }
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        throw new AssertionError("a class path entry that is no file: " + url, e);
                    }
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static Handle start(List<String> args, InetAddress address, Duration startBound)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // C1 only, as the test JVMs themselves (the pom's cqflux.test.jit) and the lane's
        // (scripts/softroce/run-tests.sh): a peer lives for one test and mostly starts, loads classes
        // and serves a few thousand operations; C2's compiler threads would take CPU time from the
        // test JVM beside it that they never repay, and under TCG seconds of emulated CPU.
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        cmd.addAll(List.of("-cp", classPath(), PeerProcess.class.getName()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        Handle h = null;
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            Thread watchdog = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(startBound.toMillis());
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
                throw new AssertionError("the peer process ended (or took over " + startBound
                        + ") before printing its port");
            }
            h = new Handle(p, new InetSocketAddress(address, Integer.parseInt(line.substring(5).trim())));
            return h;
        } finally {
            if (h == null) {
                p.destroyForcibly();
            }
        }
    }
}
