package io.cqflux.test;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.internal.Checks;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * A server and a client {@link Cqflux} in this process, connected over the loopback interface:
 * the server exposes one registered region ({@link #memory()} shows its bytes), the client holds
 * an established {@link #connection()} to it, the server's end of it ({@link #serverConnection()})
 * and a registered region of its own for sources and destinations ({@link #local()}). Made by
 * {@link CqfluxTest#loopback()}:
 *
 * <pre>{@code
 * try (LoopbackPeer peer = CqfluxTest.loopback().regionSize(1 << 20).start()) {
 *     peer.localMemory().setString(0, "hello");
 *     peer.connection().write(peer.remote(), 0, peer.local(), 0, 6).block(Duration.ofSeconds(5));
 *     assertEquals("hello", peer.memory().getString(0));
 * }
 * }</pre>
 *
 * <p>{@link #close()} disposes both instances (and with them the connection, the server and the
 * regions) within a bounded time, then frees the memory; it is idempotent, and on an event-loop
 * thread it does not wait. Thread-safe.
 */
public final class LoopbackPeer implements AutoCloseable {
    private final Arena arena;
    private final Cqflux server;
    private final Cqflux client;
    private final Region exposed;
    private final Region local;
    private final RdmaServer rdmaServer;
    private final RdmaConnection connection;
    private final RdmaConnection serverConnection;
    private final Disposable acceptSubscription;
    private final LinkedBlockingQueue<RdmaConnection> accepted;
    /**
     * The server's end of each connection this peer made ({@link #connection()} and those of
     * {@link #connectAnother()}), by its client end.
     */
    private final Map<RdmaConnection, RdmaConnection> serverEnds = new ConcurrentHashMap<>();
    /** Serializes {@link #connectAnother()}, so that the connection it polls is its own. */
    private final Object connectLock = new Object();
    private final Duration timeout;
    private boolean closed;

    private LoopbackPeer(Builder b) {
        List<AutoCloseable> undo = new ArrayList<>();
        Arena a = Arena.ofShared();
        // As in close(): the memory is freed only when every instance built has ended in time,
        // never under a transport that may still use it.
        boolean[] ended = {true};
        undo.add(() -> {
            if (ended[0]) {
                a.close();
            }
        });
        try {
            Cqflux s = b.serverCustomizer.apply(b.base("server")).build();
            undo.addFirst(() -> ended[0] &= dispose(s, b.timeout));
            Cqflux.Builder cb = b.base("client");
            if (b.faults != null) {
                b.faults.configure(cb, b.transport);
            }
            Cqflux c = b.clientCustomizer.apply(cb).build();
            undo.addFirst(() -> ended[0] &= dispose(c, b.timeout));
            RegionAccess[] access = b.access.toArray(RegionAccess[]::new);
            Region ex = s.register(a.allocate(b.regionSize, 64), access);
            Region lo = c.register(a.allocate(b.regionSize, 64), access);
            RdmaServer srv = s.bind(new InetSocketAddress(b.address, 0), ex).block(b.timeout);
            LinkedBlockingQueue<RdmaConnection> acc = new LinkedBlockingQueue<>();
            Disposable sub = srv.connections().subscribe(acc::add);
            undo.addFirst(sub::dispose);
            RdmaConnection conn = c.connect(srv.address()).block(b.timeout);
            RdmaConnection sc = acc.poll(b.timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (conn == null || sc == null) {
                throw new IllegalStateException("the loopback connection to " + srv.address() + " was not established"
                        + " on both sides within " + b.timeout);
            }
            this.arena = a;
            this.server = s;
            this.client = c;
            this.exposed = ex;
            this.local = lo;
            this.rdmaServer = srv;
            this.accepted = acc;
            this.acceptSubscription = sub;
            this.connection = conn;
            this.serverConnection = sc;
            serverEnds.put(conn, sc);
            this.timeout = b.timeout;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            undoAll(undo, e);
            throw new IllegalStateException("interrupted while starting a loopback peer", e);
        } catch (RuntimeException | Error e) {
            undoAll(undo, e);
            throw e;
        }
    }

    private static void undoAll(List<AutoCloseable> undo, Throwable failure) {
        for (AutoCloseable u : undo) {
            try {
                u.close();
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
    }

    /** Disposes an instance; {@return whether it ended within the timeout} */
    private static boolean dispose(Cqflux c, Duration timeout) {
        c.dispose();
        try {
            c.onDispose().toFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** {@return the server instance} */
    public Cqflux server() {
        return server;
    }

    /** {@return the client instance (on the {@code faulty} transport when the builder was given {@link Faults})} */
    public Cqflux client() {
        return client;
    }

    /** {@return the listening server, bound to an ephemeral port} */
    public RdmaServer rdmaServer() {
        return rdmaServer;
    }

    /** {@return the address the server listens on} */
    public InetSocketAddress address() {
        return rdmaServer.address();
    }

    /** {@return the client's established connection to the server} */
    public RdmaConnection connection() {
        return connection;
    }

    /** {@return the server's end of {@link #connection()}} */
    public RdmaConnection serverConnection() {
        return serverConnection;
    }

    /** {@return the server's exposed region as the client addresses it ({@code connection().remoteRegion(0)})} */
    public PeerRegion remote() {
        return connection.remoteRegion(0);
    }

    /** {@return the server's exposed region, registered on the server} */
    public Region exposed() {
        return exposed;
    }

    /** {@return the bytes of the server's exposed region, to set up what the client reads and check what it wrote} */
    public MemorySegment memory() {
        return exposed.segment();
    }

    /** {@return the client's registered region, for the sources and destinations of its operations} */
    public Region local() {
        return local;
    }

    /** {@return the bytes of {@link #local()}} */
    public MemorySegment localMemory() {
        return local.segment();
    }

    /**
     * Connects another client connection to the server (with the same client instance) and
     * waits until the server has its end too. Calls are serialized, so that each one's server end
     * is the connection the server accepted for it.
     *
     * @return the client's end; {@link #serverEndOf} gives the server's
     * @throws IllegalStateException when it is not established within the builder's timeout
     * @throws io.cqflux.core.ResourceClosedException when the peer is closed (its client disposed)
     * @throws io.cqflux.core.ConnectionException when the client's connect fails
     */
    public RdmaConnection connectAnother() {
        synchronized (connectLock) {
            // A server end that came too late for an earlier call that gave up is not this one's.
            accepted.clear();
            RdmaConnection c = client.connect(rdmaServer.address()).block(timeout);
            RdmaConnection s;
            try {
                s = accepted.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (s == null) {
                throw new IllegalStateException("the server did not accept the connection within " + timeout);
            }
            serverEnds.put(c, s);
            return c;
        }
    }

    /**
     * The server's end of a connection this peer made.
     *
     * @param clientEnd {@link #connection()} or a connection {@link #connectAnother()} returned
     * @return its end on the server ({@link #serverConnection()} for {@link #connection()})
     * @throws IllegalArgumentException when this peer did not make {@code clientEnd}
     */
    public RdmaConnection serverEndOf(RdmaConnection clientEnd) {
        Objects.requireNonNull(clientEnd, "clientEnd");
        RdmaConnection s = serverEnds.get(clientEnd);
        if (s == null) {
            throw new IllegalArgumentException("connection " + clientEnd.description()
                    + " was not made by this loopback peer (its connection() or connectAnother())");
        }
        return s;
    }

    /**
     * Disposes the client and the server (waiting for both, each bounded by the builder's
     * timeout) and frees the regions' memory. Idempotent. On a Reactor {@code NonBlocking} thread
     * (an event loop, running a subscriber's callback) it starts the shutdown and returns, as
     * {@code Cqflux.close()} does there, and the memory is freed once both instances have ended;
     * so it is too when the calling thread is interrupted or the wait reaches its bound (the
     * interrupt flag is kept).
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        acceptSubscription.dispose();
        client.dispose();
        server.dispose();
        CompletableFuture<Void> both = CompletableFuture.allOf(client.onDispose().toFuture(),
                server.onDispose().toFuture());
        if (Schedulers.isInNonBlockingThread()) {
            // A wait here would hold the very loop whose end it waits for, to the bound, and the
            // memory would then never be freed.
            both.thenRun(arena::close);
            return;
        }
        try {
            both.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // The instances are still ending: their transports may still use the memory, so it
            // is freed only once both have ended, as on an event loop.
            Thread.currentThread().interrupt();
            both.thenRun(arena::close);
            return;
        } catch (java.util.concurrent.TimeoutException e) {
            // Bounded: a shutdown that does not finish in time is the instances' business; the
            // memory waits for it, never freed under a transport that may still use it.
            both.thenRun(arena::close);
            return;
        } catch (java.util.concurrent.ExecutionException e) {
            return;
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "LoopbackPeer[" + connection + "]";
    }

    /** Configures a {@link LoopbackPeer}. Not thread-safe. */
    public static final class Builder {
        /** The default size of each region: 64 KiB. */
        public static final long DEFAULT_REGION_SIZE = 64 * 1024;
        /** The default bound of {@link #start()} and of each wait in {@link LoopbackPeer#close()}. */
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

        private String transport = "fabric";
        private InetAddress address = InetAddress.getLoopbackAddress();
        private long regionSize = DEFAULT_REGION_SIZE;
        private Set<RegionAccess> access = EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.WRITE_SRC, RegionAccess.READ_DST, RegionAccess.SEND, RegionAccess.RECV,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        private Duration timeout = DEFAULT_TIMEOUT;
        private UnaryOperator<Cqflux.Builder> serverCustomizer = UnaryOperator.identity();
        private UnaryOperator<Cqflux.Builder> clientCustomizer = UnaryOperator.identity();
        private Faults faults;

        Builder() {
        }

        private Cqflux.Builder base(String role) {
            return Cqflux.builder().transport(transport).localAddress(address)
                    .threadNamePrefix("cqflux-test-" + role);
        }

        /**
         * Chooses the transport of both sides by its provider's name.
         *
         * @param name {@code fabric} (the default: libfabric's tcp provider, any host), {@code rpma}
         *     (an RDMA device must serve {@link #address(InetAddress)}) or {@code auto}
         * @return this
         */
        public Builder transport(String name) {
            this.transport = Objects.requireNonNull(name, "transport");
            return this;
        }

        /**
         * Sets the local address both sides bind to and connect over.
         *
         * @param address the address, 127.0.0.1 by default
         * @return this
         */
        public Builder address(InetAddress address) {
            this.address = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * Sets the size of the server's exposed region and of the client's local region.
         *
         * @param bytes at least 64 and at most 1 GiB
         * @return this
         */
        public Builder regionSize(long bytes) {
            this.regionSize = Checks.inRange("regionSize", bytes, 64, 1L << 30);
            return this;
        }

        /**
         * Sets what both regions may be used for.
         *
         * @param access the accesses; by default all of them with visibility flushes
         * @return this
         */
        public Builder access(RegionAccess... access) {
            Objects.requireNonNull(access, "access");
            if (access.length == 0) {
                throw new IllegalArgumentException("access is empty: a region needs at least one use");
            }
            EnumSet<RegionAccess> set = EnumSet.noneOf(RegionAccess.class);
            for (RegionAccess r : access) {
                set.add(Objects.requireNonNull(r, "access element"));
            }
            this.access = set;
            return this;
        }

        /**
         * Bounds {@link #start()}'s waits and each of {@link LoopbackPeer#close()}'s.
         *
         * @param timeout positive, at most one day (as {@code Cqflux.Builder.operationTimeout})
         * @return this
         */
        public Builder timeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            // Bounded above too: the waits take it in nanoseconds, which a longer one overflows.
            Checks.timeout("timeout", timeout);
            this.timeout = timeout;
            return this;
        }

        /**
         * Adjusts the server's builder after the kit's settings (transport, address, thread names).
         *
         * @param customizer applied once, in {@link #start()}
         * @return this
         */
        public Builder server(UnaryOperator<Cqflux.Builder> customizer) {
            this.serverCustomizer = Objects.requireNonNull(customizer, "customizer");
            return this;
        }

        /**
         * Adjusts the client's builder after the kit's settings (and the faulty transport's, if any).
         *
         * @param customizer applied once, in {@link #start()}
         * @return this
         */
        public Builder client(UnaryOperator<Cqflux.Builder> customizer) {
            this.clientCustomizer = Objects.requireNonNull(customizer, "customizer");
            return this;
        }

        /**
         * Puts the client on the {@code faulty} test transport with these rules, wrapping the
         * chosen transport; the server stays on the real one.
         *
         * @param faults the rules, e.g. {@link Faults#create()}
         * @return this
         */
        public Builder faults(Faults faults) {
            this.faults = Objects.requireNonNull(faults, "faults");
            return this;
        }

        /**
         * Starts both instances, registers the regions, binds, connects, and waits until both
         * ends are established.
         *
         * @return the running peer; close it
         * @throws io.cqflux.core.TransportUnavailableException when the transport cannot be opened
         * @throws IllegalStateException when the connection is not established within the timeout
         * @throws io.cqflux.core.ConnectionException when the client's connect fails first (refused,
         *     or past the connection configuration's connect timeout, 5 s by default)
         */
        public LoopbackPeer start() {
            return new LoopbackPeer(this);
        }
    }
}
