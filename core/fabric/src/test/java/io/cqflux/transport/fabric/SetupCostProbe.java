package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_domain;
import io.cqflux.transport.fabric.ffm.fi_rx_attr;
import io.cqflux.transport.fabric.ffm.fi_tx_attr;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What each native call of a fabric/tcp connection's set-up and teardown costs, timed one call at
 * a time on one thread (no loop): the calls FabricConnection's constructor, connect, accept and
 * close make, in the same order and with the same arguments, each bracketed by
 * {@code System.nanoTime()}. Not a test (no assertion, not run by the build): a measurement tool
 * for docs/performance.md's "Connection set-up" section. Run from the module's test classpath:
 * {@code IPATH_NO_BACKTRACE=1 java --enable-native-access=ALL-UNNAMED -cp <classes:test-classes of
 * core and core/fabric> io.cqflux.transport.fabric.SetupCostProbe [rounds]} (without that variable,
 * libinfinipath, which Debian's libfabric pulls in, installs a SIGSEGV handler of its own that
 * kills the JVM at its first ordinary SIGSEGV: see benchmarks/run.sh).
 */
final class SetupCostProbe {

    private final Map<String, List<Long>> times = new LinkedHashMap<>();

    private SetupCostProbe() {
    }

    private long time(String what, long t0) {
        long t1 = System.nanoTime();
        times.computeIfAbsent(what, k -> new ArrayList<>()).add(t1 - t0);
        return t1;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        SetupCostProbe p = new SetupCostProbe();
        InetAddress lo = InetAddress.getLoopbackAddress();
        ConnectionConfig config = ConnectionConfig.DEFAULT;
        try (FabricTransport t = FabricTransport.open("tcp", lo)) {
            Listener l = t.listen(new InetSocketAddress(lo, 0), config);
            for (int i = 0; i < rounds + 50; i++) {
                if (i == 50) {
                    p.times.clear(); // the first 50: linking and JIT
                }
                p.pieces(t, l.address(), config);
                p.connection(t, l, config);
                p.arenas();
            }
            l.close();
        }
        // The same arena closes while two other Java threads run Java code (as a loop that
        // spins, or a busy connection's callbacks, do): a shared arena's close waits for each
        // thread to reach a handshake point, and a thread the host has preempted gets there only
        // once it runs again.
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> spinners = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            spinners.add(Thread.ofPlatform().daemon().start(() -> {
                long x = 0;
                while (!stop.get()) {
                    x += System.nanoTime() & 1;
                }
                if (x == 42) {
                    System.out.print("");
                }
            }));
        }
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            Arena a = Arena.ofShared();
            a.allocate(64);
            a.close();
            t0 = p.time("Arena.ofShared, 2 Java threads spinning", t0);
            Arena b = Arena.ofConfined();
            b.allocate(64);
            b.close();
            p.time("Arena.ofConfined, 2 Java threads spinning", t0);
        }
        stop.set(true);
        for (Thread t : spinners) {
            t.join();
        }
        System.out.printf(Locale.ROOT, "# SetupCostProbe: %d rounds after 50 of warm-up, fabric/tcp on 127.0.0.1, one"
                + " thread; us per call%n", rounds);
        System.out.printf(Locale.ROOT, "%-44s %9s %9s %9s %9s%n", "call", "p50_us", "p90_us", "p99_us", "mean_us");
        for (Map.Entry<String, List<Long>> e : p.times.entrySet()) {
            long[] v = e.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
            double mean = Arrays.stream(v).average().orElse(0) / 1e3;
            System.out.printf(Locale.ROOT, "%-44s %9.1f %9.1f %9.1f %9.1f%n", e.getKey(), v[v.length / 2] / 1e3,
                    v[(int) (v.length * 0.9)] / 1e3, v[(int) (v.length * 0.99)] / 1e3, mean);
        }
    }

    /** FabricConnection's constructor and close, call by call, on objects of our own. */
    private void pieces(FabricTransport t, InetSocketAddress to, ConnectionConfig config) {
        try (Arena tmp = Arena.ofConfined()) {
            long t0 = System.nanoTime();
            MemorySegment info = FabricInfo.getinfo(tmp, t.provider(), t.fabricName(), t.domainName(),
                    to.getAddress().getHostAddress(), Integer.toString(to.getPort()), 0);
            t0 = time("fi_getinfo (client, to the server)", t0);
            LocalRegion sink = t.register(tmp.allocate(8, 8), EnumSet.of(RegionAccess.READ_DST));
            t0 = time("fi_mr_reg 8 B (flush sink)", t0);
            LocalRegion exposure = t.register(tmp.allocate(1 << 16, 4096), EnumSet.of(RegionAccess.WRITE_DST,
                    RegionAccess.READ_SRC));
            t0 = time("fi_mr_reg 64 KiB (an exposure)", t0);
            FabricEventQueue eq = new FabricEventQueue(t);
            t0 = time("fi_eq_open + FI_GETWAIT", t0);
            FabricCompletionQueue cq = new FabricCompletionQueue(t, null, config.completionQueueSize(), false);
            t0 = time("fi_cq_open + FI_GETWAIT", t0);
            fi_tx_attr.size(fi_info.tx_attr(info), config.sendQueueSize());
            fi_rx_attr.size(fi_info.rx_attr(info), Math.max(1, config.receiveQueueSize()));
            MemorySegment out = tmp.allocate(C_POINTER);
            FabricLibrary.check("fi_endpoint", fi_ops_domain.endpoint.invoke(t.ops().endpointFp(), t.domain(), info, out,
                    MemorySegment.NULL), "probe");
            MemorySegment ep = out.get(C_POINTER, 0);
            t0 = time("fi_endpoint", t0);
            FabricLibrary.check("fi_ep_bind(eq)", FabricLibrary.bind(ep, eq.eq(), 0), "probe");
            FabricLibrary.check("fi_ep_bind(cq)", FabricLibrary.bind(ep, cq.cq(),
                    FI_TRANSMIT() | FI_SELECTIVE_COMPLETION() | FI_RECV()), "probe");
            t0 = time("fi_ep_bind x2 (eq, cq)", t0);
            FabricLibrary.check("fi_enable", FabricLibrary.control(ep, FI_ENABLE(), MemorySegment.NULL), "probe");
            t0 = time("fi_enable", t0);
            fi_freeinfo(info);
            t0 = time("fi_freeinfo", t0);
            FabricLibrary.close(ep, "endpoint", "probe");
            t0 = time("fi_close endpoint (never connected)", t0);
            cq.close();
            t0 = time("fi_close cq + its shared arena", t0);
            eq.close();
            t0 = time("fi_close eq + its shared arena", t0);
            sink.close();
            t0 = time("fi_close mr 8 B", t0);
            exposure.close();
            time("fi_close mr 64 KiB", t0);
            rawQueue(t, tmp, config);
        }
    }

    /** A CQ opened and closed without FabricCompletionQueue: fi_close alone, no arena. */
    private void rawQueue(FabricTransport t, Arena tmp, ConnectionConfig config) {
        MemorySegment attr = io.cqflux.transport.fabric.ffm.fi_cq_attr.allocate(tmp);
        io.cqflux.transport.fabric.ffm.fi_cq_attr.size(attr, config.completionQueueSize());
        io.cqflux.transport.fabric.ffm.fi_cq_attr.format(attr, FI_CQ_FORMAT_DATA());
        io.cqflux.transport.fabric.ffm.fi_cq_attr.wait_obj(attr, FI_WAIT_FD());
        MemorySegment out = tmp.allocate(C_POINTER);
        long t0 = System.nanoTime();
        FabricLibrary.check("fi_cq_open", fi_ops_domain.cq_open.invoke(t.ops().cqOpenFp(), t.domain(), attr, out,
                MemorySegment.NULL), "probe");
        t0 = time("fi_cq_open alone (FI_WAIT_FD)", t0);
        MemorySegment cq = out.get(C_POINTER, 0);
        FabricLibrary.close(cq, "cq", "probe");
        t0 = time("fi_close cq alone", t0);
        FabricLibrary.check("fi_cq_open", fi_ops_domain.cq_open.invoke(t.ops().cqOpenFp(), t.domain(), attr, out,
                MemorySegment.NULL), "probe");
        cq = out.get(C_POINTER, 0);
        MemorySegment fd = tmp.allocate(java.lang.foreign.ValueLayout.JAVA_INT);
        FabricLibrary.check("fi_control(FI_GETWAIT)", FabricLibrary.control(cq, FI_GETWAIT(), fd), "probe");
        t0 = System.nanoTime();
        FabricLibrary.close(cq, "cq", "probe");
        time("fi_close cq alone, after FI_GETWAIT", t0);
    }

    /** A whole connect, accept and close, with the handshake driven by reading both event queues. */
    private void connection(FabricTransport t, Listener l, ConnectionConfig config) {
        byte[] hello = new byte[200];
        long t0 = System.nanoTime();
        Connection c = t.connect(l.address(), config, hello);
        time("connect: all of it (getinfo..fi_connect)", t0);
        ConnectionRequest req = null;
        ConnectionEvent ce = null;
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (req == null) {
            ce = pollEvent(c, ce);
            req = l.nextRequest();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no connection request within 5 s");
            }
        }
        t0 = System.nanoTime();
        Connection s = req.accept(hello);
        time("accept: all of it (eq..fi_accept)", t0);
        ConnectionEvent se = null;
        while (ce != ConnectionEvent.ESTABLISHED || se != ConnectionEvent.ESTABLISHED) {
            ce = pollEvent(c, ce);
            se = pollEvent(s, se);
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not established within 5 s: client " + ce + ", server " + se);
            }
        }
        t0 = System.nanoTime();
        c.close();
        t0 = time("close: client (fi_shutdown, 3 fi_close, 3 shared arenas)", t0);
        s.close();
        time("close: server (the same)", t0);
    }

    private static ConnectionEvent pollEvent(Connection c, ConnectionEvent last) {
        ConnectionEvent e = c.events().nextEvent();
        return e == null ? last : e;
    }

    /** A shared arena's close is a handshake with every Java thread; a confined one's is not. */
    private void arenas() {
        long t0 = System.nanoTime();
        Arena a = Arena.ofShared();
        a.allocate(64);
        a.close();
        t0 = time("Arena.ofShared: allocate + close", t0);
        Arena b = Arena.ofConfined();
        b.allocate(64);
        b.close();
        time("Arena.ofConfined: allocate + close", t0);
    }
}
