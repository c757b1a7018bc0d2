package io.cqflux.reactor.internal.server;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.KeyScope;
import io.cqflux.core.spi.Registrar;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopTimer;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.PeerControl;
import io.cqflux.reactor.internal.connection.PeerHello;
import io.cqflux.reactor.internal.connection.ReceivePool;
import io.cqflux.reactor.internal.connection.SharedReceivePool;
import io.cqflux.reactor.internal.resources.SetupThread;
import java.time.Duration;
import java.util.List;
import reactor.core.Exceptions;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * How a server accepts a request that its admission (and its authenticator) let in: what the
 * connection is given (control words, its own registrations of the exposed regions, receives
 * posted before the accept), the transport's accept, then the connection's adoption and start.
 *
 * <p><b>Where each step runs.</b> The native part ({@link #build}) runs on the instance's set-up
 * thread where the transport allows it ({@code Transport.acceptsOffLoop()}), else on the server's
 * loop, and so does the building of the connection's loop-side objects, which no loop knows yet
 * (plain objects, nothing native: ConnectionFactory#newConnection); admission and the adoption
 * on the server's loop (loop-only state), and the connection's start, with its handshake timer,
 * on its own loop. The handshake's timer is set only for a handshake that its
 * start did not finish (most are finished there: the transport's event often arrives while the
 * native part runs), on the connection's loop, and cancelled at the establishment there: an
 * accepted connection then leaves no timer behind to fire for nothing. The native part touches
 * nothing of the server but the request it was handed (answered by that one thread only) and the
 * admission's atomic exposure count (the loop-side objects only keep references to the server's
 * hooks, run later by their loop); its result comes back through the server loop's task queue
 * (happens-before), and only then does any loop know the connection. A request waiting for the
 * set-up thread still counts as a pending handshake, so {@link AcceptOptions#withMaxPendingHandshakes}
 * bounds that queue: past it, requests are rejected at admission, on the loop, before anything is
 * opened for them.
 *
 * <p><b>What must hold on close.</b> The listener may close while a request's accept runs on the
 * set-up thread: the transports make a request's accept and the listener's close one step apart
 * (an accept after the close throws, and is handled as a failed accept). When the instance is
 * closing by the time the loop would adopt a connection, the connection is closed there and then
 * (nothing of it is registered with a loop yet, no receive was posted but those the accept took,
 * which go with its queue pair), and the instance's shutdown waits for the set-up thread before
 * it frees the transport. When only the server is, the connection is adopted and, once
 * established, closed in order (its client, whose connect may have completed, sees CLOSED). Each
 * accept in flight holds the server's shared receive pool from its hand-off until its connection
 * took its share or the accept ended, so that a server closed meanwhile frees the pool only after
 * its last accept let go.
 */
final class ServerAccepts {
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final ServerCore server;
    private final ServerRefusals refusals;
    private final ServerHost host;
    private final EventLoop loop;
    private final ConnectionConfig config;
    private final List<Region> exposed;
    private final ServerAdmission admission;
    private final ServerOutlet outlet;
    private final Duration handshakeTimeout;
    private final boolean raw;
    private final int receivePrefetch;
    private final boolean endOnReceiveOverflow;
    private final boolean receivesBeforeAccept;
    /** Whether each connection's control words and exposures go into a key scope of its own (AcceptOptions). */
    private final boolean scopedKeys;
    /** Null where the transport's accepts stay on the loop. */
    private final SetupThread setups;

    ServerAccepts(ServerCore server, ServerRefusals refusals, ServerHost host, EventLoop loop, List<Region> exposed,
                  ServerAdmission admission, ServerOutlet outlet, Duration handshakeTimeout, boolean raw, int receivePrefetch,
                  boolean endOnReceiveOverflow, boolean receivesBeforeAccept, boolean scopedKeys) {
        this.server = server;
        this.refusals = refusals;
        this.host = host;
        this.loop = loop;
        this.config = host.config();
        this.exposed = exposed;
        this.admission = admission;
        this.outlet = outlet;
        this.handshakeTimeout = handshakeTimeout;
        this.raw = raw;
        this.receivePrefetch = receivePrefetch;
        this.endOnReceiveOverflow = endOnReceiveOverflow;
        this.receivesBeforeAccept = receivesBeforeAccept;
        this.scopedKeys = scopedKeys;
        this.setups = host.transport().acceptsOffLoop() ? host.factory().setups() : null;
    }

    /**
     * Accepts a request: a hello request ({@code rawData} null) is given control words and
     * exposures, a raw one is answered with {@code rawData}. Server loop.
     *
     * @param shared the server's shared receive pool, already with room for this connection and held
     *     for it ({@code retain}), or null: every path of the accept releases that hold once
     */
    void accept(ServerAdmission.Handshake h, byte[] rawData, SharedReceivePool shared) {
        assert loop.inEventLoop() : "requests are taken on the server's loop " + loop.name();
        if (setups == null) {
            build(h, rawData, shared);
            return;
        }
        try {
            setups.execute(() -> build(h, rawData, shared));
        } catch (RuntimeException e) {
            // The instance is shutting down: nothing was opened for the request.
            refusals.rejectQuietly(h.req);
            letGo(shared);
            h.done();
        }
    }

    /**
     * The native part, on the set-up thread or the server's loop; its outcome goes back to the loop.
     * Each step's {@code Error} is handled as its exceptions are: the bindings wrap a downcall's
     * unexpected {@code Throwable} in an {@code AssertionError}, and a step that let it pass would
     * leave the request unanswered (its client waiting out its connect timeout) and its pending
     * handshake's slot held for the server's life. A JVM-fatal one ({@code VirtualMachineError},
     * {@code LinkageError}) is rethrown once the request is answered and let go, as the rest of the
     * library does (Reactor's {@code Exceptions.throwIfJvmFatal}): on the server's loop it ends the
     * loop; on the set-up thread it is logged there.
     */
    private void build(ServerAdmission.Handshake h, byte[] rawData, SharedReceivePool shared) {
        ConnectionRequest req = h.req;
        if (System.nanoTime() - h.arrived >= handshakeTimeout.toNanos()) {
            // Its time ran out while it waited for this thread: accepting it would open an
            // endpoint, control words and exposures only for the timer to close them at once.
            // (The request is this thread's to answer.)
            refusals.rejectBeforeAccept(req, "the handshake timed out on a busy server; try again later");
            back(() -> {
                admission.timedOut("incoming connection on " + server.address() + " from "
                        + ServerAdmission.peerOf(req) + " waited " + handshakeTimeout.toMillis()
                        + " ms for its accept; it is rejected");
                failed(h, shared);
            });
            return;
        }
        // Chosen first, before anything is built for the request: the transport may bind the
        // connection to that loop's queues.
        EventLoop target;
        try {
            target = host.nextLoop().get();
        } catch (RuntimeException e) {
            // Every loop ended on a fatal error (LoopGroup#next).
            refusals.rejectQuietly(req);
            LOG.warn("no loop to accept a connection on " + server.address() + "; the request is rejected", e);
            back(() -> failed(h, shared));
            return;
        }
        PeerControl control = null;
        ExposureSet exposures = null;
        KeyScope scope = null;
        byte[] acceptData;
        boolean tells = false;
        try {
            if (rawData != null) {
                control = PeerControl.none();
                acceptData = rawData;
            } else {
                // Each accept names the connection's own control words and its own registrations
                // of the exposed regions, never a region that was closed since the bind: such a
                // request is refused, not served a dead region. With scoped keys they go into the
                // request's own scope (its domain), which the accept opens the connection in.
                Registrar into = host.transport();
                if (scopedKeys) {
                    scope = req.scopeKeys();
                    into = scope;
                }
                control = PeerControl.register(into);
                exposures = ExposureSet.register(exposed, admission.liveExposures(), into);
                // With parameters as long as the connection's own, where the client told its own
                // (so it reads the server's): only then may the connection share a queue.
                PeerHello hello = host.factory().acceptHello(
                        h.peerToldParameters() ? host.factory().parametersTemplate() : null, exposures.descriptors(),
                        control);
                acceptData = hello.encode(host.transport().maxAcceptPrivateData());
                tells = hello.carriesParameters(host.transport().maxAcceptPrivateData());
            }
        } catch (RuntimeException | Error e) {
            closeBuilt(control, exposures, scope);
            if (e instanceof Error) {
                LOG.warn("refusing a connection on " + server.address(), e); // its cause, not only its message
            } else {
                LOG.warn("refusing a connection on " + server.address() + ": " + e.getMessage());
            }
            // Nothing was accepted: the client reads a short reason where the reject carries one
            // (fi_reject(3)), not the transport's "nothing listens"; the detail, which names the
            // server's regions, stays in the log line above.
            // Told from the regions' state, not the exception's type: a transport that is
            // closing throws ResourceClosedException too, and no region was closed then.
            refusals.rejectBeforeAccept(req, exposed.stream().anyMatch(r -> !r.isOpen())
                    ? "a region this server exposes is closed; the server's log has the detail"
                    : exposed.stream().anyMatch(r -> !r.segment().scope().isAlive())
                    ? "the memory of a region this server exposes was freed; the server's log has the detail"
                    : "the server could not set up the connection; the server's log has the cause");
            back(() -> failed(h, shared));
            Exceptions.throwIfJvmFatal(e); // answered and let go: a fatal one goes on as elsewhere
            return;
        }
        ReceivePool early;
        try {
            early = receivesBeforeAccept(req);
        } catch (RuntimeException | Error e) {
            closeBuilt(control, exposures, scope);
            // receivesBeforeAccept rejected the request before it freed the pool.
            LOG.warn("posting receives before accepting a connection on " + server.address() + " failed; the request"
                    + " is rejected", e);
            back(() -> failed(h, shared));
            Exceptions.throwIfJvmFatal(e);
            return;
        }
        Connection spi;
        try {
            if (!tells) {
                spi = req.accept(acceptData, target);
            } else {
                // The connection's own parameters are as long as the template the hello above was
                // checked with (ConnectionRequest#acceptWithHello): this cannot outgrow it.
                List<byte[]> descriptors = exposures.descriptors();
                PeerControl words = control;
                spi = req.acceptWithHello(p -> host.factory().acceptHello(p, descriptors, words)
                        .encode(host.transport().maxAcceptPrivateData()), target);
            }
        } catch (RuntimeException | Error e) {
            closeBuilt(control, exposures, scope);
            if (early != null) {
                early.close(); // its receives went with the request
            }
            LOG.warn("accepting a connection on " + server.address() + " failed", e);
            back(() -> failed(h, shared));
            Exceptions.throwIfJvmFatal(e);
            return;
        }
        // The scope's own hold goes: its domain now lives as long as the connection, the control
        // words and the exposures opened in it, and closes after the last of them.
        closeScope(scope);
        PeerControl c = control;
        ExposureSet x = exposures;
        KeyScope sc = scope;
        ConnectionCore core;
        try {
            core = newConnection(h, spi, c, x, target);
        } catch (RuntimeException | Error e) {
            // Nothing of it is registered with a loop: closed as a closing server's would be,
            // on the server's loop, the connection before what it used.
            LOG.warn("setting up a connection accepted on " + server.address() + " failed; it is closed", e);
            back(() -> discardUnadopted(h, spi, c, x, early, shared));
            Exceptions.throwIfJvmFatal(e);
            return;
        }
        back(() -> adoptAndStart(h, spi, core, c, x, early, shared, target, sc));
    }

    /**
     * Builds the connection's loop-side state where the native part ran (the set-up thread, or
     * the server's loop): plain objects that no loop knows yet (ConnectionFactory#newConnection),
     * with the server's hooks on them; the hand-back through the loop's task queue publishes them.
     * Adopting it stays the loop's: until then a closing instance drops it as garbage,
     * and its hooks never run (only its end completes {@code closed}, and it never starts).
     */
    private ConnectionCore newConnection(ServerAdmission.Handshake h, Connection spi, PeerControl control,
                                         ExposureSet exposures, EventLoop target) {
        ConnectionCore core = host.factory().newConnection(target, spi, config, control, raw);
        core.onPeerViolation(admission::peerViolation);
        core.closed.whenComplete((v, t) -> {
            // The native connection is gone: no key of its exposures may outlive it (and none goes
            // before it: Teardown's design comment says why).
            closeExposures(exposures);
            if (h.end() == ServerAdmission.Handshake.ESTABLISHED) {
                admission.released();
            }
        });
        return core;
    }

    /** Runs {@code step} on the server's loop: inline when already there, else through its task queue. */
    private void back(Runnable step) {
        if (loop.inEventLoop()) {
            step.run();
            return;
        }
        // When the loop is shutting down the step runs once it ended (and finds the instance closing).
        loop.executeOrAfterTermination(step);
    }

    /**
     * Adopts an accepted connection for its loop and starts it there; its exposures are revoked
     * with its native side (keys die too). Server loop (or after it ended, in a shutdown).
     *
     * @param scope the connection's key scope (its hold given up: it lives with the connection),
     *     or null when its keys are not scoped
     */
    private void adoptAndStart(ServerAdmission.Handshake h, Connection spi, ConnectionCore core, PeerControl control,
                               ExposureSet exposures, ReceivePool early, SharedReceivePool shared, EventLoop target,
                               KeyScope scope) {
        if (host.closing().getAsBoolean()) {
            // The instance was closed while the accept ran off the loop: its shutdown takes the
            // loops down, and its client sees the connection end.
            discardUnadopted(h, spi, control, exposures, early, shared);
            return;
        }
        // A server disposed meanwhile still adopts it (the accept's own hold keeps the shared
        // pool) and closes it in order once established (below): its client, whose connect may
        // have completed already, sees CLOSED, an orderly close, not a peer that vanished.
        assert loop.inEventLoop() : "an accepted connection is adopted on the server's loop " + loop.name();
        loop.noteSetup("cqflux.accept");
        host.factory().adopt(core);
        try {
            if (receivePrefetch >= 0) {
                core.receiver.prefetch(receivePrefetch, raw); // AcceptOptions.withReceivePrefetch
            }
            core.receiver.endOnOverflow(endOnReceiveOverflow);
            if (scope != null) {
                // Its own receive pool, if it makes one, in its scope: on verbs (FI_MR_LOCAL) a
                // pool of the instance's domain would be registered once more there on its first
                // receive. (Receives before the accept never meet a scope: only a raw-accept
                // server posts them, and that one does not scope its keys.)
                core.receiver.registerPoolIn(scope);
            }
            if (early != null) {
                core.receiver.adopt(early); // before start: the table's first contexts are its receives'
            }
            if (shared != null) {
                core.receiver.share(shared); // a peer with credits: its receives come from the server's pool
            }
        } catch (RuntimeException e) {
            letGo(shared); // the connection's share, if it took one, holds the pool on its own
            // The core owns the connection, its control words and the adopted pool: ending it
            // (on its loop) releases them (its closed future closes the exposures and ends the
            // handshake), and the accept loop goes on with the next request.
            LOG.warn("setting up the receives of a connection accepted on " + server.address() + " failed; it is"
                    + " closed", e);
            endOnItsLoop(core, target, e);
            return;
        }
        letGo(shared); // the connection's share holds the pool now
        // The start, the handshake's timer and its cancel all run on the connection's own loop
        // (the timer's heap is that loop's alone). Most connections are established by their
        // start, since the transport's event often arrives while the native part runs: only a
        // handshake still pending then gets its timer, which the establishment cancels.
        Runnable start = () -> {
            core.start(c -> {
                if (h.establish()) {
                    h.cancelTimeout(); // none when it is established in its start
                    admission.established();
                    if (server.isDisposed()) { // this connection's loop: the thread-safe flag
                        outlet.refuse(c, "the server was disposed while it was accepted");
                    } else {
                        outlet.emit(c);
                    }
                } else {
                    c.dispose(); // its handshake timed out just now
                }
            }, e -> LOG.warn("incoming connection on " + server.address() + " failed before it was established: "
                    + e.getMessage()));
            if (h.pending()) {
                h.timeout(handshakeTimer(h, core, target));
            }
        };
        if (target == loop) {
            start.run();
        } else {
            // Exactly once, whatever the other loop's fate: a loop that ended (a fatal error, a
            // forced shutdown) would drop a plain task, and its handshake would stay pending with
            // no timer; ending the connection instead ends the handshake through its closed hook.
            target.executeLaterOrAfterTermination(() -> {
                if (target.terminationFuture().isDone()) {
                    core.end(new ResourceClosedException("event loop " + target.name()
                            + " ended before the connection accepted on " + server.address() + " started"), null);
                } else {
                    start.run();
                }
            });
        }
    }

    /**
     * Closes an accepted connection that no loop adopted (its server or instance closing, or its
     * loop-side state failing to build): nothing of it is registered with a loop, so it is closed
     * here, the connection before what it used. The pool's hold goes first (this connection never
     * took a share of it); then each close on its own, so that one that throws skips none of the
     * others, nor the handshake's end. Server loop.
     */
    private void discardUnadopted(ServerAdmission.Handshake h, Connection spi, PeerControl control,
                                  ExposureSet exposures, ReceivePool early, SharedReceivePool shared) {
        letGo(shared);
        try {
            closeQuietly(spi::close);
            closeQuietly(control::close);
            closeQuietly(() -> closeExposures(exposures));
            if (early != null) {
                closeQuietly(early::close);
            }
        } finally {
            h.done();
        }
    }

    /**
     * The handshake's timer: closes the connection unless it was established in time. On the
     * connection's loop ({@code on}), which alone may cancel it.
     */
    private LoopTimer.Timeout handshakeTimer(ServerAdmission.Handshake h, ConnectionCore core, EventLoop on) {
        // The handshake's time runs from the request's arrival (the authenticator's included).
        Duration left = handshakeTimeout.minusNanos(System.nanoTime() - h.arrived);
        return on.schedule(left.isNegative() ? Duration.ZERO : left, () -> {
            // The timer must claim the handshake: it may have ended meanwhile (its connection's
            // close ends it from another thread), and a connection already handed out is not the
            // timer's to close.
            if (h.timeOut()) {
                admission.timedOut("incoming connection on " + server.address() + " from "
                        + ServerAdmission.peerOf(h.req) + " was not established within "
                        + handshakeTimeout.toMillis() + " ms; it is closed");
                core.closeAsync();
            }
        });
    }

    /** An accept that built no connection ends: the pool's hold goes, then the handshake. Server loop. */
    private static void failed(ServerAdmission.Handshake h, SharedReceivePool shared) {
        letGo(shared);
        h.done();
    }

    /** Releases an accept's hold of the shared pool ({@link ServerCore#serve}); null: none. */
    private static void letGo(SharedReceivePool shared) {
        if (shared != null) {
            try {
                shared.release();
            } catch (RuntimeException e) {
                LOG.warn("freeing the shared receive pool failed", e);
            }
        }
    }

    /**
     * Closes what an accept built before it failed: the control words, the exposures and the key
     * scope's hold, each where there is one (the last two log a failure rather than throw it).
     */
    private static void closeBuilt(PeerControl control, ExposureSet exposures, KeyScope scope) {
        if (control != null) {
            control.close();
        }
        closeExposures(exposures);
        closeScope(scope);
    }

    /** Gives up an accept's hold of its key scope; null: none. A failure is logged, not thrown. */
    private static void closeScope(KeyScope scope) {
        if (scope != null) {
            try {
                scope.close();
            } catch (RuntimeException e) {
                LOG.warn("closing a connection's key scope failed", e);
            }
        }
    }

    static void closeExposures(ExposureSet exposures) {
        if (exposures != null) {
            try {
                exposures.close();
            } catch (RuntimeException e) {
                LOG.warn("revoking a connection's exposures failed", e);
            }
        }
    }

    /**
     * Posts the connection's receive prefetch on a request before it is accepted
     * ({@code rpma_conn_req_recv(3)}), so that a client which sends at once finds receives
     * posted; {@code null} when there is nothing to post (the option is off, or the prefetch or
     * the receive queue is 0). On a transport that cannot post before accepting the pool comes
     * back with none posted, and the connection posts once established.
     */
    private ReceivePool receivesBeforeAccept(ConnectionRequest req) {
        int count = config.receiveQueueSize();
        int n = Math.min(receivePrefetch < 0 ? count : receivePrefetch, count);
        if (!receivesBeforeAccept || n == 0) {
            return null;
        }
        ReceivePool p;
        try {
            p = ReceivePool.allocate(host.transport(), count, host.receiveBufferSize());
        } catch (RuntimeException | Error e) {
            refusals.rejectQuietly(req);
            throw e;
        }
        try {
            p.postBeforeAccept(req, n);
        } catch (RuntimeException | Error e) {
            // The receives posted so far point into the pool's registered memory: the request
            // (and with it those receives) goes first, the memory after.
            refusals.rejectQuietly(req);
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

    /** Runs one close of a connection a closing server drops; a failure is logged, not thrown. */
    private void closeQuietly(Runnable close) {
        try {
            close.run();
        } catch (RuntimeException e) {
            LOG.warn("closing what an accept built for a closed server failed", e);
        }
    }
}
