package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.KeyScope;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Registrar;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import io.cqflux.core.testing.TransportPump;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What the scoped-keys tests share on every provider (FabricScopedKeysTest on tcp,
 * FabricVerbsScopedKeysTest and FabricVerbsScopedKeysCostTest on verbs): the transports of one
 * provider, connections accepted in their request's scope or in the transport's domain, a write
 * with another connection's key, and the cases whose outcome is the same on both. What a provider
 * answers differently stays in its own class.
 */
abstract class ScopedKeysFixture extends TransportFixture {

    private final String provider;
    private final Supplier<InetAddress> address;

    /**
     * @param provider the libfabric provider both transports open
     * @param address  where they open it, asked per test (the lane's address is known in the lane only)
     */
    ScopedKeysFixture(String provider, Supplier<InetAddress> address) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.address = Objects.requireNonNull(address, "address");
    }

    @Override
    protected Transport openTransport() {
        return Fabric.open(provider, address.get());
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(address.get(), 0);
    }

    /** {@return the server's transport, as the fabric transport it is} */
    FabricTransport serverTransport() {
        return (FabricTransport) server;
    }

    /** A listener of the server's and the connection requests the pump collects from it. */
    record Listening(Listener listener, Deque<ConnectionRequest> requests) {
    }

    /** One accepted connection, the region registered for it (or null), and the scope (null: the transport's domain). */
    record Accepted(TransportPump.Side client, TransportPump.Side server, LocalRegion region, KeyScope scope) {
    }

    /** {@return a listener of the server's, closed after the test, its requests pumped} */
    Listening listen() {
        Listener l = closeLater(server.listen(listenAddress(), config()));
        return new Listening(l, pump.add(l));
    }

    /**
     * Connects a client to {@code in}; the server registers 4 KiB (remote read and write), filled
     * with {@code fill}, in the request's own scope when {@code scoped}, else in its domain.
     */
    Accepted accept(Listening in, boolean scoped, byte fill) {
        return accept(in, scoped, into -> {
            LocalRegion region = closeLater(into.register(arena.allocate(4096, 4096),
                    EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC)));
            region.segment().fill(fill);
            return region;
        });
    }

    /** {@return a connection accepted as by {@link #accept(Listening, boolean, byte)}, with no region registered for it} */
    Accepted acceptWithoutRegion(Listening in, boolean scoped) {
        return accept(in, scoped, into -> null);
    }

    private Accepted accept(Listening in, boolean scoped, Function<Registrar, LocalRegion> beforeAccept) {
        Connection c = closeLater(client.connect(in.listener().address(), config(), new byte[0]));
        TransportPump.Side cs = pump.add("client", c);
        pump.until("a connection request", DEADLINE, () -> !in.requests().isEmpty());
        ConnectionRequest r = in.requests().poll();
        KeyScope scope = scoped ? r.scopeKeys() : null;
        LocalRegion region = beforeAccept.apply(scoped ? scope : server);
        Connection s = closeLater(r.accept(new byte[0]));
        if (scope != null) {
            scope.close(); // the request's hold: the domain lives on with the connection and the region
        }
        TransportPump.Side ss = pump.add("server", s);
        pump.until("both ends established", DEADLINE,
                () -> cs.events.contains(ConnectionEvent.ESTABLISHED) && ss.events.contains(ConnectionEvent.ESTABLISHED));
        return new Accepted(cs, ss, region, scope);
    }

    /** {@return the server's side of a connection request whose client is connecting, not yet answered} */
    ConnectionRequest request(Listening in) {
        pump.add("client", closeLater(client.connect(in.listener().address(), config(), new byte[0])));
        pump.until("a connection request", DEADLINE, () -> !in.requests().isEmpty());
        return in.requests().poll();
    }

    /** {@return the server's key to 4 KiB the client registered for remote writes; both closed after the test} */
    RemoteRegion clientTarget() {
        LocalRegion target = region(client, 4096, RegionAccess.WRITE_DST);
        return closeLater(server.remoteRegion(target.descriptor()));
    }

    /** The client of {@code via} writes 64 bytes of 0x66 with the key of {@code target}'s region; its completion. */
    CompletionRecord writeWithKeyOf(Accepted target, Accepted via, long ctx) {
        RemoteRegion key = closeLater(client.remoteRegion(target.region().descriptor()));
        LocalRegion src = region(client, 64, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x66);
        post("write", () -> via.client().connection().write(key, 0, src, 0, 64, ctx, true));
        return await(via.client(), ctx);
    }

    /**
     * Two connections in the transport's one domain: the key of A's region works on B's
     * connection, on every provider (what the scope changes).
     */
    void assertAnUnscopedKeyWorksOnAnotherConnection() {
        Listening in = listen();
        Accepted a = accept(in, false, (byte) 0x11);
        Accepted b = accept(in, false, (byte) 0x22);
        CompletionRecord w = writeWithKeyOf(a, b, 9);
        assertTrue(w.isSuccess(), w::toString);
        assertEquals(0x66, a.region().segment().get(ValueLayout.JAVA_BYTE, 0) & 0xff);
    }

    /** Ends {@code a}: takes both sides off the pump, closes both connections, then its region (if any). */
    void end(Accepted a) {
        pump.remove(a.server());
        pump.remove(a.client());
        a.server().connection().close();
        a.client().connection().close();
        if (a.region() != null) {
            a.region().close();
        }
    }

    /** Runs {@code x} and {@code y} on two platform threads released together; returns when both ended. */
    static void atOnce(Runnable x, Runnable y) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        Thread tx = Thread.ofPlatform().start(() -> {
            awaitQuietly(go);
            x.run();
        });
        Thread ty = Thread.ofPlatform().start(() -> {
            awaitQuietly(go);
            y.run();
        });
        go.countDown();
        tx.join();
        ty.join();
    }

    static void awaitQuietly(CountDownLatch l) {
        try {
            l.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return the process's open file descriptors (/proc/self/fd)} */
    static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
