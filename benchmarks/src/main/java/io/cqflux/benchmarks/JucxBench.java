package io.cqflux.benchmarks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;

/**
 * The JUCX anchor: OpenUCX's Java binding on UCX's tcp transport over loopback, in the
 * shapes of the fabric benchmarks, busy-polling ({@code UcpWorker.progress()}) on both sides:
 * put followed by an endpoint flush (the remote completion cqflux's delivery-complete write has),
 * get, and put+flush with 32 flushes in flight. Prints lines in the C baselines' format
 * ({@code jucx.put_flush.8.lat.mean 14.6 us}) for {@code Report} and {@code plot_svg.py}.
 *
 * <p>Run with {@code UCX_TLS=tcp UCX_NET_DEVICES=lo} ({@code benchmarks/run.sh} sets them when it
 * runs this, after the C baselines, if Debian's libucx0 is installed); usage:
 * {@code JucxBench [iterations]}.
 */
public final class JucxBench {

    private static final int REGION = 1 << 20;
    private static final int WINDOW = 32;

    private JucxBench() {
    }

    /**
     * @param args optional iteration count per measurement
     * @throws Exception when UCX fails
     */
    public static void main(String[] args) throws Exception {
        int iters = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        InetAddress lo = InetAddress.getLoopbackAddress();
        UcpParams params = new UcpParams().requestRmaFeature().requestWakeupFeature();
        try (UcpContext serverCtx = new UcpContext(params); UcpContext clientCtx = new UcpContext(params)) {
            UcpWorker serverWorker = serverCtx.newWorker(new UcpWorkerParams());
            UcpMemory serverMem = serverCtx.registerMemory(ByteBuffer.allocateDirect(REGION));
            AtomicReference<UcpEndpoint> serverEp = new AtomicReference<>();
            int port = 20000 + (int) (ProcessHandle.current().pid() % 20000);
            UcpListener listener = serverWorker.newListener(new UcpListenerParams()
                    .setSockAddr(new InetSocketAddress(lo, port))
                    .setConnectionHandler(req -> serverEp.set(serverWorker.newEndpoint(
                            new UcpEndpointParams().setConnectionRequest(req).setPeerErrorHandlingMode()))));
            // The server's worker must progress for UCX's tcp transport to answer RMA: its own thread spins.
            CountDownLatch stop = new CountDownLatch(1);
            // Set before the client's endpoint closes: the server's endpoint then fails with the
            // peer's reset (peer error handling mode), which is the expected end, not an error.
            java.util.concurrent.atomic.AtomicBoolean closing = new java.util.concurrent.atomic.AtomicBoolean();
            Thread server = Thread.ofPlatform().name("jucx-server").daemon(true).start(() -> {
                try {
                    while (stop.getCount() > 0) {
                        serverWorker.progress();
                    }
                } catch (Exception e) {
                    if (!closing.get()) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            UcpWorker worker = clientCtx.newWorker(new UcpWorkerParams());
            UcpEndpoint ep = worker.newEndpoint(new UcpEndpointParams()
                    .setSocketAddress(new InetSocketAddress(lo, port)).setPeerErrorHandlingMode());
            UcpMemory local = clientCtx.registerMemory(ByteBuffer.allocateDirect(REGION));
            UcpRemoteKey rkey = ep.unpackRemoteKey(serverMem.getRemoteKeyBuffer());
            long remote = serverMem.getAddress();
            long addr = local.getAddress();
            wait(worker, ep.flushNonBlocking(null)); // wire-up
            for (int size : new int[] {8, 4096}) {
                report("jucx.put_flush." + size, latency(worker, iters, () -> {
                    ep.putNonBlockingImplicit(addr, size, remote, rkey);
                    return ep.flushNonBlocking(null);
                }));
                report("jucx.get." + size, latency(worker, iters, () -> ep.getNonBlocking(remote, rkey, addr, size, null)));
                System.out.printf("jucx.put_flush.%d.tput.w%d %.0f ops/s%n", size, WINDOW, throughput(worker, ep, rkey,
                        remote, addr, size, iters * 2));
            }
            System.out.flush();
            // Teardown: the client's endpoint closes while the server still progresses (its close
            // may wait for the peer). Seen here: a teardown in the other order spun for minutes
            // after the figures were printed, and run.sh never reached JMH. The figures are out,
            // so a teardown that still does not end within 10 s is reported and the JVM exits.
            Thread teardown = Thread.ofPlatform().name("jucx-teardown").daemon(true).start(() -> {
                closing.set(true);
                rkey.close();
                ep.close();
                stop.countDown();
                try {
                    server.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                local.close();
                worker.close();
                listener.close();
                if (serverEp.get() != null) {
                    serverEp.get().close();
                }
                serverMem.close();
                serverWorker.close();
            });
            teardown.join(10_000);
            if (teardown.isAlive()) {
                System.err.println("JucxBench: UCX teardown did not end within 10 s; exiting (figures above are complete)");
                System.exit(0);
            }
        }
    }

    private interface Post {
        UcpRequest post() throws Exception;
    }

    private static void wait(UcpWorker w, UcpRequest r) throws Exception {
        while (r != null && !r.isCompleted()) {
            w.progress();
        }
    }

    private static double[] latency(UcpWorker w, int iters, Post p) throws Exception {
        for (int i = 0; i < iters / 2; i++) {
            wait(w, p.post()); // warm-up
        }
        double[] us = new double[iters];
        for (int i = 0; i < iters; i++) {
            long t0 = System.nanoTime();
            wait(w, p.post());
            us[i] = (System.nanoTime() - t0) / 1e3;
        }
        return us;
    }

    private static double throughput(UcpWorker w, UcpEndpoint ep, UcpRemoteKey rkey, long remote, long addr, int size,
                                     int total) throws Exception {
        UcpRequest[] ring = new UcpRequest[WINDOW];
        long t0 = System.nanoTime();
        for (int i = 0; i < total; i++) {
            int slot = i % WINDOW;
            wait(w, ring[slot]);
            long off = (long) slot * size;
            ep.putNonBlockingImplicit(addr + off, size, remote + off, rkey);
            ring[slot] = ep.flushNonBlocking(null);
        }
        for (UcpRequest r : ring) {
            wait(w, r);
        }
        return total / ((System.nanoTime() - t0) / 1e9);
    }

    private static void report(String name, double[] us) {
        double mean = Arrays.stream(us).average().orElse(Double.NaN);
        double[] s = us.clone();
        Arrays.sort(s);
        System.out.printf("%s.lat.mean %.2f us%n%s.lat.p50 %.2f us%n%s.lat.p99 %.2f us%n", name, mean, name,
                s[s.length / 2], name, s[(int) (s.length * 0.99)]);
    }
}
