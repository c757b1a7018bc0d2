package io.cqflux.core.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ports for tests that must name the port they listen on: librpma listens on exactly the port it
 * is given and refuses port 0 ({@code rpma_ep_listen(3)}), and a connect to a port without a
 * listener needs one that nothing holds.
 *
 * <p>The TCP stack picks the port ({@code bind(2)} to port 0), but RDMA CM's port space is not the
 * TCP stack's: a port the TCP stack calls free may be one an rdma_cm listener of this JVM holds,
 * and its {@code rpma_ep_listen} then fails with {@code EADDRINUSE}. So a port handed out once in
 * this JVM is never handed out again; test classes that run concurrently (the Soft-RoCE lane runs
 * two at a time) never get the same one. A JVM hands out some hundreds of the stack's tens of
 * thousands of ephemeral ports. What it cannot see: the source port RDMA CM binds for a client's
 * connect comes from the same range, so a port handed out here may, rarely, be one a live rdma_cm
 * client of this address holds.
 */
public final class FreePorts {
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();
    private static final int ATTEMPTS = 100;

    private FreePorts() {
    }

    /** {@return a port free on every address now and never handed out before in this JVM} */
    public static int next() {
        return next(null);
    }

    /**
     * {@return a port free on {@code address} now and never handed out before in this JVM}
     *
     * @param address the address to ask on, or {@code null} for the wildcard address
     */
    public static int next(InetAddress address) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port;
            try (ServerSocket s = address == null ? new ServerSocket(0) : new ServerSocket(0, 1, address)) {
                port = s.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException("no free port on " + (address == null ? "the wildcard address" : address), e);
            }
            if (HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("the TCP stack offered only ports handed out before, " + ATTEMPTS + " times");
    }
}
