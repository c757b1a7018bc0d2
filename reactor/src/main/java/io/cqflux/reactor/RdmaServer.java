package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.connection.PeerControl;
import io.cqflux.reactor.internal.connection.PeerHello;
import io.cqflux.reactor.internal.connection.SharedReceivePool;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A listening endpoint created by {@link Cqflux#bind}: accepts connections and hands each peer
 * the descriptors of the exposed regions in the accept's private data.
 *
 * <p><b>Isolation between clients.</b> Each accepted connection is given registrations of its
 * own of the exposed regions (its own keys), revoked once the connection's native side is gone
 * or the region is closed: a key outlives neither. With
 * {@link AcceptOptions#authenticatedBy(Authenticator)} nothing is registered for a request
 * before its authenticator allowed it. {@link AcceptOptions#withMaxConnections(int)},
 * {@link AcceptOptions#withMaxPendingHandshakes(int)} and
 * {@link AcceptOptions#withHandshakeTimeout(Duration)} bound what clients can hold; what they
 * refused is in {@link #stats()}. See {@code docs/security.md}.
 *
 * <p><b>Where connections go.</b> A server bound with a handler
 * ({@link Cqflux#bind(InetSocketAddress, Function, Region...)}) hands each one to it. Otherwise
 * {@link #connections()} streams them to one subscriber through a bounded buffer
 * ({@link Cqflux.Builder#acceptBufferSize(int)}): a connection that arrives while the buffer is
 * full, or after that subscriber cancelled, is closed and logged at WARN, never kept.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} (or {@link #close()}, the
 * same for try-with-resources) stops listening: idempotent and non-blocking; {@link #onDispose()}
 * completes once the native listener is freed, {@link #disposeNow(Duration)} waits for it.
 * Connections already accepted live on. Disposing the {@link Cqflux} disposes the server too.
 */
public final class RdmaServer implements Disposable, AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final Cqflux owner;
    private final EventLoop loop;
    private final Listener listener;
    private final List<Region> exposed;
    private final ConnectionConfig config;
    private final InetSocketAddress address;
    /** Decides on each request from its raw private data; null: a cqflux hello server. */
    private final Function<byte[], AcceptDecision> rawAccept;
    /** Buffers of the shared receive pool; 0: each connection has its own (AcceptOptions.withSharedReceivePool). */
    private final int sharedReceiveBuffers;
    /** The connections' shared receive pool, registered on the first accept (written by the loop thread). */
    private volatile SharedReceivePool sharedReceives;
    /** Where established connections go: the handler, or {@link #connections()}. */
    private final ServerOutlet outlet;
    /** How admitted requests are accepted (their native part off the loop where the transport allows it). */
    private final ServerAccepts accepts;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final AtomicBoolean disposed = new AtomicBoolean();
    private Registration registration;
    private boolean closing;

    /** The limits, the handshakes and the counters of {@link #stats()}. */
    private final ServerAdmission admission;
    private final Duration handshakeTimeout;
    /** The authenticator's questions and the requests it has not decided on; null: none. */
    private final ServerAuthentication authentication;
    /** Whether accepted connections get a key scope of their own (AcceptOptions#withKeysScopedToConnection). */
    private final boolean scopedKeys;

    RdmaServer(Cqflux owner, EventLoop loop, Listener listener, List<Region> exposed, ConnectionConfig config,
               Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
               Function<byte[], AcceptDecision> rawAccept, int bufferSize, AcceptOptions options) {
        this.owner = owner;
        this.loop = loop;
        this.listener = listener;
        this.exposed = exposed;
        this.config = config;
        this.address = listener.address();
        this.rawAccept = rawAccept;
        this.sharedReceiveBuffers = sharedReceiveChunk(options, config, rawAccept != null,
                owner.limits().receiveBufferSize());
        AcceptOptions o = options != null ? options : AcceptOptions.defaults(exposed);
        this.admission = new ServerAdmission(address, o.maxConnections(), o.maxPendingHandshakes(),
                owner.refusalCounts);
        this.handshakeTimeout = o.handshakeTimeout() != null ? o.handshakeTimeout() : config.timeout();
        this.authentication = o.authenticator() == null ? null
                : new ServerAuthentication(this, loop, o.authenticator(), admission, handshakeTimeout);
        this.outlet = new ServerOutlet(toString(), handler, bufferSize);
        // Scoped keys only when asked for; the bind refused a request the transport cannot serve.
        this.scopedKeys = rawAccept == null && o.keysScopedToConnection();
        // Receives kept posted ahead of demand on each connection (-1: the connection's default);
        // posted before each accept only with raw private data.
        this.accepts = new ServerAccepts(this, owner, loop, config, exposed, admission, outlet, handshakeTimeout,
                rawAccept != null, options == null ? -1 : options.receivePrefetch(),
                options == null || options.endsOnReceiveOverflow(),
                rawAccept != null && options != null && options.receivesBeforeAccept(), scopedKeys);
    }

    /**
     * {@return whether each connection this server accepts gets keys that work on it only
     * ({@link AcceptOptions#withKeysScopedToConnection(boolean)}; off by default, never with raw
     * private data: nothing is registered for such a connection)}
     */
    public boolean keysScopedToConnection() {
        return scopedKeys;
    }

    /**
     * Refuses, at the bind, keys scoped to their connection on a transport that cannot scope them,
     * naming the transport and why.
     *
     * @throws io.cqflux.core.UnsupportedCapabilityException when {@code options} ask for them and the
     *     transport cannot
     */
    static void checkScopedKeys(AcceptOptions options, io.cqflux.core.spi.Transport transport) {
        if (options == null || !options.keysScopedToConnection()) {
            return; // not asked for
        }
        String why = transport.connectionScopedKeysRefusal();
        if (why != null) {
            throw new io.cqflux.core.UnsupportedCapabilityException(transport.name(),
                    io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS,
                    "AcceptOptions.withKeysScopedToConnection cannot be served: " + why);
        }
    }

    /** Loop thread: starts watching the listener. */
    void start() {
        registration = loop.register(listener, this::onReadable, this::closeAsync);
        onReadable();
    }

    /** {@return the address it listens on, with the port actually bound} */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * {@return the established incoming connections, for one subscriber; completes when the server
     * is disposed. Up to {@link Cqflux.Builder#acceptBufferSize(int)} connections wait for that
     * subscriber or its demand; one arriving beyond that, or after the subscriber cancelled, is
     * closed (WARN). Connections still buffered when the subscriber cancels are closed too; those
     * buffered when the server is disposed stay claimable until the {@link Cqflux} is disposed.
     * On a server bound with a handler, it fails with an {@link IllegalStateException}: the
     * handler receives every connection}
     */
    public Flux<RdmaConnection> connections() {
        if (outlet.hasHandler()) {
            return Flux.error(new IllegalStateException(this + " hands every connection to the handler given to"
                    + " Cqflux.bind; connections() has none"));
        }
        return outlet.flux();
    }

    /**
     * The most requests one readiness call of the listener takes: one. Why: each accept is set-up
     * work on this loop (the request's read and admission, the adoption; and the native accept
     * itself where the transport keeps it on the loop, ServerAccepts), and a burst of clients
     * queues many requests at once; taken all in one call, every other connection of the loop
     * waits for the whole burst (docs/performance.md, "Connection set-up"). And a call that read
     * on until the listener answered "none" would pay a whole read for that answer: on fabric/tcp
     * an empty fi_eq_read drives the provider's progress as a full one does, while the loop asks
     * the listener before its next sleep anyway (fi_trywait(3), far cheaper). What must hold: no
     * request is stranded by the early return. The listener stays ready while requests are
     * queued: its fd is level-triggered; before any sleep the loop asks it
     * ({@code prepareToSleep}, fi_trywait(3): -FI_EAGAIN while its event queue holds entries)
     * and calls this again on a "not yet", and a spinning loop asks again after each call while
     * the answer stays so (SpinRound's design comment, "A readable source in a busy round").
     * AcceptBurstTest.
     */
    static final int ACCEPTS_PER_CALL = 1;

    /** Readiness calls that stopped at {@link #ACCEPTS_PER_CALL} (loop thread writes; tests read). */
    private volatile long callsAtTheCap;

    /** Refusals that accepted a connection to carry their reason (loop thread writes; tests read). */
    private volatile long refusedByAccept;

    /** {@return how many refusals accepted a connection to carry their reason, i.e. opened an endpoint} (tests) */
    long refusedByAccept() {
        return refusedByAccept;
    }

    /**
     * The shared receive pool's chunk of a server bound with these options, checked against
     * {@link SharedReceivePool#MAX_CHUNK_BYTES} so that a chunk too large fails the bind, not an accept.
     *
     * @return buffers per chunk; 0: no shared pool
     * @throws IllegalArgumentException naming the chunk, the buffer size and the bound when it is too large
     */
    static int sharedReceiveChunk(AcceptOptions options, ConnectionConfig config, boolean raw, int bufferSize) {
        int shared = options == null ? 0 : options.sharedReceivePool();
        int chunk = raw || config.receiveQueueSize() == 0 ? 0
                : shared >= 0 ? shared
                : (int) Math.min(AcceptOptions.MAX_SHARED_RECEIVE_POOL,
                        (long) AcceptOptions.SHARED_POOL_DEPTHS * config.receiveQueueSize());
        if (chunk > 0) {
            SharedReceivePool.checkChunkBytes(chunk, bufferSize);
        }
        return chunk;
    }

    /** {@return the shared receive pool, or {@code null} before the first accept or without one} (tests) */
    SharedReceivePool sharedReceivePool() {
        return sharedReceives;
    }

    /** {@return how many readiness calls of the listener stopped at the cap} (tests) */
    long callsAtTheCap() {
        return callsAtTheCap;
    }

    private void onReadable() {
        loop.noteSetup("cqflux.accept"); // the library's own work: not a blocked-loop WARN
        for (int taken = 0; !closing; taken++) {
            if (taken == ACCEPTS_PER_CALL) {
                callsAtTheCap++; // NOSONAR: written by the loop thread only
                return;
            }
            loop.noteSetup("cqflux.accept"); // after a previous request's subscriber code
            ConnectionRequest req;
            try {
                req = listener.nextRequest();
            } catch (RuntimeException e) {
                // Its fd stays readable (level-triggered): keeping it registered would spin.
                LOG.warn("listener on " + address + " failed; the server closes", e);
                closeAsync();
                return;
            }
            if (req == null) {
                return;
            }
            String refused = admission.admit(req);
            if (refused != null) {
                rejectBeforeAccept(req, refused);
                continue;
            }
            ServerAdmission.Handshake h = admission.handshake(req);
            if (rawAccept != null) {
                byte[] acceptData = decideRaw(req);
                if (acceptData == null) {
                    h.done();
                    continue;
                }
                accepts.accept(h, acceptData, null);
                continue;
            }
            // A request that is not a cqflux hello is refused before anything is accepted,
            // loudly: the client's connect fails with REJECTED and the reason is logged here.
            PeerHello hello;
            try {
                hello = PeerHello.decode(req.privateData());
            } catch (RuntimeException e) {
                admission.malformedHello("rejecting a connection request on " + address + " from "
                        + ServerAdmission.peerOf(req) + ": " + e.getMessage());
                // The client reads a short reason; the detail, which names the server's options,
                // is in the log line above.
                rejectWithReason(req, "malformed hello: the private data is not a cqflux hello of a version this"
                        + " server reads (1 to 4)");
                h.done();
                continue;
            }
            if (authentication == null) {
                serve(h);
            } else {
                authentication.authenticate(h, hello.credentials());
            }
        }
    }

    /**
     * Refuses an authenticated request with a reason the client reads. Where the transport's
     * reject carries private data to the client (fabric, tcp and verbs: {@code fi_reject(3)}), the refusal
     * ({@link PeerHello#encodeRefusal}) is the reject's data: nothing is opened for the request,
     * and it costs this loop what a refusal at admission does. Elsewhere (rpma: librpma rejects
     * with no data, {@code rpma_conn_req_delete(3)}) it is accepted with the refusal in place of a
     * hello and closed once established, so that the client still reads why; neither control
     * words nor exposures are registered for it, it receives nothing (prefetch 0), and it counts
     * as a pending handshake until closed, bounded by the timeout. Loop thread
     * ({@link ServerAuthentication}).
     */
    void refuse(ServerAdmission.Handshake h, String reason) {
        if (closing) {
            rejectQuietly(h.req);
            h.done();
            return;
        }
        if (owner.transport().maxRejectPrivateData() >= PeerHello.MIN_REFUSAL) {
            rejectWithReason(h.req, reason);
            h.done();
            return;
        }
        refusedByAccept++; // NOSONAR: written by the loop thread only
        byte[] data;
        try {
            data = PeerHello.encodeRefusal(reason, owner.transport().maxAcceptPrivateData());
        } catch (RuntimeException e) {
            rejectQuietly(h.req);
            h.done();
            return;
        }
        Connection spi;
        try {
            spi = h.req.accept(data, loop);
        } catch (RuntimeException e) {
            LOG.warn("refusing a connection on " + address + " failed", e);
            h.done();
            return;
        }
        ConnectionCore core = owner.adopt(loop, spi, config, PeerControl.none(), true);
        core.receiver.prefetch(0, true);
        core.closed.whenComplete((v, t) -> h.done());
        // The handshake's time runs from the request's arrival (docs/security.md), a refusal's too.
        Duration left = handshakeTimeout.minusNanos(System.nanoTime() - h.arrived);
        h.timeout(loop.schedule(left.isNegative() ? Duration.ZERO : left, core::closeAsync));
        core.start(RdmaConnection::dispose, e -> { });
    }

    /**
     * Accepts a hello request the admission (and the authenticator) let in: its control words,
     * exposures and the accept are {@link ServerAccepts}'s (on the set-up thread where the
     * transport allows it). Loop thread.
     */
    void serve(ServerAdmission.Handshake h) {
        if (closing) {
            // The shared pool may be released already: nothing is built for a disposed server.
            rejectQuietly(h.req);
            h.done();
            return;
        }
        SharedReceivePool held = null;
        try {
            if (sharedReceiveBuffers > 0) {
                if (sharedReceives == null) {
                    sharedReceives = SharedReceivePool.allocate(owner.transport(), sharedReceiveBuffers,
                            owner.limits().receiveBufferSize());
                }
                sharedReceives.ensureRoom(); // this connection's starting window, however many idle ones hold theirs
                // The accept in flight holds the pool until its connection took its share (or the
                // accept failed): a close meanwhile releases only the server's own hold.
                sharedReceives.retain();
                held = sharedReceives;
            }
        } catch (RuntimeException e) {
            LOG.warn("refusing a connection on " + address + ": " + e.getMessage());
            rejectQuietly(h.req);
            h.done();
            return;
        }
        accepts.accept(h, null, held);
    }

    /**
     * {@return whether the server is closing (disposed, or its listener ended)} Its loop's thread,
     * or any thread once that loop ended.
     */
    boolean closing() {
        return closing;
    }

    /**
     * Asks the accept function about a request with raw private data.
     *
     * @return the accept's private data, or {@code null} when the request was rejected (and
     *     freed): by the function, or because it threw, returned null or answered too much (WARN)
     */
    private byte[] decideRaw(ConnectionRequest req) {
        AcceptDecision d;
        try {
            loop.noteOperation("cqflux.acceptDecision"); // the application's accept function
            d = rawAccept.apply(req.privateData());
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("the accept function of " + this + " threw; the request is rejected", t);
            rejectQuietly(req);
            return null;
        } finally {
            loop.noteSetup("cqflux.accept"); // the library's own work again
        }
        if (d == null) {
            LOG.warn("the accept function of " + this + " returned null; the request is rejected");
            rejectQuietly(req);
            return null;
        }
        if (!d.isAccept()) {
            LOG.debug("the accept function of " + this + " rejected a request");
            rejectQuietly(req);
            return null;
        }
        byte[] data = d.data();
        int max = owner.transport().maxAcceptPrivateData();
        if (data.length > max) {
            LOG.warn("the accept function of " + this + " answered " + data.length + " bytes of private data, above"
                    + " the transport's maximum " + max + " for an accept; the request is rejected");
            rejectQuietly(req);
            return null;
        }
        return data;
    }

    /**
     * Rejects a request with a reason its client reads where the transport's reject carries data
     * ({@code fi_reject(3)} on fabric, tcp and verbs), else without one (rpma: {@code rpma_conn_req_delete(3)}
     * has none; a refusal that must be read there is {@link #refuse}'s accept). Nothing is opened
     * for the request either way.
     */
    void rejectWithReason(ConnectionRequest req, String reason) {
        int max = owner.transport().maxRejectPrivateData();
        if (max < PeerHello.MIN_REFUSAL) {
            rejectQuietly(req);
            return;
        }
        try {
            req.reject(PeerHello.encodeRefusal(reason, max));
        } catch (RuntimeException e) {
            // Not answered with the reason: answer it without one, so that neither the request
            // nor the client's connect waits for the listener's close.
            LOG.warn("refusing a connection request on " + address + " with its reason failed", e);
            rejectQuietly(req);
        }
    }

    /**
     * Rejects a request nothing was opened for: with {@code reason} where this server speaks the
     * cqflux hello ({@link #rejectWithReason}), plainly where it takes raw private data, whose
     * clients are no cqflux peers. Any thread that answers the request (the loop, the set-up thread).
     */
    void rejectBeforeAccept(ConnectionRequest req, String reason) {
        if (rawAccept == null) {
            rejectWithReason(req, reason);
        } else {
            rejectQuietly(req);
        }
    }

    void rejectQuietly(ConnectionRequest req) {
        try {
            req.reject();
        } catch (RuntimeException re) {
            LOG.warn("rejecting a connection request on " + address + " failed", re);
        }
    }

    /** Stops listening; idempotent, non-blocking, any thread. Accepted connections live on. */
    @Override
    public void dispose() {
        closeAsync();
    }

    /** {@return whether {@link #dispose()} was called or the listener ended (failed, its loop shut down)} */
    @Override
    public boolean isDisposed() {
        return disposed.get();
    }

    /**
     * {@return a Mono that completes once the server is released: the native listener freed and
     * {@link #connections()} completed. It never fails; late subscribers complete at once}
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(closed, true);
    }

    /**
     * Disposes the server and blocks until its listener is freed.
     *
     * @param timeout how long to wait, at least zero
     * @throws IllegalStateException when the listener was not freed within {@code timeout}, or when
     *     called on a Reactor {@code NonBlocking} thread such as an event loop (nothing is disposed
     *     then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, closed, timeout, () -> "the listener is not freed yet (its loop " + loop.name()
                + " has not run the close task: it is busy or blocked)");
    }

    CompletableFuture<Void> closeAsync() {
        disposed.set(true);
        Runnable task = () -> {
            if (closing) {
                return;
            }
            closing = true;
            try {
                if (registration != null) {
                    registration.close();
                }
                if (authentication != null) {
                    authentication.rejectUndecided();
                }
            } finally {
                if (sharedReceives != null) {
                    sharedReceives.release(); // freed once its last connection's native side is gone
                }
                listener.close();
                // A raw subscriber that throws from onComplete: the server is still forgotten and
                // onDispose() completes.
                outlet.complete();
                owner.forget(this);
                closed.complete(null);
            }
        };
        // Inline on the loop, else handed over; when the loop is shutting down, once it ended
        // (never beside its last round).
        loop.executeOrAfterTermination(task);
        return closed;
    }

    /**
     * The same as {@link #dispose()}: stops listening and returns at once; for try-with-resources.
     * Use {@link #disposeNow(Duration)} to wait for the release.
     */
    @Override
    public void close() {
        dispose();
    }

    /**
     * {@return what the server's limits and authenticator did so far, and what it holds now: for
     * an operator's gauges and alerts. Any thread; the values are read one after another, not as
     * one snapshot}
     */
    public Stats stats() {
        return admission.stats();
    }

    /**
     * A server's counters ({@link RdmaServer#stats()}).
     *
     * @param connections established connections not yet released
     * @param pendingHandshakes requests between their arrival and their establishment or end
     * @param exposures live per-connection registrations of the exposed regions (each exposed
     *     region once per connection that was accepted and whose native side is not gone yet)
     * @param refusedOverMaxConnections requests rejected by {@link AcceptOptions#withMaxConnections}
     * @param refusedOverMaxPending requests rejected by {@link AcceptOptions#withMaxPendingHandshakes}
     * @param refusedByAuthenticator requests the authenticator refused, answered with no decision or
     *     failed on (one it did not decide on in time counts in {@code handshakeTimeouts})
     * @param handshakeTimeouts handshakes ended by {@link AcceptOptions#withHandshakeTimeout}
     * @param malformedHellos requests rejected because their private data was not a well-formed hello
     * @param controlWordViolations connections ended because their peer wrote into its control
     *     words (credits, goodbye) what no cqflux peer can
     * @param beyondCredits connections ended because their peer sent a message it was granted no
     *     receive for
     */
    public record Stats(int connections, int pendingHandshakes, int exposures, long refusedOverMaxConnections,
                        long refusedOverMaxPending, long refusedByAuthenticator, long handshakeTimeouts,
                        long malformedHellos, long controlWordViolations, long beyondCredits) {

        /**
         * {@return the counter of {@code kind}}
         *
         * @param kind the kind
         */
        public long count(RefusalKind kind) {
            return switch (kind) {
                case MAX_CONNECTIONS -> refusedOverMaxConnections;
                case MAX_PENDING -> refusedOverMaxPending;
                case AUTHENTICATOR -> refusedByAuthenticator;
                case MALFORMED_HELLO -> malformedHellos;
                case HANDSHAKE_TIMEOUT -> handshakeTimeouts;
                case CONTROL_WORD -> controlWordViolations;
                case BEYOND_CREDITS -> beyondCredits;
            };
        }
    }

    /** {@return what this server holds now (connections, handshakes, exposures), for the instance's sum} */
    int[] live() {
        return admission.live();
    }

    @Override
    public String toString() {
        return "RdmaServer[" + address + "]";
    }
}
