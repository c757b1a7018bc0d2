package io.cqflux.test.network;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.testing.FreePorts;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A server and a client {@link Cqflux} on librpma at the two ends of an {@link RxeLinkRig}: the
 * server exposes one region ({@code WRITE_DST}, {@code READ_SRC}, VISIBILITY flush) of
 * {@code serverBytes} and keeps every accepted connection for the test ({@link #accepted()});
 * the client registers nothing (the test does). The rpma fault suites other than
 * {@link RpmaPartitionTest} share it. Close it after the test.
 */
final class RxePair implements AutoCloseable {
    static final Duration T = Duration.ofSeconds(20);

    final RxeLinkRig rig;
    final Arena arena = Arena.ofShared();
    final Cqflux server;
    final Cqflux client;
    final MemorySegment serverMem;
    final InetSocketAddress serverAddress;
    private final BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();

    /**
     * @param serverB adjusts the server's builder (transport, address and shutdown timeout set)
     * @param clientB adjusts the client's builder (likewise)
     */
    RxePair(RxeLinkRig rig, long serverBytes, UnaryOperator<Cqflux.Builder> serverB,
            UnaryOperator<Cqflux.Builder> clientB) {
        this.rig = rig;
        server = serverB.apply(Cqflux.builder().transport(TransportChoice.RPMA).localAddress(rig.serverAddress)
                .shutdownTimeout(Duration.ofSeconds(2))).build();
        serverMem = arena.allocate(serverBytes, 64);
        Region exposed = server.register(serverMem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        RdmaServer bound = server.bind(new InetSocketAddress(rig.serverAddress, freePort()), exposed).block(T);
        bound.connections().subscribe(accepted::add);
        serverAddress = bound.address();
        client = clientB.apply(Cqflux.builder().transport(TransportChoice.RPMA).localAddress(rig.clientAddress)
                .shutdownTimeout(Duration.ofSeconds(2))).build();
    }

    /**
     * librpma listens on exactly the port given (rpma_ep_listen(3)): one {@link FreePorts} never
     * handed out before in this JVM, asked of the wildcard address (a socket cannot bind the rig's
     * addresses, see {@link RxeLinkRig}).
     */
    static int freePort() {
        return FreePorts.next();
    }

    /** A connect whose timing is not under test, tried up to three times on a timeout (see PartitionTest). */
    RdmaConnection connectPatiently() {
        return PartitionTest.connectPatiently(client, serverAddress, T, "rpma ");
    }

    /** {@return the server's side of the next connection it accepted, waiting up to {@link #T}} */
    RdmaConnection accepted() {
        try {
            RdmaConnection c = accepted.poll(T.toMillis(), TimeUnit.MILLISECONDS);
            if (c == null) {
                throw new AssertionError("the server accepted no connection within " + T);
            }
            return c;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * {@return the server's sides of the connections it accepted that {@link #accepted()} has not
     * handed out yet, without waiting}: a connect retried after its timeout (see
     * {@link #connectPatiently()}) may have been accepted too, and its side would otherwise be
     * handed out as the next connection's
     */
    List<RdmaConnection> acceptedSoFar() {
        List<RdmaConnection> all = new ArrayList<>();
        accepted.drainTo(all);
        return all;
    }

    /** Heals the link, disposes both instances (bounded) and frees the memory. */
    @Override
    public void close() {
        try {
            rig.heal();
        } finally {
            for (Cqflux c : new Cqflux[] {client, server}) {
                c.dispose();
                c.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
            }
            arena.close();
        }
    }
}
