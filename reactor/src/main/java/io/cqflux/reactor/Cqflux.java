package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.internal.Transports;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopConfig;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.connection.Limits;
import io.cqflux.reactor.internal.pool.PoolCore;
import io.cqflux.reactor.internal.pool.PoolHost;
import io.cqflux.reactor.internal.resources.Arguments;
import io.cqflux.reactor.internal.resources.ConnectionFactory;
import io.cqflux.reactor.internal.resources.Holdings;
import io.cqflux.reactor.internal.resources.Instrumentation;
import io.cqflux.reactor.internal.resources.LoopGroup;
import io.cqflux.reactor.internal.resources.SetupThread;
import io.cqflux.reactor.internal.resources.Shutdown;
import io.cqflux.reactor.internal.resources.Startup;
import io.cqflux.reactor.internal.server.Binder;
import io.cqflux.reactor.internal.server.ServerAdmission;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The entry point: one per application. It owns a native transport, a group of event-loop
 * threads, and every region, server and connection created through it.
 *
 * <pre>{@code
 * try (Cqflux cq = Cqflux.builder().transport(TransportChoice.AUTO).build()) {
 *     Region buf = cq.register(segment, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
 *     RdmaConnection c = cq.connect(new InetSocketAddress("10.0.0.2", 7471)).block();
 *     c.durableWrite(c.remoteRegion(0), 0, buf, 0, 4096).block();
 * }
 * }</pre>
 *
 * <p><b>Lifetime.</b> {@link #dispose()} stops the servers, closes every connection (failing what
 * is pending on it), stops the loops, deregisters the regions and frees the transport, within the
 * {@linkplain Builder#shutdownTimeout(Duration) shutdown budget}, after which what is left is
 * forced; it is idempotent and returns at once. {@link #onDispose()} tells when it is done,
 * {@link #disposeNow(Duration)} waits, and {@link #close()} is {@code disposeNow(shutdownTimeout)}
 * ({@code dispose()} on a {@code NonBlocking} thread). See {@code docs/guide/getting-started.md}.
 *
 * <p><b>Thread safety.</b> Thread-safe. The event-loop threads are named
 * {@code <threadNamePrefix>-loop-<n>} ({@link Builder#threadNamePrefix(String)}).
 */
public final class Cqflux implements Disposable, AutoCloseable {
    final Transport transport;
    /** The event loops. */
    private final LoopGroup loops;
    final ConnectionConfig config;
    private final Limits limits;
    final int acceptBufferSize;
    private final Duration shutdownTimeout;
    private final String threadNamePrefix;
    /** Its servers, regions and peer pools: what its shutdown closes besides the connections. */
    private final Holdings<RdmaServer> holdings;
    /** The listening servers ({@link #holdings}', a live view: servers add and remove themselves). */
    final Set<RdmaServer> servers;
    /** What every server of this instance refused or ended, by kind: outlives the servers ({@link #serverStats()}). */
    final ServerAdmission.Counts refusalCounts = new ServerAdmission.Counts();
    final AtomicBoolean closing = new AtomicBoolean();
    private final BufferPool buffers;
    /** The listeners ({@link #addListener(CqfluxListener)}). */
    private final Instrumentation instrumentation = new Instrumentation();
    /** Connects, adopts accepted connections, keeps them until released. */
    final ConnectionFactory factory;
    /** The connections not released yet: {@link #factory}'s (a live view). */
    private final Set<ConnectionCore> connections;
    /** Runs the shutdown once; completes when everything is released. */
    private final Shutdown shutdown;

    private Cqflux(Builder b, Transport transport, EventLoop[] loops, String threadNamePrefix) {
        this.buffers = new BufferPool(this, transport, b.poolBuffers, b.poolBufferSize, b.poolMaxWaiters);
        this.transport = transport;
        this.loops = new LoopGroup(loops);
        this.config = b.config;
        this.limits = new Limits(b.pendingLimit, b.receiveBufferSize, b.notificationBacklog,
                b.operationTimeout, b.blockSpinNanos(), b.keepAliveInterval, b.keepAliveMisses);
        this.acceptBufferSize = b.acceptBufferSize;
        this.shutdownTimeout = b.shutdownTimeout;
        this.threadNamePrefix = threadNamePrefix;
        this.factory = new ConnectionFactory(this, transport, config, limits, this.loops, buffers, instrumentation,
                closing, new SetupThread(threadNamePrefix, b.backgroundPriority),
                SetupThread.forCloses(threadNamePrefix, b.backgroundPriority));
        this.connections = factory.connections();
        this.holdings = new Holdings<>(RdmaServer::closeAsync, buffers::close, closing);
        this.servers = holdings.servers();
        this.shutdown = new Shutdown(this, this.loops, connections, transport, closing, holdings, factory.setups(),
                factory.closes());
    }

    /** {@return a builder with the defaults: AUTO transport on the loopback address, one blocking loop} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the transport in use, e.g. {@code rpma} or {@code fabric/tcp}} */
    public String transportName() {
        return transport.name();
    }

    /** {@return the connection configuration in use} */
    public ConnectionConfig connectionConfig() {
        return config;
    }

    /** {@return the keep-alive's interval ({@link Builder#keepAlive}), {@link Duration#ZERO} when it is off} */
    public Duration keepAliveInterval() {
        return limits.keepAliveInterval();
    }

    /** {@return the keep-alive's misses: intervals without a sign of life before a connection ends LOST} */
    public int keepAliveMisses() {
        return limits.keepAliveMisses();
    }

    /** {@return the shutdown budget of {@link #dispose()} and {@link #close()}} */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * Installs a listener for metrics or tracing (the {@code cqflux-micrometer} module's
     * {@code CqfluxMetrics} is one): it hears of every connection established from now on (and at
     * once of those already open), every connection's end and every operation's outcome; threads
     * and cost: {@link CqfluxListener}.
     *
     * @param listener the listener
     * @return disposing it removes the listener (operations subscribed before may still report)
     */
    public Disposable addListener(CqfluxListener listener) {
        Objects.requireNonNull(listener, "listener");
        return instrumentation.add(listener, connections);
    }

    /** {@return the loops' thread names, in the order of {@link #loopStats()}} */
    public List<String> loopNames() {
        return loops.names();
    }

    /** {@return a snapshot of each event loop's counters} */
    public List<LoopStats> loopStats() {
        return loops.stats();
    }

    /**
     * {@return the servers of this instance together: the connections, handshakes and exposures
     * its live servers hold now, and what all its servers, disposed ones included, refused or
     * ended by {@link RefusalKind} since it was built (monotonic, for an operator's counters:
     * the micrometer module's {@code cqflux.server.*} meters read it). Any thread; the values are
     * read one after another, not as one snapshot}
     */
    public RdmaServer.Stats serverStats() {
        int[] live = holdings.sum(3, RdmaServer::live);
        return ServerAdmission.stats(live[0], live[1], live[2], refusalCounts);
    }

    /**
     * {@return this instance's registered staging buffers, through which the {@code byte[]} and
     * {@code ByteBuffer} forms of {@link RdmaConnection}'s operations copy; sized by
     * {@link Builder#bufferPool(int, int)}, registered on first use, closed with this instance}
     */
    public BufferPool buffers() {
        return buffers;
    }

    /**
     * Registers memory for RDMA.
     *
     * @param memory native memory that stays alive until the region is closed and deregistered
     * @param access what it may be used for (at least one)
     * @return the region; close it when done (closing this instance closes it too)
     * @throws IllegalArgumentException when {@code access} is empty or holds a null, or the memory
     *     is not native, is empty, was freed, or is read-only while {@code access} would let the NIC
     *     or the peer write into it ({@code READ_DST}, {@code WRITE_DST}, {@code RECV})
     * @throws io.cqflux.core.UnsupportedCapabilityException when {@code access} holds a
     *     {@code FLUSH_TYPE_*} the transport cannot deliver to this memory
     *     ({@code FLUSH_TYPE_PERSISTENT} on fabric, or on rpma without
     *     {@link Builder#directWriteToPersistentMemory(boolean)}), naming the types it delivers
     * @throws ResourceClosedException when this instance is closed
     */
    public Region register(MemorySegment memory, RegionAccess... access) {
        Objects.requireNonNull(memory, "memory");
        Set<RegionAccess> rights = Checks.accesses("access", access);
        checkOpen(); // the memory is checked by the transport (Checks.registration), once
        LocalRegion r = transport.register(memory, rights);
        Region region = new Region(r, transport);
        if (!holdings.add(region)) { // dispose() began after checkOpen (Holdings says why this holds)
            ResourceClosedException closed = new ResourceClosedException(this + " is disposed");
            try {
                region.close();
            } catch (RuntimeException e) {
                closed.addSuppressed(e);
            }
            throw closed;
        }
        return region;
    }

    /**
     * Starts listening and exposes regions to every peer that connects.
     *
     * @param address local address; port 0 picks a free port ({@link RdmaServer#address()})
     * @param exposed regions whose descriptors travel to each client in the accept's private data,
     *     bounded by the transport's limit (checked: an {@link IllegalArgumentException} names it)
     * @return a cold Mono of the listening server
     */
    public Mono<RdmaServer> bind(InetSocketAddress address, Region... exposed) {
        return Binder.bind(this, address, null, null, Arguments.exposedRegions(exposed), null);
    }

    /**
     * Starts listening and hands each established connection to {@code handler}, as reactor-netty
     * does: the handler is called on the connection's event-loop thread (don't block in it) and
     * its publisher subscribed at once; when that ends the connection is disposed (a failure
     * logged at WARN), and when the connection ends first the subscription is cancelled.
     * {@code c -> c.onDispose()} keeps each connection until the peer closes it.
     * {@link RdmaServer#connections()} is not used then.
     *
     * @param address local address; port 0 picks a free port ({@link RdmaServer#address()})
     * @param handler what to do with each connection
     * @param exposed regions exposed to every peer, as in {@link #bind(InetSocketAddress, Region...)}
     * @return a cold Mono of the listening server
     */
    public Mono<RdmaServer> bind(InetSocketAddress address,
                                 Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
                                 Region... exposed) {
        return Binder.bind(this, address, Objects.requireNonNull(handler, "handler"), null,
                Arguments.exposedRegions(exposed), null);
    }

    /**
     * Starts listening with options: a cqflux hello exposing regions
     * ({@link AcceptOptions#exposing(Region...)}), or raw private data decided per request
     * ({@link AcceptOptions#rawPrivateData(Function)}) for clients not written with cqflux.
     * Connections go to {@link RdmaServer#connections()}.
     *
     * @param address local address; port 0 picks a free port ({@link RdmaServer#address()})
     * @param options what accepts carry
     * @return a cold Mono of the listening server
     */
    public Mono<RdmaServer> bind(InetSocketAddress address, AcceptOptions options) {
        Objects.requireNonNull(options, "options");
        return Binder.bind(this, address, null, options.acceptFunction(), options.exposed(), options);
    }

    /**
     * Starts listening with options and hands each established connection to {@code handler}, as
     * {@link #bind(InetSocketAddress, Function, Region...)} does.
     *
     * @param address local address; port 0 picks a free port ({@link RdmaServer#address()})
     * @param options what accepts carry
     * @param handler what to do with each connection
     * @return a cold Mono of the listening server
     */
    public Mono<RdmaServer> bind(InetSocketAddress address, AcceptOptions options,
                                 Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        Objects.requireNonNull(options, "options");
        return Binder.bind(this, address, Objects.requireNonNull(handler, "handler"), options.acceptFunction(),
                options.exposed(), options);
    }

    /**
     * Listens and streams the incoming connections; cancelling the Flux stops listening.
     *
     * @param address local address and port
     * @param exposed regions exposed to every peer
     * @return a cold Flux of established connections
     */
    public Flux<RdmaConnection> listen(InetSocketAddress address, Region... exposed) {
        return bind(address, exposed).flatMapMany(s -> s.connections().doFinally(sig -> s.dispose()));
    }

    /**
     * Connects to a server. The connection knows the regions the server exposed
     * ({@link RdmaConnection#remoteRegions()}). The configured connection timeout applies, on
     * Reactor's parallel scheduler (virtual time works). A connection that reaches a subscriber
     * which has cancelled is closed; the one race where it may stay open until this instance is
     * disposed is in the guide's "Cancellation" ({@code docs/guide/operations.md}).
     *
     * @param address the server
     * @return a cold Mono of the established connection; fails with a {@link ConnectionException}
     *     ({@code REJECTED}, {@code UNREACHABLE}) when it cannot be established, with one of
     *     {@code CLOSED} when this instance is disposed while it connects, and with a
     *     {@link ResourceClosedException} when it was disposed before (or every one of its event
     *     loops ended on a fatal error: docs/guide/threads-and-metrics.md)
     */
    public Mono<RdmaConnection> connect(InetSocketAddress address) {
        return connect(address, new Region[0]);
    }

    /**
     * Connects to a server and exposes regions to it in the request's private data (bounded by
     * the transport's limit, checked): the server's {@link RdmaConnection#remoteRegions()}.
     *
     * @param address the server
     * @param exposed regions the server may access
     * @return a cold Mono of the established connection
     */
    public Mono<RdmaConnection> connect(InetSocketAddress address, Region... exposed) {
        Objects.requireNonNull(address, "address");
        return factory.connect(address, Arguments.exposedRegions(exposed), null, -1, null, true, null);
    }

    /**
     * Connects to a server with options: a cqflux hello exposing regions
     * ({@link ConnectOptions#exposing(Region...)}), or raw private data for a server not written
     * with cqflux ({@link ConnectOptions#rawPrivateData(byte[])}: sent verbatim; the server's
     * answer is {@link RdmaConnection#peerPrivateData()}).
     *
     * @param address the server
     * @param options what the request carries
     * @return a cold Mono of the established connection; fails with a {@link ConnectionException}
     *     when it cannot be established, and with an {@link IllegalArgumentException} when the raw
     *     private data exceeds {@link #maxConnectPrivateData()}; a cqflux hello connection whose
     *     server's private data is not a cqflux hello fails with a {@link ConnectionException}
     *     ({@code LOST}) naming why
     */
    public Mono<RdmaConnection> connect(InetSocketAddress address, ConnectOptions options) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(options, "options");
        return factory.connect(address, options.exposed(), options.raw(), options.receivePrefetch(),
                options.credentialsSupplier(), options.endsOnReceiveOverflow(), null);
    }

    /**
     * {@return the most private-data bytes a connect may carry: raw private data is bounded by it
     * exactly (rpma: 56, RDMA CM's limit on IB/RoCE; fabric: the provider's CM data size)}
     */
    public int maxConnectPrivateData() {
        return transport.maxConnectPrivateData();
    }

    /** {@return the most private-data bytes an accept may carry (rpma: 196; fabric: the provider's CM data size)} */
    public int maxAcceptPrivateData() {
        return transport.maxAcceptPrivateData();
    }

    /**
     * {@return a copy of this side's peer configuration descriptor, for a peer not written with
     * cqflux: on rpma the bytes of {@code rpma_peer_cfg_get_descriptor(3)} as
     * {@link Builder#directWriteToPersistentMemory(boolean)} declared (see {@link RpmaCommonData});
     * empty on transports without one (fabric)}
     */
    public byte[] peerConfigurationDescriptor() {
        return transport.handshake();
    }

    /**
     * Creates a pool of connections to one peer that heals: it connects at once, reconnects with
     * backoff whenever a connection ends, and learns the peer's regions again on each reconnect
     * (see {@link PeerPool}: look regions up inside {@link PeerPool#withConnection(Function)}).
     * Disposing this instance disposes the pool.
     *
     * @param address the peer
     * @param options size, connect options, backoff, what operations do while no connection is live
     * @return the pool, already connecting
     * @throws IllegalArgumentException when {@code address} is unresolved or has no port, or when
     *     the connect options' request cannot be sent (raw private data or a hello over the
     *     transport's limit, an exposed region of another instance)
     * @throws ResourceClosedException when this instance is disposed, or an exposed region is
     *     closed (one closed later ends the pool at its next connect: see {@link PeerPool})
     */
    public PeerPool peerPool(InetSocketAddress address, PeerPoolOptions options) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(options, "options");
        PeerPool.checkAddress(address);
        checkOpen();
        // What every connect of the pool would send, checked once now: a request that cannot be
        // sent would otherwise fail each attempt, and the pool would retry it forever.
        checkConnectRequest(options.connectOptions());
        PoolHost host = new PoolHost((a, o, r) -> factory.connect(a, o.exposed(), o.raw(), o.receivePrefetch(),
                o.credentialsSupplier(), o.endsOnReceiveOverflow(), r), loops.first(), config.timeout(),
                this::isDisposed, this::checkConnectRequest, holdings::forgetPool);
        PeerPool pool = PoolCore.start(host, address, options);
        if (!holdings.addPool(pool)) {
            pool.dispose(); // raced with dispose(), which may not have seen it (Holdings)
        }
        return pool;
    }

    /**
     * Creates a pool of one connection to a peer with {@link PeerPoolOptions#defaults()}; see
     * {@link #peerPool(InetSocketAddress, PeerPoolOptions)}.
     *
     * @param address the peer
     * @return the pool, already connecting
     * @throws IllegalArgumentException when {@code address} is unresolved or has no port
     * @throws ResourceClosedException when this instance is disposed
     */
    public PeerPool peerPool(InetSocketAddress address) {
        return peerPool(address, PeerPoolOptions.defaults());
    }

    /**
     * Refuses a connect request that cannot be sent ({@link ConnectionFactory#checkConnectRequest}).
     * A {@link PeerPool}'s one check of its request: at its creation, and again when a connect of
     * its fails before anything was sent (a region closed since then never opens again).
     *
     * @param co what each connect of the pool sends
     * @throws IllegalArgumentException when the request is over the limit or names a region of
     *     another instance
     * @throws ResourceClosedException when an exposed region is closed
     */
    void checkConnectRequest(ConnectOptions co) {
        factory.checkConnectRequest(co.raw(), co.exposed(), co.fixedCredentialsLength());
    }

    /**
     * Starts the shutdown with the {@linkplain Builder#shutdownTimeout(Duration) configured budget}
     * and returns at once; idempotent (a later call, or a {@link #disposeNow(Duration)}, neither
     * restarts it nor changes its budget). New regions, servers and connections are refused from
     * now on.
     */
    @Override
    public void dispose() {
        shutdown.start(shutdownTimeout);
    }

    /** {@return whether the shutdown has started} */
    @Override
    public boolean isDisposed() {
        return closing.get();
    }

    /**
     * {@return a Mono that completes once everything is released: servers and connections closed,
     * event-loop threads ended, regions deregistered, the transport freed. It never fails; late
     * subscribers complete at once} It completes on the thread that released the last of them,
     * often {@code <prefix>-close}, which with {@link Builder#backgroundPriority(boolean)} passes
     * its background priority on to a thread first started from it: wait from a thread of your own.
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(shutdown.terminated(), true);
    }

    /**
     * Shuts down with {@code timeout} as the budget (unless a shutdown already runs: it keeps its
     * own) and blocks until everything is released.
     *
     * @param timeout the budget and how long to wait, at least zero
     * @throws IllegalStateException when not everything was released within {@code timeout} (the
     *     message names what is left), or when called on a Reactor {@code NonBlocking} thread such
     *     as an event loop (nothing is disposed then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        Lifecycle.await(this, shutdown.start(timeout), timeout, shutdown::unreleased);
    }

    /**
     * For try-with-resources: {@code disposeNow(shutdownTimeout())}, so it blocks until everything
     * is released and throws {@link IllegalStateException} naming what is left when that takes
     * longer than the budget. On a Reactor {@code NonBlocking} thread (an event loop, a parallel
     * scheduler) it is {@link #dispose()} instead: it starts the shutdown and returns.
     */
    @Override
    public void close() {
        if (Schedulers.isInNonBlockingThread()) {
            dispose();
            return;
        }
        disposeNow(shutdownTimeout);
    }

    void checkOpen() {
        if (closing.get()) {
            throw new ResourceClosedException(this + " is disposed");
        }
    }

    /** {@return the loop for the next connection (round-robin)} */
    EventLoop nextLoop() {
        return loops.next();
    }

    /** {@return the first loop ({@link LoopGroup#first()})} */
    EventLoop firstLoop() {
        return loops.first();
    }

    /** {@return the per-connection limits (a server's receives before the accept use its buffer size)} */
    Limits limits() {
        return limits;
    }

    /** {@return the transport (for the server's per-connection control words)} */
    Transport transport() {
        return transport;
    }

    void forget(RdmaServer server) {
        servers.remove(server);
    }

    /** {@return the number of open connections (diagnostics, tests)} */
    int openConnections() {
        return connections.size();
    }

    /** {@return the number of regions registered through {@link #register} and not yet deregistered (diagnostics, tests)} */
    int openRegions() {
        return holdings.regions().size();
    }

    /** {@return whether the server is kept; {@code false} when the shutdown began ({@link Holdings#addServer})} */
    boolean keep(RdmaServer server) {
        return holdings.addServer(server);
    }

    /** {@return the number of listening servers (diagnostics, tests)} */
    int openServers() {
        return servers.size();
    }

    @Override
    public String toString() {
        return "Cqflux[" + threadNamePrefix + ", " + transport.name() + "]";
    }

    /** Configures and builds a {@link Cqflux}. Not thread-safe. */
    public static final class Builder {
        /** The default interval of {@link #keepAlive(Duration, int)}: 10 seconds. */
        public static final Duration DEFAULT_KEEP_ALIVE_INTERVAL = Duration.ofSeconds(10);
        /** The default misses of {@link #keepAlive(Duration, int)}: 3. */
        public static final int DEFAULT_KEEP_ALIVE_MISSES = 3;
        /** The shortest interval of {@link #keepAlive(Duration, int)}: 10 ms. */
        public static final Duration MIN_KEEP_ALIVE_INTERVAL = Duration.ofMillis(10);
        /** The default of {@link #shutdownTimeout(Duration)}: 30 seconds. */
        public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);
        /** The default of {@link #acceptBufferSize(int)}: 64 connections. */
        public static final int DEFAULT_ACCEPT_BUFFER_SIZE = 64;
        /** The most {@link #acceptBufferSize(int)} allows. */
        public static final int MAX_ACCEPT_BUFFER_SIZE = 65_536;
        /** The default of {@link #blockSpin(Duration)} where a core is free: 50 µs. */
        public static final int DEFAULT_BLOCK_SPIN_MICROS = 50;
        /** The longest interval of {@link #keepAlive(Duration, int)}: one day. */
        private static final Duration MAX_KEEP_ALIVE_INTERVAL = Duration.ofDays(1);
        /** The most memory one connection's receive pool may take (receive queue depth x receive buffer size). */
        private static final long MAX_RECEIVE_POOL_BYTES = 1L << 34;
        /** The most {@link #blockSpin(Duration)} allows. */
        private static final Duration MAX_BLOCK_SPIN = Duration.ofMillis(1);
        /** Numbers the instances built with the default thread-name prefix, from 1. */
        private static final AtomicInteger INSTANCES = new AtomicInteger();

        private String transportName = Transports.AUTO;
        private final Map<String, String> transportProperties = new HashMap<>();
        private boolean directWriteToPmem;
        private InetAddress localAddress = InetAddress.getLoopbackAddress();
        private WaitStrategy waitStrategy = WaitStrategy.BLOCKING;
        private boolean backgroundPriority;
        private int batchSize = 32;
        private int loopCount = 1;
        private int pendingLimit = 4096;
        private int receiveBufferSize = 4096;
        private int notificationBacklog = 4096;
        private Duration operationTimeout = Duration.ofSeconds(30);
        /** {@link #keepAlive}; {@link Duration#ZERO}: off ({@link #noKeepAlive()}). */
        private Duration keepAliveInterval = DEFAULT_KEEP_ALIVE_INTERVAL;
        private int keepAliveMisses = DEFAULT_KEEP_ALIVE_MISSES;
        private ConnectionConfig config = ConnectionConfig.DEFAULT;
        private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
        private int acceptBufferSize = DEFAULT_ACCEPT_BUFFER_SIZE;
        private String threadNamePrefix;
        private int poolBuffers = BufferPool.DEFAULT_BUFFERS;
        private int poolBufferSize = BufferPool.DEFAULT_BUFFER_SIZE;
        private int poolMaxWaiters = BufferPool.DEFAULT_MAX_WAITERS;
        private Duration blockedLoopThreshold = LoopConfig.DEFAULT_BLOCKED_THRESHOLD;
        /** {@link #blockSpin(Duration)}; null: the default, decided in {@link #blockSpinNanos()}. */
        private Duration blockSpin;

        private Builder() {
        }

        /**
         * How long a thread blocked in an operation's {@code block()} or {@code block(Duration)}
         * spins, watching for the completion, before it parks as Reactor's {@code block()} does
         * (a parked caller costs a futex wake-up, on a virtual machine about a whole operation).
         * Otherwise it is Reactor's {@code block()}: the refusal on a {@code NonBlocking} thread,
         * the exceptions, the cancel on timeout or interrupt. Only the Monos the region and the
         * {@code byte[]}/{@code ByteBuffer} operation methods return spin; the {@link BufferLease}
         * forms, and a Mono built on any of them ({@code write(...).then(...)}), block as
         * Reactor's does. By default {@value #DEFAULT_BLOCK_SPIN_MICROS} µs when the machine has
         * more processors than this instance's spinning loops ({@link WaitStrategy#BUSY_POLL} or
         * adaptive) plus one, else zero; see {@code docs/guide/threads-and-metrics.md}.
         *
         * @param spin zero to park at once, at most one millisecond
         * @return this
         * @throws IllegalArgumentException when {@code spin} is negative or above one millisecond
         */
        public Builder blockSpin(Duration spin) {
            Objects.requireNonNull(spin, "blockSpin");
            this.blockSpin = Checks.inRange("blockSpin", spin, Duration.ZERO, MAX_BLOCK_SPIN);
            return this;
        }

        /** {@return the spin budget in nanoseconds: the one set, else the default (see blockSpin)} */
        long blockSpinNanos() {
            return Startup.blockSpinNanos(blockSpin, waitStrategy, loopCount, DEFAULT_BLOCK_SPIN_MICROS);
        }

        /**
         * Sizes the registered staging buffers ({@link Cqflux#buffers()}) through which the
         * {@code byte[]} and {@code ByteBuffer} operation forms copy: a fixed number, each carrying
         * at most {@code bufferSize} bytes per operation, allocated and registered on first use.
         * Default {@value BufferPool#DEFAULT_BUFFERS} buffers of
         * {@value BufferPool#DEFAULT_BUFFER_SIZE} bytes.
         *
         * @param buffers the number of buffers, 1..{@value BufferPool#MAX_BUFFERS}
         * @param bufferSize bytes per buffer, 1..{@value BufferPool#MAX_BUFFER_SIZE}; all buffers
         *     together at most {@value BufferPool#MAX_POOL_BYTES} bytes
         * @return this
         * @throws IllegalArgumentException naming the value and its bound
         */
        public Builder bufferPool(int buffers, int bufferSize) {
            return bufferPool(buffers, bufferSize, poolMaxWaiters);
        }

        /**
         * Sizes the staging buffers as {@link #bufferPool(int, int)} and bounds the takers that
         * may wait (FIFO) while all are leased: one more fails with
         * {@link io.cqflux.core.QueueFullException}. Default {@value BufferPool#DEFAULT_MAX_WAITERS}.
         *
         * @param buffers the number of buffers, 1..{@value BufferPool#MAX_BUFFERS}
         * @param bufferSize bytes per buffer, 1..{@value BufferPool#MAX_BUFFER_SIZE}
         * @param maxWaiters takers that may wait, 0..{@value BufferPool#MAX_WAITERS} (0: never wait)
         * @return this
         * @throws IllegalArgumentException naming the value and its bound
         */
        public Builder bufferPool(int buffers, int bufferSize, int maxWaiters) {
            BufferPool.checkConfig(buffers, bufferSize, maxWaiters);
            this.poolBuffers = buffers;
            this.poolBufferSize = bufferSize;
            this.poolMaxWaiters = maxWaiters;
            return this;
        }

        /**
         * Sets how long subscriber code (or any task) may hold an event-loop thread before the
         * loop reports it: a WARN line naming the thread, the duration and the operation kind (at
         * most once per 10 s per loop) and {@link LoopStats#blocked()}. Code on the loop delays
         * every other connection on it: move heavy work off with {@code publishOn}. Default 100 ms.
         *
         * @param threshold at least zero, at most one hour; {@link Duration#ZERO} turns the
         *     detection off
         * @return this
         * @throws IllegalArgumentException when {@code threshold} is negative or above one hour
         */
        public Builder blockedLoopThreshold(Duration threshold) {
            this.blockedLoopThreshold = LoopConfig.checkBlockedThreshold(threshold);
            return this;
        }

        /**
         * Sets the shutdown budget of {@link Cqflux#dispose()} and {@link Cqflux#close()}: how long
         * connections get to close and the loops to run their queued work before the shutdown
         * forces them, and how long {@code close()} waits ({@link Cqflux#disposeNow(Duration)}
         * takes its own). Default 30 s.
         *
         * @param timeout the budget, at least zero
         * @return this
         * @throws IllegalArgumentException when {@code timeout} is negative
         */
        public Builder shutdownTimeout(Duration timeout) {
            this.shutdownTimeout = Lifecycle.checkTimeout(timeout, "shutdownTimeout");
            return this;
        }

        /**
         * Sets how many accepted connections {@link RdmaServer#connections()} holds for its
         * subscriber (before it subscribes, or beyond its demand); one more is closed and logged
         * at WARN. Servers bound with a handler do not buffer. Default 64.
         *
         * @param n connections, 1..{@value #MAX_ACCEPT_BUFFER_SIZE}
         * @return this
         * @throws IllegalArgumentException when {@code n} is outside that range
         */
        public Builder acceptBufferSize(int n) {
            this.acceptBufferSize = Checks.inRange("acceptBufferSize", n, 1, MAX_ACCEPT_BUFFER_SIZE);
            return this;
        }

        /**
         * Names the event-loop threads {@code <prefix>-loop-<n>}; by default each instance of the
         * JVM gets its own prefix, {@code cqflux-1}, {@code cqflux-2}, ...
         *
         * @param prefix the prefix, not blank
         * @return this
         * @throws IllegalArgumentException when {@code prefix} is blank
         */
        public Builder threadNamePrefix(String prefix) {
            Objects.requireNonNull(prefix, "threadNamePrefix");
            this.threadNamePrefix = Arguments.notBlank("threadNamePrefix", prefix);
            return this;
        }

        /** @param c which transport @return this */
        public Builder transport(TransportChoice c) {
            this.transportName = Objects.requireNonNull(c, "transport").name().toLowerCase(Locale.ROOT);
            return this;
        }

        /**
         * Chooses a transport by its provider's name ({@code rpma}, {@code fabric}, or
         * {@code auto}: the available one of the highest priority), found with
         * {@link java.util.ServiceLoader}: put {@code cqflux-transport-rpma} and/or
         * {@code cqflux-transport-fabric} on the class path or module path.
         *
         * @param name the provider's name
         * @return this
         */
        public Builder transport(String name) {
            this.transportName = Objects.requireNonNull(name, "transport").toLowerCase(Locale.ROOT);
            return this;
        }

        /** @param p the libfabric provider for the fabric transport ({@code tcp} by default) @return this */
        public Builder fabricProvider(String p) {
            return transportProperty(TransportOptions.FABRIC_PROVIDER, Objects.requireNonNull(p, "provider"));
        }

        /**
         * Sets a transport-specific option ({@link TransportOptions#properties()}). A name in the
         * namespace of the transport that opens ({@code fabric.}, {@code rpma.}) which that
         * transport does not know fails {@link #build()} with an {@code IllegalArgumentException}
         * naming it; another transport's names are ignored.
         *
         * @param name the option, e.g. {@code fabric.provider}
         * @param value its value
         * @return this
         */
        public Builder transportProperty(String name, String value) {
            transportProperties.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Declares that this side's registered memory is persistent and takes RDMA writes directly
         * (no volatile cache in between), so that peers may flush their writes to it
         * {@link io.cqflux.core.FlushType#PERSISTENT}; regions registered with
         * {@link RegionAccess#FLUSH_TYPE_PERSISTENT} need it. Off by default. {@link #build()}
         * refuses it on a transport that cannot give a PERSISTENT flush (fabric): see the guide's
         * "Durable writes" ({@code docs/guide/operations.md}).
         *
         * @param enabled the declaration; the library trusts it
         * @return this
         */
        public Builder directWriteToPersistentMemory(boolean enabled) {
            this.directWriteToPmem = enabled;
            return this;
        }

        /**
         * @param a the local interface address the transport binds to: one of this host's (a
         *     loopback address, or one a network interface has)
         * @return this
         * @throws IllegalArgumentException when no interface of this host has {@code a} (libfabric's
         *     tcp provider would bind where the route says, not where asked), a virtual address
         *     not given to an interface yet included
         */
        public Builder localAddress(InetAddress a) {
            Objects.requireNonNull(a, "localAddress");
            this.localAddress = Startup.checkLocalAddress(a);
            return this;
        }

        /** @param w how the event loops wait @return this */
        public Builder waitStrategy(WaitStrategy w) {
            this.waitStrategy = Objects.requireNonNull(w, "waitStrategy");
            return this;
        }

        /**
         * Runs the instance's set-up and close threads at background CPU priority (nice +19), so
         * that a storm of connects or closes takes from established connections only the CPU their
         * loops leave (docs/performance.md). Off by default: a thread inherits the priority of the
         * thread that starts it and cannot raise it back, so a worker first started from code
         * running there stays at background priority, as do threads a native provider starts
         * during a set-up. The code that runs there: a connect's credentials supplier,
         * {@link Cqflux#onDispose()}'s subscribers, and, once a loop has ended, the signals it
         * would have delivered (a connect's error, a connection's {@code events()} and close).
         * Beside {@link WaitStrategy#adaptive adaptive} loops under steady traffic set-ups and
         * closes get little CPU, and connect and shutdown bounds include that wait.
         *
         * @param enabled whether to
         * @return this
         * @throws IllegalArgumentException at {@link #build()} when enabled beside
         *     {@link WaitStrategy#BUSY_POLL} loops, which never sleep
         */
        public Builder backgroundPriority(boolean enabled) {
            this.backgroundPriority = enabled;
            return this;
        }

        /**
         * @param n completions read per native call, 1..{@value LoopConfig#MAX_BATCH}
         * @return this
         */
        public Builder batchSize(int n) {
            this.batchSize = Checks.inRange("batchSize", n, 1, LoopConfig.MAX_BATCH);
            return this;
        }

        /**
         * @param n event-loop threads, 1..64; connections are spread over them round-robin
         * @return this
         */
        public Builder loops(int n) {
            this.loopCount = Checks.inRange("loops", n, 1, 64);
            return this;
        }

        /**
         * @param n operations that may wait for a send-queue credit per connection, 0..1,048,576;
         *     beyond it an operation fails with {@link io.cqflux.core.QueueFullException} (one that
         *     finds a credit is posted at once whatever the limit: with 0, nothing waits)
         * @return this
         */
        public Builder pendingLimit(int n) {
            this.pendingLimit = Checks.inRange("pendingLimit", n, 0, 1 << 20);
            return this;
        }

        /**
         * @param n bytes per receive buffer, 1..16 MiB; times the receive queue's depth
         *     ({@link ConnectionConfig#receiveQueueSize()}) at most 16 GiB, the receive pool of one
         *     connection, checked by {@link #build()}
         * @return this
         */
        public Builder receiveBufferSize(int n) {
            this.receiveBufferSize = Checks.inRange("receiveBufferSize", n, 1, 1 << 24);
            return this;
        }

        /**
         * How long a posted operation may go without a completion before its connection is
         * declared {@code LOST} and every operation on it fails with a {@link ConnectionException}:
         * the bound on waiting for a peer that stopped answering without closing. 30 s by default.
         * From a second up an operation's age counts from the loop's last clock reading before its
         * post, so a loop held by one callback for about the timeout may declare the connection
         * lost early.
         *
         * @param timeout a positive duration, at most one day
         * @return this
         */
        public Builder operationTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "operationTimeout");
            Checks.timeout("operationTimeout", timeout);
            this.operationTimeout = timeout;
            return this;
        }

        /**
         * Checks that an idle connection's peer is still there, which {@link #operationTimeout}
         * cannot see while nothing is in flight: every {@code interval} without a completion, an
         * 8-byte RDMA read asks the peer for a sign of life (its NIC answers on rpma/verbs, its
         * event loop on fabric/tcp), and after {@code misses} probes in a row unanswered the
         * connection ends {@code LOST} with a {@link ConnectionException} naming the keep-alive,
         * within about {@code (misses + 1) x interval}, on both sides. A busy connection sends no
         * probe. On by default, {@value #DEFAULT_KEEP_ALIVE_MISSES} x 10 s; between cqflux peers
         * only (never with raw private data). Details: {@code docs/guide/getting-started.md}.
         *
         * @param interval how often an idle connection is checked, in [10 ms, 1 day]
         * @param misses probes in a row left unanswered before the connection ends, in
         *     [1, 1000]
         * @return this
         * @throws IllegalArgumentException when a value is outside its bounds (to switch the
         *     keep-alive off, {@link #noKeepAlive()})
         */
        public Builder keepAlive(Duration interval, int misses) {
            Objects.requireNonNull(interval, "keepAlive interval (noKeepAlive() switches it off)");
            Arguments.keepAliveInterval(interval, MIN_KEEP_ALIVE_INTERVAL, MAX_KEEP_ALIVE_INTERVAL);
            this.keepAliveMisses = Checks.inRange("keepAlive misses", misses, 1, 1000);
            this.keepAliveInterval = interval;
            return this;
        }

        /**
         * Switches the keep-alive off ({@link #keepAlive}): an idle connection then learns of a
         * silent peer only when an operation on it passes its {@link #operationTimeout}.
         *
         * @return this
         */
        public Builder noKeepAlive() {
            this.keepAliveInterval = Duration.ZERO;
            return this;
        }

        /**
         * How many write-with-immediate notifications that consumed no receive buffer (fabric/tcp)
         * are kept per connection while nobody receives; one more ends the connection rather than
         * be dropped. 4096 by default.
         *
         * @param n 1..1,048,576
         * @return this
         */
        public Builder notificationBacklog(int n) {
            this.notificationBacklog = Checks.inRange("notificationBacklog", n, 1, 1 << 20);
            return this;
        }

        /**
         * @param c queue sizes and timeouts of every connection; the send queue needs at least 2
         *     entries (a durable write holds two)
         * @return this
         */
        public Builder connectionConfig(ConnectionConfig c) {
            Objects.requireNonNull(c, "connectionConfig");
            this.config = Arguments.connectionConfig(c);
            return this;
        }

        /**
         * Opens the transport and starts the loops.
         *
         * @return the instance
         * @throws io.cqflux.core.TransportUnavailableException when the chosen transport cannot be opened
         * @throws io.cqflux.core.UnsupportedCapabilityException when
         *     {@link #directWriteToPersistentMemory(boolean)} was declared and the transport cannot
         *     deliver a PERSISTENT flush (fabric)
         * @throws IllegalArgumentException when a connection's receive pool (receive queue depth
         *     times {@link #receiveBufferSize(int)}) exceeds 16 GiB; when a {@link #transportProperty}
         *     in the opening transport's namespace is unknown to it or has a value it refuses (named);
         *     or for {@link #backgroundPriority(boolean) backgroundPriority(true)} beside
         *     {@link WaitStrategy#BUSY_POLL} loops
         */
        public Cqflux build() {
            Arguments.receivePool(config.receiveQueueSize(), receiveBufferSize, MAX_RECEIVE_POOL_BYTES);
            Startup.startSharedThreads(backgroundPriority, waitStrategy);
            Transport t = Startup.openTransport(transportName,
                    new TransportOptions(localAddress, directWriteToPmem, transportProperties));
            String prefix = threadNamePrefix != null ? threadNamePrefix : "cqflux-" + INSTANCES.incrementAndGet();
            EventLoop[] ls = Startup.startLoops(prefix, loopCount, waitStrategy, batchSize, blockedLoopThreshold,
                    shutdownTimeout, t);
            return new Cqflux(this, t, ls, prefix);
        }
    }
}
