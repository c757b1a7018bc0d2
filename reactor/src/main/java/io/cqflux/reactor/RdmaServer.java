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
import io.cqflux.reactor.internal.connection.Receiver;
import io.cqflux.reactor.internal.op.Emissions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A listening endpoint created by {@link Cqflux#bind}: accepts connections and hands each peer
 * the descriptors of the exposed regions in the accept's private data.
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
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;
    /** Decides on each request from its raw private data; null: a cqflux hello server. */
    private final Function<byte[], AcceptDecision> rawAccept;
    private final int bufferSize;
    /** Receives kept posted ahead of demand on each connection; -1: the connection's default. */
    private final int receivePrefetch;
    /** AcceptOptions.withEndOnReceiveOverflow: what a raw connection does with every buffer full. */
    private final boolean endOnReceiveOverflow;
    /** Whether the prefetch is posted before each accept (raw private data only). */
    private final boolean receivesBeforeAccept;
    private final Sinks.Many<RdmaConnection> connections;
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final AtomicBoolean disposed = new AtomicBoolean();
    private Registration registration;
    private boolean closing;

    RdmaServer(Cqflux owner, EventLoop loop, Listener listener, List<Region> exposed, ConnectionConfig config,
               Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
               Function<byte[], AcceptDecision> rawAccept, int bufferSize, AcceptOptions options) {
        this.owner = owner;
        this.loop = loop;
        this.listener = listener;
        this.exposed = exposed;
        this.config = config;
        this.address = listener.address();
        this.handler = handler;
        this.rawAccept = rawAccept;
        this.bufferSize = bufferSize;
        this.receivePrefetch = options == null ? -1 : options.receivePrefetch();
        this.endOnReceiveOverflow = options == null || options.endsOnReceiveOverflow();
        this.receivesBeforeAccept = rawAccept != null && options != null && options.receivesBeforeAccept();
        // A bounded queue: when it is full, tryEmitNext fails (FAIL_OVERFLOW / FAIL_ZERO_SUBSCRIBER)
        // and the newcomer is closed instead of piling up.
        this.connections = Sinks.many().unicast().onBackpressureBuffer(new ArrayBlockingQueue<>(bufferSize));
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
        if (handler != null) {
            return Flux.error(new IllegalStateException(this + " hands every connection to the handler given to"
                    + " Cqflux.bind; connections() has none"));
        }
        // The sink discards what it still buffers when its subscriber cancels: close those.
        return connections.asFlux().doOnDiscard(RdmaConnection.class,
                c -> refuse(c, "the connections() subscriber cancelled with it still buffered"));
    }

    private void onReadable() {
        loop.noteSetup("cqflux.accept"); // the library's own work: not a blocked-loop WARN
        while (!closing) {
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
            PeerControl control;
            byte[] acceptData;
            if (rawAccept != null) {
                control = PeerControl.none();
                acceptData = decideRaw(req);
                if (acceptData == null) {
                    continue;
                }
            } else {
                // A request that is not a cqflux hello is refused before anything is accepted,
                // loudly: the client's connect fails with REJECTED and the reason is logged here.
                try {
                    PeerHello.decode(req.privateData());
                } catch (RuntimeException e) {
                    LOG.warn("rejecting a connection request on " + address + ": " + e.getMessage());
                    rejectQuietly(req);
                    continue;
                }
                // Each accept names the connection's own control words, and never a region that
                // was closed since the bind: such a request is refused, not served a dead region.
                control = null;
                try {
                    control = PeerControl.register(owner.transport());
                    acceptData = owner.hello(exposed, control, owner.transport().maxAcceptPrivateData());
                } catch (RuntimeException e) {
                    if (control != null) {
                        control.close();
                    }
                    LOG.warn("refusing a connection on " + address + ": " + e.getMessage());
                    rejectQuietly(req);
                    continue;
                }
            }
            Receiver.Pool early;
            try {
                early = receivesBeforeAccept(req);
            } catch (RuntimeException e) {
                // receivesBeforeAccept rejected the request before it freed the pool.
                control.close();
                LOG.warn("posting receives before accepting a connection on " + address + " failed; the request"
                        + " is rejected", e);
                continue;
            }
            Connection spi;
            try {
                spi = req.accept(acceptData);
            } catch (RuntimeException e) {
                control.close();
                if (early != null) {
                    early.close(); // its receives went with the request
                }
                LOG.warn("accepting a connection on " + address + " failed", e);
                continue;
            }
            EventLoop target = owner.nextLoop();
            ConnectionCore core = owner.adopt(target, spi, config, control, rawAccept != null);
            try {
                if (receivePrefetch >= 0) {
                    core.receiver.prefetch(receivePrefetch, rawAccept != null); // AcceptOptions.withReceivePrefetch
                }
                core.receiver.endOnOverflow(endOnReceiveOverflow);
                if (early != null) {
                    core.receiver.adopt(early); // before start: the table's first contexts are its receives'
                }
            } catch (RuntimeException e) {
                // The core owns the connection, its control words and the adopted pool: ending it
                // (on its loop) releases them, and the accept loop goes on with the next request.
                LOG.warn("setting up the receives of a connection accepted on " + address + " failed; it is"
                        + " closed", e);
                endOnItsLoop(core, target, e);
                continue;
            }
            Runnable start = () -> core.start(this::emit,
                    e -> LOG.warn("incoming connection on " + address + " failed before it was established: "
                            + e.getMessage()));
            if (target == loop) {
                start.run();
            } else {
                try {
                    target.execute(start);
                } catch (RuntimeException e) {
                    core.end(e, null);
                }
            }
        }
    }

    /**
     * Posts the connection's receive prefetch on a request before it is accepted
     * ({@code rpma_conn_req_recv(3)}), so that a client which sends at once finds receives
     * posted; {@code null} when there is nothing to post (the option is off, or the prefetch or
     * the receive queue is 0). On a transport that cannot post before accepting the pool comes
     * back with none posted, and the connection posts once established. When allocating or
     * posting fails it rejects the request, then frees the pool, and throws.
     */
    private Receiver.Pool receivesBeforeAccept(ConnectionRequest req) {
        int count = config.receiveQueueSize();
        int n = Math.min(receivePrefetch < 0 ? count : receivePrefetch, count);
        if (!receivesBeforeAccept || n == 0) {
            return null;
        }
        Receiver.Pool p;
        try {
            p = Receiver.Pool.allocate(owner.transport(), count, owner.limits().receiveBufferSize());
        } catch (RuntimeException e) {
            rejectQuietly(req);
            throw e;
        }
        try {
            p.postBeforeAccept(req, n);
        } catch (RuntimeException | Error e) {
            // The receives posted so far point into the pool's registered memory: the request
            // (and with it those receives) goes first, the memory after.
            rejectQuietly(req);
            p.close();
            throw e;
        }
        return p;
    }

    /** Ends a connection that never started, on its loop's thread, or here when that loop is gone. */
    private void endOnItsLoop(ConnectionCore core, EventLoop target, RuntimeException cause) {
        if (target == loop) {
            core.end(cause, null);
            return;
        }
        try {
            target.execute(() -> core.end(cause, null));
        } catch (RuntimeException e) {
            core.end(cause, null);
        }
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

    private void rejectQuietly(ConnectionRequest req) {
        try {
            req.reject();
        } catch (RuntimeException re) {
            LOG.warn("rejecting a connection request on " + address + " failed", re);
        }
    }

    /** Loop thread of the connection: an incoming connection is established. */
    private void emit(RdmaConnection c) {
        if (handler != null) {
            handle(c);
            return;
        }
        // Connections established on different loops: serialise the emissions. A subscriber that
        // throws from onNext had the connection handed to it: delivered (OK), not refused.
        Sinks.EmitResult r = Emissions.guarded(() -> {
            synchronized (connections) {
                return connections.tryEmitNext(c);
            }
        });
        if (r.isFailure()) {
            refuse(c, switch (r) {
                case FAIL_OVERFLOW, FAIL_ZERO_SUBSCRIBER -> "connections() already buffers " + bufferSize
                        + " unclaimed connections (Cqflux.Builder.acceptBufferSize)";
                case FAIL_CANCELLED -> "the connections() subscriber cancelled: nobody will claim it";
                case FAIL_TERMINATED -> "the server is disposed";
                default -> "connections() refused it (" + r + ")";
            });
        }
    }

    /**
     * Hands a connection to the handler and closes it once the handler's publisher terminates;
     * cancels the handler's subscription once the connection is released (peer closed, lost).
     */
    private void handle(RdmaConnection c) {
        Publisher<Void> p;
        try {
            p = Objects.requireNonNull(handler.apply(c), "the handler returned null");
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("the handler of " + this + " threw for " + c + "; the connection is closed", t);
            c.dispose();
            return;
        }
        Disposable d = Flux.from(p).subscribe(null, e -> {
            LOG.warn("the handler of " + this + " failed for " + c + "; the connection is closed", e);
            c.dispose();
        }, c::dispose);
        c.onDispose().subscribe(null, null, d::dispose);
    }

    private void refuse(RdmaConnection c, String reason) {
        LOG.warn("closing incoming connection " + c.description() + " on " + this + ": " + reason);
        c.dispose();
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
            } finally {
                listener.close();
                // A raw subscriber that throws from onComplete: the server is still forgotten and
                // onDispose() completes.
                Emissions.guarded(() -> {
                    synchronized (connections) {
                        return connections.tryEmitComplete();
                    }
                });
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

    @Override
    public String toString() {
        return "RdmaServer[" + address + "]";
    }
}
