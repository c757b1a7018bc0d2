package io.cqflux.reactor;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * Test helper for the fault suite: a server and a client {@link Cqflux} on libfabric's tcp
 * provider over 127.0.0.1, one exposed region, one established connection with both ends known,
 * and small probes (open file descriptors, bounded waits). Every wait is bounded.
 */
final class FaultRig implements AutoCloseable {
    static final InetAddress LO = InetAddress.getLoopbackAddress();
    static final Duration T = Duration.ofSeconds(10);
    static final int SIZE = 1 << 20;
    static final RegionAccess[] ALL = {RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.WRITE_SRC,
            RegionAccess.READ_DST, RegionAccess.SEND, RegionAccess.RECV, RegionAccess.FLUSH_TYPE_VISIBILITY};

    final Arena arena = Arena.ofShared();
    final Cqflux server;
    final Cqflux client;
    final Region serverRegion;
    final Region local;
    final RdmaServer srv;
    /** Every connection the server accepted, in order. */
    final List<RdmaConnection> accepted = new CopyOnWriteArrayList<>();
    RdmaConnection conn;
    RdmaConnection serverConn;

    /** {@return a builder for fabric/tcp on loopback} */
    static Cqflux.Builder fabric() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO);
    }

    FaultRig() {
        this(UnaryOperator.identity(), UnaryOperator.identity());
    }

    /**
     * @param serverB adjusts the server's builder
     * @param clientB adjusts the client's builder
     */
    FaultRig(UnaryOperator<Cqflux.Builder> serverB, UnaryOperator<Cqflux.Builder> clientB) {
        this(serverB, clientB, UnaryOperator.identity());
    }

    /**
     * @param serverB adjusts the server's builder
     * @param clientB adjusts the client's builder
     * @param options adjusts the bind's options ({@code AcceptOptions.exposing(serverRegion)})
     */
    FaultRig(UnaryOperator<Cqflux.Builder> serverB, UnaryOperator<Cqflux.Builder> clientB,
             UnaryOperator<AcceptOptions> options) {
        server = serverB.apply(fabric()).build();
        client = clientB.apply(fabric()).build();
        serverRegion = server.register(arena.allocate(SIZE, 64), ALL);
        local = client.register(arena.allocate(SIZE, 64), ALL);
        srv = server.bind(new InetSocketAddress(LO, 0), options.apply(AcceptOptions.exposing(serverRegion))).block(T);
        srv.connections().subscribe(accepted::add);
        conn = connectOne();
        serverConn = accepted.get(accepted.size() - 1);
    }

    /** Connects one more client connection and waits until the server side has it too. */
    RdmaConnection connectOne() {
        int before = accepted.size();
        RdmaConnection c = client.connect(srv.address()).block(T);
        if (!await(() -> accepted.size() > before, T)) {
            throw new AssertionError("the server did not hand out the accepted connection within " + T);
        }
        return c;
    }

    PeerRegion remote() {
        return conn.remoteRegion(0);
    }

    /** Runs nothing on the connection's loop but waits until everything handed to it before has run. */
    static void drainLoop(RdmaConnection c) {
        CountDownLatch l = new CountDownLatch(1);
        c.core().runOnLoop(l::countDown);
        try {
            if (!l.await(T.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the loop of " + c + " did not run a task within " + T);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** {@return the number of this process's open file descriptors} */
    static int openFds() {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return (int) s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Polls {@code condition} every 5 ms up to {@code max}; {@return whether it became true} */
    static boolean await(BooleanSupplier condition, Duration max) {
        long end = System.nanoTime() + max.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                return false;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** {@return e.g. "ConnectionException(LOST)" or "OperationFailedException: text" for a failure} */
    static String kind(Throwable t) {
        if (t == null) {
            return "complete";
        }
        if (t instanceof ConnectionException ce) {
            return "ConnectionException(" + ce.event() + ")";
        }
        return t.getClass().getSimpleName();
    }

    @Override
    public void close() {
        client.dispose();
        CompletableFuture<Void> a = client.onDispose().toFuture();
        server.dispose();
        CompletableFuture<Void> b = server.onDispose().toFuture();
        try {
            CompletableFuture.allOf(a, b).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            // Reported by the tests that look at closing; here only never hang.
        }
        arena.close();
    }
}
