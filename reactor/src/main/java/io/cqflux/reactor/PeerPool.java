package io.cqflux.reactor;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Lifecycle;
import io.cqflux.reactor.internal.op.Emissions;
import io.cqflux.reactor.internal.resources.Connector;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: connections that heal.
 *
 * The pool has `size` slots. Each slot is, at any time, in exactly one of: connecting (a connect
 * Mono subscribed), live (an RdmaConnection), waiting to retry (a real-time timer of the
 * library, LibraryTimer, whose task runs on one of the instance's loops), or nothing (closed).
 * All slot fields are guarded by `lock`; nothing slow or user-supplied runs under it (connect
 * subscriptions, disposals, waiters' signals and the event sink all run after it is released).
 *
 *   start --> CONNECTING --ok--> live --(its events(): CLOSED/LOST, or evicted)--> RETRYING(delay)
 *                 ^    \--fail--> RETRYING(delay) --timer--> CONNECTING                 |
 *                 +---------------------------------------------------------------------+
 *
 * The backoff's attempt count is reset only when a connection that stayed up
 * options.backoffResetAfter() ends, not when one is established: a peer that accepts and drops
 * at once (or a validation that always fails) sees the delays double up to the maximum like a
 * peer that refuses. A live connection that has begun to end (ENDING: still open, posting
 * nothing) is not handed out.
 *
 * A connection is shared, not leased: RDMA connections multiplex (every operation is its own
 * Mono), so acquire() hands the same live connection to many callers, the least loaded first.
 * Regions are re-learned on each reconnect because each new connection carries the peer's hello:
 * callers look regions up on the connection they are given, never keep a PeerRegion across calls.
 *
 * Operations already posted on a connection that ends fail as they always do
 * (ConnectionException): the pool never replays them — a write may or may not have landed.
 *
 * Events are queued under the lock (so their order is the order of the state changes) and handed
 * to the sink by one drainer at a time, outside it.
 *
 * The pool's onDispose waits for the release of every connection it started, a cancelled
 * connect's too: the Connector it connects through hands it each new connection's release
 * future.
 *
 * The pool ends in one way, end(reason): dispose() (no reason), or the pool itself when its
 * connect request can no longer be sent. Cqflux.checkConnectRequest refuses such a request when
 * the pool is made; an exposed region closed later is found by the same check, run again when a
 * connect fails before sending anything (not a ConnectionException), and since a closed region
 * never opens again, every further attempt would fail alike: the pool ends instead of retrying.
 */

/**
 * Connections to one peer that heal: the pool connects at once, reconnects with backoff when a
 * connection ends, learns the peer's regions again on each reconnect, and hands live connections
 * to operations. Made by {@link Cqflux#peerPool(InetSocketAddress, PeerPoolOptions)}; modelled on
 * reactor-pool and r2dbc-pool (acquire, validate, evict), except that a connection is shared:
 * RDMA connections multiplex, so many operations use one connection at once.
 *
 * <pre>{@code
 * PeerPool pool = cqflux.peerPool(new InetSocketAddress("10.0.0.2", 7471), PeerPoolOptions.defaults());
 * Mono<Void> put = pool.withConnection(conn ->
 *         conn.durableWrite(conn.remoteRegion(0), slot * 4096, staging, 0, 4096));
 * }</pre>
 *
 * <p><b>Regions.</b> Each connection carries the peer's hello, so its
 * {@link RdmaConnection#remoteRegions()} are the peer's regions as of that connection. Look them up
 * inside the callback ({@code conn.remoteRegion(0)}) every time: a {@link PeerRegion} of a
 * connection that ended is useless, and a restarted peer may expose other regions (other keys,
 * other sizes).
 *
 * <p><b>During a reconnect</b> (no connection live), an operation waits for one at most
 * {@link PeerPoolOptions#maxAcquireTime()} and then fails with a
 * {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) naming the address and how
 * long it waited, or fails at once ({@link PeerPoolOptions.WhenUnavailable#FAIL_FAST}).
 *
 * <p><b>Nothing is retried.</b> Operations in flight on a connection that ends fail as they do
 * without a pool ({@code ConnectionException} {@code LOST} or {@code CLOSED}): a write or a durable
 * write may or may not have reached the peer, and replaying it is not idempotent in general, so
 * the pool never does. Retry at the application level where you know it is safe, e.g.
 * {@code pool.withConnection(...).retryWhen(Retry.backoff(3, Duration.ofMillis(50)))}.
 *
 * <p><b>State</b> is {@link #state()}; every change of a connection is on {@link #events()}.
 * Logging (logger {@code io.cqflux.reactor.PeerPool}) is per outage of a connection slot: an
 * outage begins with a loss or a failed attempt and ends once a connection has stayed up
 * {@link PeerPoolOptions#backoffResetAfter()}. Within one, the first loss at WARN, one line with
 * the address and the cause (a connection that ended {@code LOST} has already said so on
 * {@code io.cqflux.reactor.internal.connection.ConnectionCore}, and the pool adds nothing at WARN then), the first
 * failed attempt at WARN (before the first connection) or INFO, the first reconnect at INFO, and
 * everything further (attempts, reconnects, losses of connections that did not stay up) at
 * DEBUG, so a peer that accepts and drops every connection costs one WARN line, not one per
 * connect.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #dispose()} (or {@link #close()}) is
 * idempotent and returns at once: it stops reconnecting, fails waiting operations with a
 * {@link ResourceClosedException}, and closes the pool's connections (what is in flight on them
 * fails {@code CLOSED}); {@link #onDispose()} completes once every connection the pool opened is
 * released, and {@link #disposeNow(Duration)} waits for it. Disposing the {@link Cqflux} disposes
 * the pool too.
 *
 * <p><b>A connect request that can no longer be sent.</b> A region the pool exposes
 * ({@link ConnectOptions#exposing(Region...)}) that is closed after the pool was made cannot be
 * described to the peer again: the next connect fails before sending anything, and so would
 * every later one. The pool then ends as a dispose ends it, but on its own: it stops
 * reconnecting, closes its live connections, fails waiting operations, and later ones, with a
 * {@link ResourceClosedException} whose message names the closed region, and emits
 * {@link PeerPoolEvent.Kind#CLOSED} with that exception as its {@link PeerPoolEvent#cause()}
 * ({@link #state()} {@code CLOSED}); it logs it once at WARN. Close such a region only after the
 * pool, or make a new pool.
 */
public final class PeerPool implements Disposable, AutoCloseable {
    /**
     * The pool's logger ({@code io.cqflux.reactor.PeerPool}); not final so that a test can watch
     * what is logged at which level (Reactor's logger factory is read once, at class load).
     */
    static volatile Logger log = Loggers.getLogger(PeerPool.class);

    /** How many of the most recent events {@link #events()} replays to a late subscriber. */
    public static final int EVENT_HISTORY = 64;

    /** The pool as a whole. */
    public enum State {
        /** No connection has been established yet; the first attempts are running. */
        CONNECTING,
        /** At least one connection is live ({@link #liveConnections()} says how many). */
        CONNECTED,
        /** Every connection ended; reconnecting with backoff. */
        RECONNECTING,
        /** Disposed, or ended on its own because its connect request can no longer be sent (an exposed region was closed). */
        CLOSED
    }

    private final Cqflux cq;
    /** How the pool connects: {@code cq}'s connect, which also hands over each connection's release. */
    private final Connector connector;
    private final InetSocketAddress address;
    private final PeerPoolOptions options;
    private final String name;
    private final Object lock = new Object();
    private final Slot[] slots;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private final AtomicInteger turn = new AtomicInteger();
    private volatile State state = State.CONNECTING;
    private boolean closed;
    /** Why the pool ended on its own (its connect request can no longer be sent); null when disposed or open. */
    private String closedFor;
    private Throwable lastFailure;

    /** Release futures of the connections this pool started and that are not released yet. */
    private final Set<CompletableFuture<Void>> releases = ConcurrentHashMap.newKeySet();
    /** Connect subscriptions that have not terminated (or been cancelled) yet. */
    private final AtomicInteger connectsInProgress = new AtomicInteger();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    private final Sinks.Many<PeerPoolEvent> events = Sinks.many().replay().limit(EVENT_HISTORY);
    /** Events in order of the state changes; {@link #END} completes the sink. */
    private final Queue<PeerPoolEvent> outbox = new ConcurrentLinkedQueue<>();
    private final AtomicInteger draining = new AtomicInteger();
    private static final PeerPoolEvent END = new PeerPoolEvent(PeerPoolEvent.Kind.CLOSED, null, -1, 0, null, null, null);

    /** One connection of the pool. Guarded by {@code lock}. */
    private static final class Slot {
        final int index;
        RdmaConnection conn;
        /** A connect in progress or a retry timer. */
        Disposable pending;
        boolean connecting;
        /** Attempts since the start or the loss of a connection that stayed up (PeerPoolOptions.backoffResetAfter). */
        int attempt;
        /** When the current outage began ({@code System.nanoTime()}), or 0 when none. */
        long outageSince;
        /** The outage's first failed connect attempt is logged (WARN or INFO). */
        boolean outageLogged;
        /** The outage's first loss is logged (WARN): further ones within it go to DEBUG. */
        boolean lossLogged;
        /** The outage's first reconnect is logged (INFO): further ones within it go to DEBUG. */
        boolean reconnectLogged;
        /** When the live connection was established ({@code System.nanoTime()}). */
        long connectedAt;
        /** Why the pool itself ended the live connection (validation), or null. */
        Throwable evictedFor;

        Slot(int index) {
            this.index = index;
        }
    }

    /** An operation waiting for a connection. */
    private static final class Waiter {
        final MonoSink<RdmaConnection> sink;
        final long since = System.nanoTime();
        final AtomicBoolean done = new AtomicBoolean();
        volatile Disposable timer;

        Waiter(MonoSink<RdmaConnection> sink) {
            this.sink = sink;
        }

        void succeed(RdmaConnection c) {
            if (done.compareAndSet(false, true)) {
                dispose();
                sink.success(c);
            }
        }

        void fail(Throwable t) {
            if (done.compareAndSet(false, true)) {
                dispose();
                sink.error(t);
            }
        }

        void dispose() {
            Disposable t = timer;
            if (t != null) {
                t.dispose();
            }
        }
    }

    private PeerPool(Cqflux cq, Connector connector, InetSocketAddress address, PeerPoolOptions options) {
        this.cq = cq;
        this.connector = connector;
        this.address = address;
        this.options = options;
        this.name = "peer pool " + hostAndPort(address);
        this.slots = new Slot[options.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(i);
        }
    }

    /**
     * Refuses an address a pool cannot keep reconnecting to: unresolved (the pool would resolve
     * nothing; rpma's connect refuses it too) or without a port. {@link Cqflux#peerPool} runs it;
     * code that keeps an address for a pool made later (the Spring starter's peers) may run it
     * first.
     *
     * @param address the peer's address
     * @throws IllegalArgumentException naming the address
     */
    public static void checkAddress(InetSocketAddress address) {
        if (address.isUnresolved() || address.getPort() == 0) {
            throw new IllegalArgumentException("peer address " + address + " needs a resolved host and a port in"
                    + " [1, 65535]" + (address.isUnresolved() ? " (resolve " + address.getHostString()
                    + " first, e.g. new InetSocketAddress(host, port))" : ""));
        }
    }

    /** {@return the address as given, with the IP where the name is not one: {@code host/ip:port}} */
    private static String hostAndPort(InetSocketAddress a) {
        String host = a.getHostString();
        java.net.InetAddress ip = a.getAddress();
        if (ip != null && !host.equals(ip.getHostAddress())) {
            host = host + "/" + ip.getHostAddress();
        }
        return host + ":" + a.getPort();
    }

    /** Creates a pool and starts connecting every slot. */
    static PeerPool start(Cqflux cq, Connector connector, InetSocketAddress address, PeerPoolOptions options) {
        PeerPool p = new PeerPool(cq, connector, address, options);
        for (Slot s : p.slots) {
            p.connect(s);
        }
        return p;
    }

    /** {@return the peer's address} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return the options the pool was made with} */
    public PeerPoolOptions options() {
        return options;
    }

    /**
     * {@return the pool's state now}: {@link State#CONNECTED} only while a connection is live, so a
     * pool whose only connection's end has begun (a flushed completion, the keep-alive or the
     * operation deadline deciding) says {@link State#RECONNECTING} before that end is reported
     */
    public State state() {
        State s = state;
        if (s == State.CONNECTED) {
            synchronized (lock) {
                if (!anyLive()) {
                    return State.RECONNECTING;
                }
            }
        }
        return s;
    }

    /** {@return how many connections are live now, 0..{@link PeerPoolOptions#size()}; for metrics} */
    public int liveConnections() {
        synchronized (lock) {
            int n = 0;
            for (Slot s : slots) {
                if (usable(s.conn)) {
                    n++;
                }
            }
            return n;
        }
    }

    /**
     * {@return the state changes of the pool's connections, in order ({@link PeerPoolEvent}); hot,
     * replaying the {@value #EVENT_HISTORY} most recent to a late subscriber; it completes after
     * {@link PeerPoolEvent.Kind#CLOSED}. Signals come on the thread that made the change (an event
     * loop, a subscriber's or the disposing thread): don't block in them}
     */
    public Flux<PeerPoolEvent> events() {
        return events.asFlux();
    }

    /**
     * Hands a live connection to {@code action} and returns what it returns: the way to use the
     * pool. The connection is the live one with the fewest operations in flight and waiting (ties
     * in turn); while none is live, the call waits for one (bounded) or fails fast, as
     * {@link PeerPoolOptions#whenUnavailable()} says. Look the peer's regions up on the connection
     * given ({@code conn.remoteRegion(0)}): they are re-learned on each reconnect. The connection
     * is shared: don't dispose it (a disposed one is replaced through a reconnect).
     *
     * <p>Nothing is retried: an operation that fails because its connection ended fails with the
     * connection's {@link io.cqflux.core.ConnectionException}, as without a pool (a write may or
     * may not have landed; replaying it is the caller's decision).
     *
     * @param action what to do with the connection; called once per subscription, on the thread
     *     that found the connection (often an event loop: don't block)
     * @param <T> the result type
     * @return a cold Mono of the action's result; it fails with a
     *     {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) when no connection
     *     became live in time (or at once with FAIL_FAST), with a
     *     {@link io.cqflux.core.QueueFullException} when {@link PeerPoolOptions#maxPendingAcquires()}
     *     operations wait already, with a {@link ResourceClosedException} once the pool is disposed
     *     or has ended because its connect request can no longer be sent (the message names why)
     */
    public <T> Mono<T> withConnection(Function<? super RdmaConnection, ? extends Mono<? extends T>> action) {
        Objects.requireNonNull(action, "action");
        return acquire().flatMap(c -> Objects.requireNonNull(action.apply(c),
                "withConnection's action returned null instead of a Mono"));
    }

    /**
     * Gets a live connection, as {@link #withConnection(Function)} does, for use with operators
     * that need the connection itself ({@code flatMapMany(conn -> conn.writeAll(...))}). The
     * connection is shared, not leased: there is nothing to release, and it must not be disposed.
     * Look regions up on it, and get a new one for later work: this one may end at any time.
     *
     * @return a cold Mono of a live connection, failing as {@link #withConnection(Function)} says
     */
    public Mono<RdmaConnection> acquire() {
        return Mono.create(sink -> {
            RdmaConnection c = pick();
            if (c != null) {
                sink.success(c);
                return;
            }
            Waiter w = new Waiter(sink);
            Throwable refused = null;
            synchronized (lock) {
                if (closed) {
                    refused = new ResourceClosedException(closedFor != null ? closedFor : name + " is disposed");
                } else if (options.whenUnavailable() == PeerPoolOptions.WhenUnavailable.FAIL_FAST
                        && (state != State.CONNECTING || lastFailure != null)) {
                    // The pool's very first attempts, before any failed, are waited for (bounded):
                    // an operation right after peerPool() is not "during a gap".
                    refused = new ConnectionException(ConnectionEvent.UNREACHABLE, name + ": no live connection"
                            + " (pool " + state + ", failing fast as configured)" + lastFailureText(), lastFailure);
                } else if (waiters.size() >= options.maxPendingAcquires()) {
                    refused = new QueueFullException(name + ": " + waiters.size() + " operations wait for a connection"
                            + " already, the limit (PeerPoolOptions.maxPendingAcquires)", options.maxPendingAcquires());
                } else {
                    waiters.add(w);
                }
            }
            if (refused != null) {
                sink.error(refused);
                return;
            }
            sink.onCancel(() -> {
                if (w.done.compareAndSet(false, true)) {
                    w.dispose();
                    synchronized (lock) {
                        waiters.remove(w);
                    }
                }
            });
            Duration max = options.maxAcquireTime();
            // The library's real-time timer, not Reactor's (LibraryTimer: virtual time); the
            // expiry signals the waiter, so it runs on a loop, as the pool's other signals do.
            w.timer = LibraryTimer.schedule(() -> onLoop(() -> expire(w)), max.toNanos(), TimeUnit.NANOSECONDS);
            if (w.done.get()) {
                w.dispose();
            }
            // A connection may have become live between pick() and joining the queue.
            serveWaiters();
        });
    }

    private void expire(Waiter w) {
        synchronized (lock) {
            if (!waiters.remove(w)) {
                return;
            }
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w.since);
        w.fail(new ConnectionException(ConnectionEvent.UNREACHABLE, name + ": no live connection within "
                + options.maxAcquireTime() + " (waited " + waited + " ms; pool " + state + ")" + lastFailureText(),
                lastFailure));
    }

    private String lastFailureText() {
        Throwable f = lastFailure;
        return f == null ? "" : "; last failure: " + f.getMessage();
    }

    /**
     * {@return the live connection with the least work, or null}; evicts connections that fail
     * the validation (outside the lock: it is the user's code).
     */
    private RdmaConnection pick() {
        while (true) {
            RdmaConnection best = null;
            Slot bestSlot = null;
            long bestLoad = Long.MAX_VALUE;
            synchronized (lock) {
                if (closed) {
                    return null;
                }
                int n = slots.length;
                int start = Math.floorMod(turn.getAndIncrement(), n);
                for (int k = 0; k < n; k++) {
                    Slot s = slots[(start + k) % n];
                    RdmaConnection c = s.conn;
                    if (!usable(c)) {
                        continue;
                    }
                    long load = (long) c.inFlight() + c.waiting();
                    if (load < bestLoad) {
                        best = c;
                        bestSlot = s;
                        bestLoad = load;
                    }
                }
            }
            if (best == null) {
                return null;
            }
            boolean valid;
            Throwable why = null;
            try {
                valid = options.validation().test(best);
            } catch (Throwable e) {
                // Any non-fatal throwable (an AssertionError included) fails the validation: one
                // that escaped would fail the connect that delivered this connection and leave it
                // open behind the pool's back.
                Exceptions.throwIfJvmFatal(e);
                valid = false;
                why = e;
            }
            if (valid) {
                return best;
            }
            evict(bestSlot, best, new IllegalStateException("connection " + best.description()
                    + " failed the pool's validation and was evicted", why));
        }
    }

    private void evict(Slot s, RdmaConnection c, Throwable why) {
        synchronized (lock) {
            if (s.conn != c) {
                return;
            }
            s.evictedFor = why;
        }
        c.dispose(); // its end (events()) comes back through onEnded
        onEnded(s, c);
    }

    // ---------------------------------------------------------------- slots

    /**
     * Runs a timer's task on the instance's first loop (after the loops ended, on the timer's
     * thread): not {@code nextLoop()}, whose round-robin the connect that follows takes one step
     * of, so that reconnects are spread over the loops as first connects are.
     */
    private void onLoop(Runnable task) {
        cq.firstLoop().executeOrAfterTermination(task);
    }

    /** Starts a connect attempt for {@code s}. */
    private void connect(Slot s) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            s.pending = null;
            s.connecting = true;
            s.attempt++;
            emit(PeerPoolEvent.Kind.CONNECTING, s, s.attempt, null, null, null);
            connectsInProgress.incrementAndGet();
        }
        drainEvents();
        Consumer<CompletableFuture<Void>> hook = this::track;
        AtomicBoolean counted = new AtomicBoolean(true);
        Runnable uncount = () -> {
            if (counted.compareAndSet(true, false)) {
                connectsInProgress.decrementAndGet();
                checkTerminated();
            }
        };
        Disposable d;
        try {
            // Subscribed directly, with no operator between: a connection that arrives as the
            // pool disposes the attempt is then released by the connect Mono's hand-over, which
            // recognises Reactor's lambda subscriber (an operator in between would hide the late
            // cancel that tells it the connection was dropped). The attempt stops counting after
            // its outcome was handled, or when it is disposed.
            Disposable attempt = connector.connect(address, options.connectOptions(), hook).subscribe(c -> {
                try {
                    onConnected(s, c);
                } finally {
                    uncount.run();
                }
            }, e -> {
                try {
                    onConnectFailed(s, e);
                } finally {
                    uncount.run();
                }
            });
            d = () -> {
                attempt.dispose();
                uncount.run();
            };
        } catch (RuntimeException e) {
            uncount.run();
            onConnectFailed(s, e);
            return;
        }
        boolean cancel;
        synchronized (lock) {
            cancel = closed;
            if (!cancel && s.connecting) {
                s.pending = d;
            }
        }
        if (cancel) {
            d.dispose();
        }
    }

    /** Keeps a connection's release future until it completes (for {@link #onDispose()}). */
    private void track(CompletableFuture<Void> release) {
        releases.add(release);
        release.whenComplete((v, t) -> {
            releases.remove(release);
            checkTerminated();
        });
    }

    private void onConnected(Slot s, RdmaConnection c) {
        int attempts;
        long outage;
        boolean firstReconnect;
        synchronized (lock) {
            s.connecting = false;
            s.pending = null;
            if (closed) {
                attempts = -1;
                outage = 0;
                firstReconnect = false;
            } else {
                s.conn = c;
                s.connectedAt = System.nanoTime();
                // The attempts and the outage are not reset here but once this connection has
                // proved stable (see onEnded): a peer that accepts and drops at once must not
                // bring the backoff back to its minimum each time.
                attempts = s.attempt;
                outage = s.outageSince;
                firstReconnect = outage != 0 && !s.reconnectLogged;
                if (outage != 0) {
                    s.reconnectLogged = true;
                }
                s.evictedFor = null;
                state = State.CONNECTED;
                emit(PeerPoolEvent.Kind.CONNECTED, s, attempts, null, null, c.description());
            }
        }
        if (attempts < 0) {
            c.dispose();
            return;
        }
        drainEvents();
        if (outage != 0) {
            String msg = name + ": connection " + s.index + " re-established at attempt " + attempts + ", "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - outage) + " ms after the outage began ("
                    + c.description() + ")";
            if (firstReconnect) {
                log.info(msg);
            } else if (log.isDebugEnabled()) {
                log.debug(msg);
            }
        } else if (log.isDebugEnabled()) {
            log.debug(name + ": connection " + s.index + " established (" + c.description() + ")");
        }
        // The end of the connection, whichever way it comes: its terminal event, or its release.
        c.events().filter(ConnectionEvent::isTerminal).next()
                .subscribe(ev -> onEnded(s, c), e -> onEnded(s, c), () -> onEnded(s, c));
        serveWaiters();
    }

    private void onConnectFailed(Slot s, Throwable e) {
        boolean report;
        boolean first;
        synchronized (lock) {
            s.connecting = false;
            s.pending = null;
            if (closed) {
                return;
            }
            lastFailure = e;
            report = !s.outageLogged;
            s.outageLogged = true;
            first = s.outageSince == 0;
            if (first) {
                s.outageSince = System.nanoTime();
            }
        }
        // A connect that failed before sending anything (not the peer's or the network's
        // ConnectionException) may have a request that can no longer be sent: then no retry can
        // succeed. Checked before the instance's state: its shutdown also fails the check.
        String unsendable = e instanceof ConnectionException ? null : unsendableRequest();
        if (cq.isDisposed()) {
            dispose();
            return;
        }
        if (unsendable != null) {
            end(unsendable);
            return;
        }
        Duration next = scheduleRetry(s, e);
        if (next == null) {
            return;
        }
        String msg = name + ": connect attempt for connection " + s.index + " failed (" + e.getMessage()
                + "); next attempt in " + next.toMillis() + " ms";
        if (report && state == State.CONNECTING) {
            log.warn(msg + ", backing off up to " + options.reconnectBackoffMax());
        } else if (report) {
            log.info(msg + ", backing off up to " + options.reconnectBackoffMax());
        } else if (log.isDebugEnabled()) {
            log.debug(msg);
        }
    }

    /**
     * {@return why the pool's connect request can no longer be sent, or null when it can}: the
     * check that {@link Cqflux#peerPool} ran when the pool was made ({@link Cqflux#checkConnectRequest}),
     * run again; what it refuses stays refused (a region closed since then never opens again)
     */
    private String unsendableRequest() {
        try {
            cq.checkConnectRequest(options.connectOptions());
            return null;
        } catch (IllegalArgumentException | ResourceClosedException refused) {
            return name + ": its connect request can no longer be sent (" + refused.getMessage() + "), so the pool"
                    + " stopped reconnecting and closed; make a new pool with regions that are open";
        } catch (RuntimeException other) {
            // Not a refusal of the request (registering the probe failed, say): retry as usual.
            if (log.isDebugEnabled()) {
                log.debug(name + ": checking the connect request after a failed attempt failed", other);
            }
            return null;
        }
    }

    /** The live connection {@code c} of {@code s} ended (any thread; idempotent). */
    private void onEnded(Slot s, RdmaConnection c) {
        Throwable cause;
        boolean firstLoss;
        long lived;
        synchronized (lock) {
            if (s.conn != c) {
                return;
            }
            s.conn = null;
            if (closed) {
                return;
            }
            Throwable end = c.core().endCause();
            cause = s.evictedFor != null ? s.evictedFor
                    : end != null ? end
                    : new ConnectionException(ConnectionEvent.LOST, "connection " + c.description() + " ended");
            s.evictedFor = null;
            long now = System.nanoTime();
            lived = now - s.connectedAt;
            if (lived >= options.backoffResetAfter().toNanos()) {
                // The connection stayed up: the outage (if any) is over, this loss starts a new one
                // and the backoff starts again from its minimum.
                s.attempt = 0;
                s.outageSince = 0;
                s.outageLogged = false;
                s.lossLogged = false;
                s.reconnectLogged = false;
            }
            if (s.outageSince == 0) {
                s.outageSince = now;
            }
            firstLoss = !s.lossLogged;
            s.lossLogged = true;
            lastFailure = cause;
            emit(PeerPoolEvent.Kind.LOST, s, 0, null, cause, c.description());
            if (anyLive()) {
                state = State.CONNECTED;
            } else {
                state = State.RECONNECTING;
            }
        }
        drainEvents();
        if (cq.isDisposed()) {
            dispose();
            return;
        }
        // One WARN line per outage: ConnectionCore has written it already for a LOST end, and
        // the further losses of one outage (connections that did not stay up) go to DEBUG.
        boolean saidAlready = cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.LOST;
        if (firstLoss && !saidAlready) {
            log.warn(name + ": connection " + s.index + " ended: " + cause.getMessage());
        } else if (!firstLoss && log.isDebugEnabled()) {
            log.debug(name + ": connection " + s.index + " ended again after " + TimeUnit.NANOSECONDS.toMillis(lived)
                    + " ms, before it proved stable (" + options.backoffResetAfter() + "): " + cause.getMessage());
        }
        Duration next = scheduleRetry(s, cause);
        if (next == null) {
            return;
        }
        String msg = name + ": reconnecting connection " + s.index + " in " + next.toMillis() + " ms";
        if (firstLoss) {
            log.info(msg);
        } else if (log.isDebugEnabled()) {
            log.debug(msg);
        }
    }

    /**
     * {@return whether {@code c} may be handed out: established and not being closed}; a
     * connection whose end has begun (ENDING: a flushed completion, the transport's verdict
     * pending) is still open but takes no new operation, so it is not live for the pool.
     */
    private static boolean usable(RdmaConnection c) {
        return c != null && !c.isDisposed() && c.core().canPost();
    }

    private boolean anyLive() {
        for (Slot x : slots) {
            if (usable(x.conn)) {
                return true;
            }
        }
        return false;
    }

    /** Emits RETRYING and schedules the next attempt; {@return its delay, or null when closed} */
    private Duration scheduleRetry(Slot s, Throwable cause) {
        Duration delay;
        synchronized (lock) {
            if (closed) {
                return null;
            }
            int next = s.attempt + 1;
            delay = jittered(options.nominalBackoff(next));
            emit(PeerPoolEvent.Kind.RETRYING, s, next, delay, cause, null);
            // Real time (LibraryTimer), on a loop: the attempt emits the pool's events.
            s.pending = LibraryTimer.schedule(() -> onLoop(() -> connect(s)), delay.toNanos(), TimeUnit.NANOSECONDS);
        }
        drainEvents();
        return delay;
    }

    private Duration jittered(Duration nominal) {
        double j = options.jitter();
        if (j == 0) {
            return nominal;
        }
        double f = 1 + j * (2 * ThreadLocalRandom.current().nextDouble() - 1);
        long d = (long) (nominal.toNanos() * f);
        d = Math.clamp(d, options.reconnectBackoffMin().toNanos(), options.reconnectBackoffMax().toNanos());
        return Duration.ofNanos(d);
    }

    /** Hands live connections to waiting operations, first come first served. */
    private void serveWaiters() {
        while (true) {
            Waiter w;
            synchronized (lock) {
                w = waiters.peek();
                if (w == null) {
                    return;
                }
            }
            RdmaConnection c = pick();
            if (c == null) {
                return;
            }
            synchronized (lock) {
                if (!waiters.remove(w)) {
                    continue; // expired or cancelled meanwhile
                }
            }
            w.succeed(c);
        }
    }

    // ---------------------------------------------------------------- events

    /** Queues an event; call under {@code lock}, then {@link #drainEvents()} after releasing it. */
    private void emit(PeerPoolEvent.Kind kind, Slot s, int attempt, Duration delay, Throwable cause, String conn) {
        outbox.add(new PeerPoolEvent(kind, address, s == null ? -1 : s.index, attempt, delay, cause, conn));
    }

    /** Hands queued events to the sink, one drainer at a time (Reactor sinks need serialized calls). */
    private void drainEvents() {
        if (draining.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            PeerPoolEvent e;
            while ((e = outbox.poll()) != null) {
                // Guarded: a subscriber's throw let out here would leave `draining` held, and the
                // pool's events stopped for good.
                if (e == END) {
                    Emissions.guarded(events::tryEmitComplete);
                } else {
                    PeerPoolEvent next = e;
                    Emissions.guarded(() -> events.tryEmitNext(next));
                }
            }
            missed = draining.addAndGet(-missed);
        } while (missed != 0);
    }

    // ---------------------------------------------------------------- lifetime

    /**
     * Stops reconnecting, fails every waiting operation with a {@link ResourceClosedException},
     * cancels a connect in progress and closes the live connections in order (what is in flight on
     * them fails with {@link io.cqflux.core.ConnectionException} {@code CLOSED}), emits
     * {@link PeerPoolEvent.Kind#CLOSED} and completes {@link #events()}. Idempotent, non-blocking,
     * from any thread.
     */
    @Override
    public void dispose() {
        end(null);
    }

    /**
     * Ends the pool, once, as {@link #dispose()} says: the one way it ends.
     *
     * @param reason null for a dispose; else why the pool ends on its own (its connect request can
     *     no longer be sent), which waiting and later acquires fail with and the CLOSED event carries
     */
    private void end(String reason) {
        List<Disposable> pendings = new ArrayList<>();
        List<RdmaConnection> conns = new ArrayList<>();
        List<Waiter> ws;
        ResourceClosedException why = reason == null ? null : new ResourceClosedException(reason);
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            closedFor = reason;
            state = State.CLOSED;
            for (Slot s : slots) {
                if (s.pending != null) {
                    pendings.add(s.pending);
                    s.pending = null;
                }
                if (s.conn != null) {
                    conns.add(s.conn);
                    s.conn = null;
                }
            }
            ws = new ArrayList<>(waiters);
            waiters.clear();
            emit(PeerPoolEvent.Kind.CLOSED, null, 0, null, why, null);
            outbox.add(END);
        }
        cq.forget(this);
        for (Disposable d : pendings) {
            d.dispose();
        }
        for (RdmaConnection c : conns) {
            c.dispose();
        }
        ResourceClosedException gone = why != null ? why
                : new ResourceClosedException(name + " was disposed while waiting for a connection");
        for (Waiter w : ws) {
            w.fail(gone);
        }
        drainEvents();
        if (reason != null) {
            log.warn(reason);
        } else if (log.isDebugEnabled()) {
            log.debug(name + ": disposed");
        }
        checkTerminated();
    }

    private void checkTerminated() {
        boolean c;
        synchronized (lock) {
            c = closed;
        }
        if (c && connectsInProgress.get() == 0 && releases.isEmpty()) {
            terminated.complete(null);
        }
    }

    /**
     * {@return whether {@link #dispose()} was called (or the {@link Cqflux} was disposed), or the
     * pool ended on its own because its connect request can no longer be sent}
     */
    @Override
    public boolean isDisposed() {
        return state == State.CLOSED;
    }

    /**
     * {@return a Mono that completes once the pool is disposed and every connection it opened is
     * released (native objects freed); it never fails; late subscribers complete at once}
     */
    public Mono<Void> onDispose() {
        return Mono.fromFuture(terminated, true);
    }

    /**
     * Disposes the pool and blocks until every connection it opened is released.
     *
     * @param timeout how long to wait, at least zero
     * @throws IllegalStateException when not released within {@code timeout} (the message says
     *     what is left), or when called on a Reactor {@code NonBlocking} thread such as an event
     *     loop (nothing is disposed then)
     * @throws IllegalArgumentException when {@code timeout} is negative
     */
    public void disposeNow(Duration timeout) {
        Lifecycle.checkTimeout(timeout, "timeout");
        Lifecycle.checkMayBlock(this);
        dispose();
        Lifecycle.await(this, terminated, timeout, () -> releases.size() + " connection(s) not released yet, "
                + connectsInProgress.get() + " connect(s) not ended");
    }

    /**
     * The same as {@link #dispose()}: starts closing and returns at once; for try-with-resources.
     * Use {@link #disposeNow(Duration)} to wait for the release.
     */
    @Override
    public void close() {
        dispose();
    }

    @Override
    public String toString() {
        return "PeerPool[" + address + ", " + state + "]";
    }
}
