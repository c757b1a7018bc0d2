package io.cqflux.test.network;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.AcceptDecision;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * The peer of the network-fault tests, in its own JVM (started by {@link NetworkRig} inside the
 * rig's namespace): a fabric/tcp cqflux server on the given address exposing one zeroed region
 * with {@code WRITE_DST}, {@code READ_SRC} and {@code FLUSH_TYPE_VISIBILITY}, and two plain TCP
 * listeners for the rig's own facts: one counts the bytes it receives, the other (the source)
 * reads a count (8 bytes, big-endian) from each connection, sends that many zero bytes and
 * closes it. It prints {@code READY <cqflux port> <tcp port> <raw port> <source port>} and then
 * answers one line per command on stdin:
 *
 * <ul>
 *   <li>{@code DUMP <offset> <length>}: {@code DUMP <base64 of those bytes of the region>};</li>
 *   <li>{@code CRC <offset> <length>}: {@code CRC <CRC32C of those bytes, hex>};</li>
 *   <li>{@code CRCS <offset> <slot size> <count>}: {@code CRCS} and the CRC32C (hex) of each of
 *       {@code count} consecutive slots from {@code offset};</li>
 *   <li>{@code TCP}: {@code TCP <bytes received> <connections that reached end of stream>};</li>
 *   <li>{@code CONNS}: {@code CONNS <accepted> <open> <ended LOST> <keep-alive probes sent>}, over
 *       every connection it accepted on either listener.</li>
 * </ul>
 *
 * <p>Beside its cqflux server it listens for connections with raw private data (a stand-in for
 * a peer not written with cqflux): {@code READY} names that port third. An optional third and
 * fourth argument set its keep-alive ({@code <interval ms> <misses>}; an interval of 0 switches
 * it off); without them it runs the library's default.
 *
 * <p>It exits when its stdin ends, so it never outlives the test JVM (unless the rig kills it
 * first).
 */
final class NetPeer {
    private NetPeer() {
    }

    /**
     * @param args the address to serve on, the region's size in bytes, and optionally the
     *     keep-alive's interval in ms (0: off) and misses
     */
    public static void main(String[] args) throws IOException {
        InetAddress address = InetAddress.getByName(args[0]);
        long size = Long.parseLong(args[1]);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        List<RdmaConnection> keep = new CopyOnWriteArrayList<>();
        AtomicLong tcpBytes = new AtomicLong();
        AtomicLong tcpEnds = new AtomicLong();
        Cqflux.Builder builder = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(address);
        if (args.length >= 4) {
            long ms = Long.parseLong(args[2]);
            builder = ms == 0 ? builder.noKeepAlive() : builder.keepAlive(Duration.ofMillis(ms), Integer.parseInt(args[3]));
        }
        Cqflux cq = builder.build();
        MemorySegment mem = Arena.global().allocate(size, 64);
        Region r = cq.register(mem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
        RdmaServer s = cq.bind(new InetSocketAddress(address, 0), r).block(Duration.ofSeconds(20));
        s.connections().subscribe(keep::add);
        RdmaServer raw = cq.bind(new InetSocketAddress(address, 0),
                AcceptOptions.rawPrivateData(req -> AcceptDecision.accept(new byte[0]))).block(Duration.ofSeconds(20));
        raw.connections().subscribe(keep::add);
        ServerSocket tcp = new ServerSocket(0, 50, address);
        Thread.ofPlatform().daemon().start(() -> {
            while (true) {
                Socket c;
                try {
                    c = tcp.accept();
                } catch (IOException e) {
                    return;
                }
                Thread.ofPlatform().daemon().start(() -> {
                    byte[] buf = new byte[8192];
                    try (InputStream in = c.getInputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            tcpBytes.addAndGet(n);
                        }
                        tcpEnds.incrementAndGet();
                    } catch (IOException e) {
                        tcpEnds.incrementAndGet();
                    }
                });
            }
        });
        ServerSocket source = new ServerSocket(0, 50, address);
        Thread.ofPlatform().daemon().start(() -> {
            while (true) {
                Socket c;
                try {
                    c = source.accept();
                } catch (IOException e) {
                    return;
                }
                Thread.ofPlatform().daemon().start(() -> {
                    try (c) {
                        long n = new java.io.DataInputStream(c.getInputStream()).readLong();
                        java.io.OutputStream o = c.getOutputStream();
                        byte[] buf = new byte[8192];
                        for (long left = n; left > 0; left -= Math.min(left, buf.length)) {
                            o.write(buf, 0, (int) Math.min(left, buf.length));
                        }
                        o.flush();
                    } catch (IOException e) {
                        // the client went away: nothing to tell
                    }
                });
            }
        });
        out.println("READY " + s.address().getPort() + " " + tcp.getLocalPort() + " " + raw.address().getPort() + " "
                + source.getLocalPort());
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split("\\s+");
            switch (f[0]) {
                case "DUMP" -> {
                    byte[] b = mem.asSlice(Long.parseLong(f[1]), Long.parseLong(f[2])).toArray(ValueLayout.JAVA_BYTE);
                    out.println("DUMP " + Base64.getEncoder().encodeToString(b));
                }
                case "CRCS" -> {
                    long off = Long.parseLong(f[1]);
                    int slot = Integer.parseInt(f[2]);
                    int count = Integer.parseInt(f[3]);
                    StringBuilder b = new StringBuilder("CRCS");
                    for (int i = 0; i < count; i++) {
                        CRC32C crc = new CRC32C();
                        crc.update(mem.asSlice(off + (long) i * slot, slot).asByteBuffer());
                        b.append(' ').append(Long.toHexString(crc.getValue()));
                    }
                    out.println(b);
                }
                case "CRC" -> {
                    CRC32C crc = new CRC32C();
                    crc.update(mem.asSlice(Long.parseLong(f[1]), Long.parseLong(f[2])).asByteBuffer());
                    out.println("CRC " + Long.toHexString(crc.getValue()));
                }
                case "TCP" -> out.println("TCP " + tcpBytes.get() + " " + tcpEnds.get());
                case "CONNS" -> {
                    long open = keep.stream().filter(c -> !c.isDisposed()).count();
                    long lost = keep.stream().filter(c -> c.isDisposed() && c.events().collectList()
                            .block(Duration.ofSeconds(5)).contains(ConnectionEvent.LOST)).count();
                    long probes = keep.stream().mapToLong(RdmaConnection::keepAliveProbes).sum();
                    out.println("CONNS " + keep.size() + " " + open + " " + lost + " " + probes);
                }
                default -> out.println("ERR unknown command " + line);
            }
            out.flush();
        }
        // The test JVM is gone or done with this peer: no orderly goodbye is owed to anyone.
        Runtime.getRuntime().halt(0);
    }

    /** A running peer: its process, the addresses it serves and its command channel. */
    static final class Handle {
        private final Process process;
        private final InetSocketAddress address;
        private final InetSocketAddress tcpAddress;
        private final InetSocketAddress rawAddress;
        private final InetSocketAddress sourceAddress;
        private final BlockingQueue<String> lines;
        private final PrintStream commands;
        private final AtomicBoolean destroyed = new AtomicBoolean();

        private Handle(Process process, InetSocketAddress address, InetSocketAddress tcpAddress,
                       InetSocketAddress rawAddress, InetSocketAddress sourceAddress, BlockingQueue<String> lines) {
            this.rawAddress = rawAddress;
            this.sourceAddress = sourceAddress;
            this.process = process;
            this.address = address;
            this.tcpAddress = tcpAddress;
            this.lines = lines;
            this.commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        /** {@return the address of the peer's listener for raw private data (a foreign peer's stand-in)} */
        InetSocketAddress rawAddress() {
            return rawAddress;
        }

        /**
         * {@return the peer's view of the connections it accepted: accepted, open, ended LOST,
         * keep-alive probes sent, in that order}
         */
        long[] connections() {
            String[] f = command("CONNS", "CONNS ").split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])};
        }

        /** {@return the address of the peer's cqflux server} */
        InetSocketAddress address() {
            return address;
        }

        /** {@return the address of the peer's TCP source: send it a count (8 bytes), read that many bytes} */
        InetSocketAddress sourceAddress() {
            return sourceAddress;
        }

        /**
         * {@return the CRC32C of each of {@code count} consecutive slots of {@code slot} bytes from
         * {@code offset}, as the peer's memory holds them now}
         */
        long[] crcs(long offset, int slot, int count) {
            String[] f = command("CRCS " + offset + " " + slot + " " + count, "CRCS").trim().split(" ");
            if (f.length != count) {
                throw new AssertionError("the peer answered " + f.length + " CRCs for " + count + " slots");
            }
            long[] r = new long[count];
            for (int i = 0; i < count; i++) {
                r[i] = Long.parseLong(f[i], 16);
            }
            return r;
        }

        /** {@return the address of the peer's byte-counting TCP listener} */
        InetSocketAddress tcpAddress() {
            return tcpAddress;
        }

        Process process() {
            return process;
        }

        /** {@return the region's bytes {@code [offset, offset + length)} as the peer's memory holds them now} */
        byte[] dump(long offset, long length) {
            return Base64.getDecoder().decode(command("DUMP " + offset + " " + length, "DUMP "));
        }

        /** {@return the CRC32C of the region's bytes {@code [offset, offset + length)}} */
        long crc(long offset, long length) {
            return Long.parseLong(command("CRC " + offset + " " + length, "CRC "), 16);
        }

        /** {@return {bytes received, connections ended} of the peer's TCP listener} */
        long[] tcp() {
            String[] f = command("TCP", "TCP ").split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
        }

        private synchronized String command(String cmd, String answer) {
            commands.println(cmd);
            try {
                String line = lines.poll(20, TimeUnit.SECONDS);
                if (line == null || !line.startsWith(answer)) {
                    throw new AssertionError("the peer answered " + (line == null ? "nothing within 20 s" : line)
                            + " to " + cmd + (process.isAlive() ? "" : " (it has exited)"));
                }
                return line.substring(answer.length()).trim();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for the peer's answer to " + cmd, e);
            }
        }

        /** Waits (at most {@code bound}) for the process to end. */
        void awaitExit(Duration bound) {
            try {
                process.waitFor(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** SIGKILL (its descendants too: {@code ip netns exec} execs java, but be sure), bounded wait. */
        void destroy() {
            if (destroyed.compareAndSet(false, true)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                awaitExit(Duration.ofSeconds(10));
            }
        }
    }

    /**
     * Starts a peer with {@code prefix} before its {@code java} command (e.g.
     * {@code ip netns exec NS}), and waits (at most 30 s) for it to listen.
     */
    static Handle start(List<String> prefix, InetAddress address, long regionSize, String... options) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx128m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), NetPeer.class.getName(),
                address.getHostAddress(), Long.toString(regionSize)));
        cmd.addAll(List.of(options));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the peer: " + cmd, e);
        }
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().name("net-peer-" + p.pid() + "-stdout").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // the peer died: its commands fail with "nothing within 20 s" or "it has exited"
            }
        });
        Handle h = null;
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
                throw new AssertionError("the peer (" + String.join(" ", cmd.subList(0, prefix.size() + 1))
                        + ") ended or took over 30 s before listening; exit " + (p.isAlive() ? "none" : p.exitValue()));
            }
            String[] f = line.split(" ");
            h = new Handle(p, new InetSocketAddress(address, Integer.parseInt(f[1])),
                    new InetSocketAddress(address, Integer.parseInt(f[2])),
                    new InetSocketAddress(address, Integer.parseInt(f[3])),
                    new InetSocketAddress(address, Integer.parseInt(f[4])), lines);
            return h;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for the peer", e);
        } finally {
            if (h == null) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }
}
