package io.cqflux.reactor.internal.server;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import io.cqflux.reactor.AcceptDecision;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.PeerControl;
import io.cqflux.reactor.internal.connection.PeerHello;
import io.cqflux.reactor.internal.connection.SharedReceivePool;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What an {@link RdmaServer} is behind its public methods: its listener, watched on the loop it
 * was bound on, and each request's way from there: the admission's limits
 * ({@link ServerAdmission}), a hello's decoding or the raw accept function's decision, the
 * authenticator ({@link ServerAuthentication}), a refusal ({@link ServerRefusals}), and the accept
 * ({@link ServerAccepts}), whose connections go to the server's outlet ({@link ServerOutlet}).
 * It owns the server's close: the listener, the undecided requests, the shared receive pool's
 * hold and the outlet's end, once, on its loop.
 *
 * <p>Loop-confined, as the accept path is: what runs off the loop (the public methods that read
 * the counters or close it, the set-up thread's accepts) goes through atomics or the loop's task
 * queue, as each method says.
 */
public final class ServerCore {
    /** The server's logger: what it accepts and refuses is the server's to say. */
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);
    private static final ApiAccess API = ApiAccess.get();

    private final ServerHost host;
    private final EventLoop loop;
    private final Listener listener;
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
    /** The instance forgets the server: run once, by the close. */
    private final Runnable forget;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final AtomicBoolean disposed = new AtomicBoolean();
    private Registration registration;
    private boolean closing;

    /** The limits, the handshakes and the counters of {@link #stats()}. */
    private final ServerAdmission admission;

    /** The authenticator's questions and the requests it has not decided on; null: none. */
    private final ServerAuthentication authentication;
    /** How it says no to a request. */
    private final ServerRefusals refusals;
    /** Whether accepted connections get a key scope of their own (Binder#scopesKeys: the options and the transport). */
    private final boolean scopedKeys;

    /**
     * @param host what the server uses of its instance
     * @param loop the loop the listener is watched on
     * @param listener the bound listener, which the server owns from now on
     * @param exposed the regions each accepted connection is given registrations of
     * @param handler where every connection goes, or null: to {@link #connections()}
     * @param rawAccept the accept function of a raw private data server, or null: a hello server
     * @param bufferSize how many connections {@link #connections()} buffers
     * @param options the bind's options (a bind without options: {@code AcceptOptions.defaults})
     * @param forget tells the instance the server closed; run once, by the close
     */
    public ServerCore(ServerHost host, EventLoop loop, Listener listener, List<Region> exposed,
                      Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
                      Function<byte[], AcceptDecision> rawAccept, int bufferSize, AcceptOptions options,
                      Runnable forget) {
        this.host = host;
        this.loop = loop;
        this.listener = listener;
        ConnectionConfig config = host.config();
        this.address = listener.address();
        this.rawAccept = rawAccept;
        this.forget = forget;
        this.sharedReceiveBuffers = sharedReceiveChunk(options, config, rawAccept != null, host.receiveBufferSize());
        this.admission = new ServerAdmission(address, options.maxConnections(), options.maxPendingHandshakes(),
                options.maxConnectionsPerAddress(), options.ipv4PrefixLength(), options.ipv6PrefixLength(),
                host.instanceCounts());
        Duration handshakeTimeout = options.handshakeTimeout() != null ? options.handshakeTimeout() : config.timeout();
        this.refusals = new ServerRefusals(host, loop, address, handshakeTimeout, rawAccept != null, this::closing);
        this.authentication = options.authenticator() == null ? null
                : new ServerAuthentication(this, refusals, loop, options.authenticator(), admission, handshakeTimeout);
        this.outlet = new ServerOutlet(toString(), handler, bufferSize);
        this.scopedKeys = Binder.scopesKeys(options, rawAccept != null, host.transport());
        if (rawAccept == null && !scopedKeys && options.keyScoping() == AcceptOptions.KeyScoping.WHERE_SUPPORTED) {
            // The default could not be given: said, not silently downgraded (docs/security.md, section 5).
            // The logger is looked up here, once per bind, not kept: IsolationOptionsTest reads this
            // warning through Loggers.useCustomLoggers, which a logger made earlier would not see.
            Loggers.getLogger(RdmaServer.class).warn("server on " + address + ": keys are not scoped to their"
                    + " connection, so while a connection lives its keys work on this instance's other connections"
                    + " too (each reaches only what its connection was granted): "
                    + host.transport().connectionScopedKeysDefaultRefusal()
                    + ". AcceptOptions.withKeysScopedToConnection(false) acknowledges it (docs/security.md, section 5)");
        }
        // Receives kept posted ahead of demand on each connection (-1, the default: the
        // connection's own); posted before each accept only with raw private data.
        this.accepts = new ServerAccepts(this, refusals, host, loop, exposed, admission, outlet, handshakeTimeout,
                rawAccept != null, options.receivePrefetch(), options.endsOnReceiveOverflow(),
                rawAccept != null && options.receivesBeforeAccept(), scopedKeys);
    }

    /**
     * {@return whether each accepted connection gets a key scope of its own
     * ({@link RdmaServer#keysScopedToConnection()})}
     */
    public boolean keysScopedToConnection() {
        return scopedKeys;
    }

    /** Loop thread: starts watching the listener. */
    public void start() {
        registration = loop.register(listener, this::onReadable, this::closeAsync);
        onReadable();
    }

    /** {@return the address it listens on, with the port actually bound} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return the established incoming connections ({@link RdmaServer#connections()})} */
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

    /** {@return how many refusals accepted a connection to carry their reason, i.e. opened an endpoint} (tests) */
    public long refusedByAccept() {
        return refusals.refusedByAccept();
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
    public SharedReceivePool sharedReceivePool() {
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
                refusals.rejectBeforeAccept(req, refused);
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
                checkParameters(hello);
                checkParts(hello);
            } catch (RuntimeException e) {
                if (!(e instanceof IllegalArgumentException)) {
                    // Not the peer's fault (the transport closing, a native failure parsing a
                    // descriptor): not a malformed hello, and not counted as one.
                    LOG.warn("rejecting a connection request on " + address + " from " + ServerAdmission.peerOf(req)
                            + ": checking its hello failed", e);
                    refusals.rejectWithReason(req, "the server could not set up the connection; the server's log has"
                            + " the cause");
                    h.done();
                    continue;
                }
                admission.malformedHello("rejecting a connection request on " + address + " from "
                        + ServerAdmission.peerOf(req) + ": " + e.getMessage());
                // The client reads a short reason; the detail, which names the server's options,
                // is in the log line above.
                refusals.rejectWithReason(req, "malformed hello: the private data is not a cqflux hello of a version this"
                        + " server reads (1 to 4)");
                h.done();
                continue;
            }
            h.peerToldParameters(hello.parameters() != null && hello.parameters().length > 0);
            if (authentication == null) {
                serve(h);
            } else {
                authentication.authenticate(h, hello.credentials());
            }
        }
    }

    /**
     * Connection parameters of another length than this transport's connections have are
     * malformed: refused before anything is accepted, like any malformed hello, rather than found
     * by the connection's {@code applyPeerParameters} once established.
     */
    private void checkParameters(PeerHello hello) {
        byte[] p = hello.parameters();
        int want = host.transport().connectionParametersTemplate().length;
        if (p != null && p.length != 0 && p.length != want) {
            throw new IllegalArgumentException("connection parameters of " + p.length + " bytes, where this transport's"
                    + " have " + want);
        }
    }

    /**
     * Checks the parts of a hello that the connection takes in only once established
     * (PeerHello#accept): the transport handshake, the control words' descriptor and the regions'
     * descriptors, each parsed as that step will parse it, and what was made of it closed at once.
     * A malformed part is so refused before anything is accepted (the authenticator asked, the
     * control words and exposures registered), and counted as a malformed hello, rather than
     * accepted and then ended once established, uncounted. Loop thread.
     */
    private void checkParts(PeerHello hello) {
        io.cqflux.core.spi.Transport t = host.transport();
        t.checkPeerHandshake(hello.handshake());
        if (hello.control().length > 0) {
            t.remoteRegion(hello.control(), PeerControl.PEER_WRITE_ONLY).close();
        }
        int i = 0;
        for (byte[] d : hello.regions()) {
            try {
                t.remoteRegion(d).close();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("region " + i + "'s descriptor: " + e.getMessage(), e);
            }
            i++;
        }
    }

    /**
     * Accepts a hello request the admission (and the authenticator) let in: its control words,
     * exposures and the accept are {@link ServerAccepts}'s (on the set-up thread where the
     * transport allows it). Loop thread.
     */
    void serve(ServerAdmission.Handshake h) {
        if (closing) {
            // The shared pool may be released already: nothing is built for a disposed server.
            refusals.rejectQuietly(h.req);
            h.done();
            return;
        }
        SharedReceivePool held = null;
        try {
            if (sharedReceiveBuffers > 0) {
                if (sharedReceives == null) {
                    sharedReceives = SharedReceivePool.allocate(host.transport(), sharedReceiveBuffers,
                            host.receiveBufferSize());
                }
                sharedReceives.ensureRoom(); // this connection's starting window, however many idle ones hold theirs
                // The accept in flight holds the pool until its connection took its share (or the
                // accept failed): a close meanwhile releases only the server's own hold.
                sharedReceives.retain();
                held = sharedReceives;
            }
        } catch (RuntimeException e) {
            LOG.warn("refusing a connection on " + address + ": " + e.getMessage());
            refusals.rejectQuietly(h.req);
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
            refusals.rejectQuietly(req);
            return null;
        } finally {
            loop.noteSetup("cqflux.accept"); // the library's own work again
        }
        if (d == null) {
            LOG.warn("the accept function of " + this + " returned null; the request is rejected");
            refusals.rejectQuietly(req);
            return null;
        }
        if (!d.isAccept()) {
            LOG.debug("the accept function of " + this + " rejected a request");
            refusals.rejectQuietly(req);
            return null;
        }
        byte[] data = API.data(d);
        int max = host.transport().maxAcceptPrivateData();
        if (data.length > max) {
            LOG.warn("the accept function of " + this + " answered " + data.length + " bytes of private data, above"
                    + " the transport's maximum " + max + " for an accept; the request is rejected");
            refusals.rejectQuietly(req);
            return null;
        }
        return data;
    }

    /** {@return whether the server was disposed or its listener ended ({@link RdmaServer#isDisposed()})} */
    public boolean isDisposed() {
        return disposed.get();
    }

    /** {@return completed once the listener is freed and {@link #connections()} completed; it never fails} */
    public CompletableFuture<Void> closed() {
        return closed;
    }

    /** {@return what a wait for {@link #closed()} that ran out says is not done} */
    public String unreleased() {
        return "the listener is not freed yet (its loop " + loop.name() + " has not run the close task: it is busy"
                + " or blocked" + (listener.closesOffLoop() ? "; or the instance's close thread has not closed it yet,"
                + " behind the connections' closes queued before it" : "") + ")";
    }

    /**
     * Stops listening: on the loop, once (the native close on the instance's close thread where
     * the listener's close may wait, Listener#closesOffLoop); idempotent, non-blocking, any
     * thread. Accepted connections live on.
     *
     * @return {@link #closed()}
     */
    public CompletableFuture<Void> closeAsync() {
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
                if (!closeListenerOffLoop()) {
                    closeListener();
                }
            }
        };
        // Inline on the loop, else handed over; when the loop is shutting down, once it ended
        // (never beside its last round).
        loop.executeOrAfterTermination(task);
        return closed;
    }

    /**
     * Loop thread, once its readiness is unregistered: where the listener's close may wait
     * (Listener#closesOffLoop: on fabric/tcp it joins its request reader's thread), completes the
     * connections' Flux here, hands the native close to the instance's close thread, and the rest
     * (the server forgotten, {@link #closed()}) back to the loop, so that the loop never waits on
     * it and no subscriber code runs on the close thread. {@return whether it took the close on}
     * Where the close thread takes nothing (shut down in the instance's last steps, or its worker
     * could not start), the listener is closed here, after the Flux, as {@link #closeListener()}.
     */
    private boolean closeListenerOffLoop() {
        io.cqflux.reactor.internal.resources.SetupThread closes = host.factory().closes();
        if (closes == null || !listener.closesOffLoop()) {
            return false;
        }
        try {
            completeOutlet();
        } finally {
            Runnable nativeClose = () -> {
                try {
                    closeNatively();
                } finally {
                    loop.executeOrAfterTermination(this::released);
                }
            };
            boolean handedOver = false;
            try {
                closes.execute(nativeClose);
                handedOver = true;
            } catch (RuntimeException e) {
                LOG.debug("listener on " + address + ": the close thread takes nothing; closing it here", e);
            }
            if (!handedOver) {
                try {
                    closeNatively();
                } finally {
                    released();
                }
            }
        }
        return true;
    }

    /** The listener's native close; a failure is logged (the server is released all the same). */
    private void closeNatively() {
        Runnable hook = beforeListenerClose;
        if (hook != null) {
            hook.run();
        }
        try {
            listener.close();
        } catch (RuntimeException e) {
            LOG.warn("listener on " + address + ": its close failed", e);
        }
    }

    /** Tests: runs on the thread that closes the listener, just before; null: none. */
    volatile Runnable beforeListenerClose;

    /**
     * Closes the listener here (on the loop, or after its end where the shutdown runs it), then
     * what follows it ({@link #completeOutlet()}, {@link #released()}): a listener whose close
     * never waits.
     */
    private void closeListener() {
        try {
            Runnable hook = beforeListenerClose;
            if (hook != null) {
                hook.run();
            }
            listener.close();
        } finally {
            try {
                completeOutlet();
            } finally {
                released();
            }
        }
    }

    /** The connections' Flux completes (subscriber code: on the loop). */
    private void completeOutlet() {
        outlet.complete();
    }

    /**
     * The listener is freed: the server is forgotten and {@link #closed()} completes, whatever a
     * raw subscriber's onComplete threw.
     */
    private void released() {
        try {
            forget.run();
        } finally {
            closed.complete(null);
        }
    }

    /** {@return the server's counters ({@link RdmaServer#stats()})} */
    public RdmaServer.Stats stats() {
        return admission.stats();
    }

    /** {@return what this server holds now (connections, handshakes, exposures), for the instance's sum} */
    public int[] live() {
        return admission.live();
    }

    /** {@return the server's name, as its messages and {@link RdmaServer#toString()} give it} */
    @Override
    public String toString() {
        return "RdmaServer[" + address + "]";
    }
}
