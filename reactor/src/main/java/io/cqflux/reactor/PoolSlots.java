package io.cqflux.reactor;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.resources.Connector;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.util.Logger;

/*
 * Design: the slots of a PeerPool and their reconnect state machine.
 *
 * The pool has `size` slots. Each slot is, at any time, in exactly one of: connecting (a connect
 * Mono subscribed), live (an RdmaConnection), waiting to retry (a real-time timer of the
 * library, LibraryTimer, whose task runs on one of the instance's loops), or nothing (closed).
 * All slot fields and the pool's state are guarded by the pool's `lock`; nothing slow or
 * user-supplied runs under it (connect subscriptions, disposals, waiters' signals and the event
 * sink all run after it is released).
 *
 *   start --> CONNECTING --ok--> live --(its events(): CLOSED/LOST, or evicted)--> RETRYING(delay)
 *                 ^    \--fail--> RETRYING(delay) --timer--> CONNECTING                 |
 *                 |    \--its window ends--> RETRYING(0) --at once--> CONNECTING       |
 *                 +---------------------------------------------------------------------+
 *
 * The attempts of a reconnect start at most `gap` = max(backoff max, min(minAttemptTime, connect
 * timeout)) apart, so that a pool sees a heal with an attempt that starts within `gap` of it and
 * is served within that and one connect. A connect sent into a partition cannot see the link come
 * back (its request was dropped, and the transport resends it only on its own timer: TCP's SYN
 * after 1 s, 3 s, 7 s, the RDMA CM's request after its response timeout), so the attempt in flight
 * at a heal must not hold the slot for the whole connect timeout. Hence:
 *  - a reconnect attempt (started by a retry timer or right after an abandoned attempt) has a
 *    window: the backoff delay that came before it, at least minAttemptTime, capped by the connect
 *    timeout (ConnectionConfig#timeout; at the cap no timer of the pool's own, the connect's
 *    timeout ends it). An attempt still running at the end of its window is abandoned: its
 *    subscription is disposed, which releases its set-up through the connect Mono's cancel path
 *    (the one its own timeout takes), RETRYING is emitted with a zero delay (the wait was spent
 *    inside the window) and an UNREACHABLE cause, and the next attempt starts at once;
 *  - an attempt that fails waits the next backoff delay (reported by RETRYING, as always), cut so
 *    that the next starts no later than `gap` after this one started: a late failure (the connect
 *    timeout at the cap, a network error reported after seconds) does not add a whole delay on top;
 *  - the pool's very first connect has no window: it keeps the full connect timeout, so a slow
 *    first handshake is not cut short by a backoff that has not begun.
 * Each attempt is a token (Attempt) in its slot while it runs: an abandoned attempt's late outcome
 * (its connection arriving as it is disposed) finds another token there and is dropped, the
 * connection disposed, so a slot has at most one attempt in flight and its events stay in the
 * documented order (CONNECTING, then CONNECTED or RETRYING, then CONNECTING again).
 *
 * The backoff's attempt count is reset only when a connection that stayed up
 * options.backoffResetAfter() ends, not when one is established: a peer that accepts and drops
 * at once (or a validation that always fails) sees the delays double up to the maximum like a
 * peer that refuses. A live connection that has begun to end (ENDING: still open, posting
 * nothing) is not handed out.
 *
 * Events are queued under the lock (so their order is the order of the state changes) and handed
 * to the sink by PoolEvents' one drainer, outside it.
 *
 * The pool ends on its own when its connect request can no longer be sent. Cqflux.checkConnectRequest
 * refuses such a request when the pool is made; an exposed region closed later is found by the
 * same check, run again when a connect fails before sending anything (not a ConnectionException),
 * and since a closed region never opens again, every further attempt would fail alike: the pool
 * ends instead of retrying.
 */

/**
 * The connection slots of one {@link PeerPool}: each slot's connect, backoff and reconnect, the
 * per-outage logging, and the pool's state that follows from them. Guarded by the pool's lock,
 * which the pool shares with it; what ends the pool or serves its waiters is the pool's
 * ({@link Host}).
 */
final class PoolSlots {

    /** What the slots ask of their pool: called outside the lock. */
    interface Host {
        /** Hands live connections to waiting operations. */
        void serveWaiters();

        /** Ends the pool; {@code reason} null for a dispose, else why it ends on its own. */
        void end(String reason);
    }

    /** One connection of the pool. Guarded by {@code lock}; written only by {@link PoolSlots}. */
    private static final class Slot {
        final int index;
        RdmaConnection conn;
        /** A connect in progress or a retry timer. */
        Disposable pending;
        boolean connecting;
        /** The attempt in progress, or null: an outcome of any other attempt is dropped. */
        Attempt current;
        /** The end of the current attempt's window (a timer), or null. */
        Disposable windowEnd;
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

    /** One connect attempt of a slot: its token while it runs. */
    private static final class Attempt {
        /** When it started ({@code System.nanoTime()}). */
        final long startedAt;
        /** How long it may run before it is abandoned, or 0 when only the connect timeout ends it. */
        final long windowNanos;

        Attempt(long startedAt, long windowNanos) {
            this.startedAt = startedAt;
            this.windowNanos = windowNanos;
        }
    }

    /** A live connection and the slot it is in, as {@link #leastLoaded()} finds it. */
    record Pick(RdmaConnection conn, Slot slot) {
    }

    private final Cqflux cq;
    /** How the pool connects: {@code cq}'s connect, which also hands over each connection's release. */
    private final Connector connector;
    private final InetSocketAddress address;
    private final PeerPoolOptions options;
    private final String name;
    private final Object lock;
    private final PoolEvents events;
    private final PoolReleases releases;
    private final Host host;
    private final Slot[] slots;
    /** The instance's connect timeout: the longest an attempt runs. */
    private final long connectTimeoutNanos;
    /** The longest time between the starts of two attempts of a reconnect (the design's `gap`). */
    private final long gapNanos;
    private final AtomicInteger turn = new AtomicInteger();
    private volatile PeerPool.State state = PeerPool.State.CONNECTING;
    private boolean closed;
    /** Why the pool ended on its own (its connect request can no longer be sent); null when disposed or open. */
    private String closedFor;
    private Throwable lastFailure;

    PoolSlots(Cqflux cq, Connector connector, InetSocketAddress address, PeerPoolOptions options, String name,
              Object lock, PoolEvents events, PoolReleases releases, Host host) {
        this.cq = cq;
        this.connector = connector;
        this.address = address;
        this.options = options;
        this.name = name;
        this.lock = lock;
        this.events = events;
        this.releases = releases;
        this.host = host;
        Duration connectTimeout = cq.connectionConfig().timeout();
        this.connectTimeoutNanos = connectTimeout.toNanos();
        this.gapNanos = options.longestAttemptGap(connectTimeout).toNanos();
        this.slots = new Slot[options.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(i);
        }
    }

    private static Logger log() {
        return PeerPool.log;
    }

    /** Starts connecting every slot. */
    void start() {
        for (Slot s : slots) {
            connect(s, 0); // the first connect: the full connect timeout
        }
    }

    // ---------------------------------------------------------------- the pool's state

    /** {@return the state as last recorded (not checked against the connections)} */
    PeerPool.State recorded() {
        return state;
    }

    /** {@return the state, {@code CONNECTED} only while a connection is live} */
    PeerPool.State state() {
        PeerPool.State s = state;
        if (s == PeerPool.State.CONNECTED) {
            synchronized (lock) {
                if (!anyLive()) {
                    return PeerPool.State.RECONNECTING;
                }
            }
        }
        return s;
    }

    /** {@return whether the pool is closed}; call under the lock */
    boolean closed() {
        return closed;
    }

    /** {@return why the pool ended on its own, or null when disposed or open}; call under the lock */
    String closedFor() {
        return closedFor;
    }

    /** {@return the last failed attempt's or loss's cause, or null} */
    Throwable lastFailure() {
        return lastFailure;
    }

    /** {@return the last failure as a clause for a message ("; last failure: ..."), or empty} */
    String lastFailureText() {
        Throwable f = lastFailure;
        return f == null ? "" : "; last failure: " + f.getMessage();
    }

    /** {@return how many connections are live now} */
    int liveCount() {
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
     * Closes the slots, once; call under the lock.
     *
     * @param reason null for a dispose, else why the pool ends on its own
     * @param pendings receives the connects in progress and retry timers to dispose
     * @param conns receives the connections to dispose
     * @return false when closed already
     */
    boolean close(String reason, List<Disposable> pendings, List<RdmaConnection> conns) {
        if (closed) {
            return false;
        }
        closed = true;
        closedFor = reason;
        state = PeerPool.State.CLOSED;
        for (Slot s : slots) {
            if (s.pending != null) {
                pendings.add(s.pending);
                s.pending = null;
            }
            if (s.windowEnd != null) {
                pendings.add(s.windowEnd);
                s.windowEnd = null;
            }
            if (s.conn != null) {
                conns.add(s.conn);
                s.conn = null;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- picking

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

    /**
     * {@return the live connection with the fewest operations in flight and waiting (ties in
     * turn), or null when none is live or the pool is closed}; not validated
     */
    Pick leastLoaded() {
        synchronized (lock) {
            if (closed) {
                return null;
            }
            RdmaConnection best = null;
            Slot bestSlot = null;
            long bestLoad = Long.MAX_VALUE;
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
            return best == null ? null : new Pick(best, bestSlot);
        }
    }

    /** Ends the picked connection because it failed the validation; the slot reconnects. */
    void evict(Pick p, Throwable why) {
        Slot s = p.slot();
        RdmaConnection c = p.conn();
        synchronized (lock) {
            if (s.conn != c) {
                return;
            }
            s.evictedFor = why;
        }
        c.dispose(); // its end (events()) comes back through onEnded
        onEnded(s, c);
    }

    // ---------------------------------------------------------------- the state machine

    /**
     * Runs a timer's task on the instance's first loop (after the loops ended, on the timer's
     * thread): not {@code nextLoop()}, whose round-robin the connect that follows takes one step
     * of, so that reconnects are spread over the loops as first connects are.
     */
    void onLoop(Runnable task) {
        cq.firstLoop().executeOrAfterTermination(task);
    }

    /**
     * Starts a connect attempt for {@code s}.
     *
     * @param windowNanos how long it may run before it is abandoned ({@link #window}), or 0 for
     *     the connect timeout alone (the pool's first connect)
     */
    private void connect(Slot s, long windowNanos) {
        Runnable uncount;
        Attempt a;
        synchronized (lock) {
            if (closed) {
                return;
            }
            s.pending = null;
            s.connecting = true;
            s.attempt++;
            a = new Attempt(System.nanoTime(), windowNanos);
            s.current = a;
            events.emit(PeerPoolEvent.Kind.CONNECTING, s.index, s.attempt, null, null, null);
            uncount = releases.connectStarted();
        }
        events.drain();
        Disposable d;
        try {
            // Subscribed directly, with no operator between: a connection that arrives as the
            // pool disposes the attempt is then released by the connect Mono's hand-over, which
            // recognises Reactor's lambda subscriber (an operator in between would hide the late
            // cancel that tells it the connection was dropped). The attempt stops counting after
            // its outcome was handled, or when it is disposed.
            Disposable attempt = connector.connect(address, options.connectOptions(), releases::track).subscribe(c -> {
                try {
                    onConnected(s, a, c);
                } finally {
                    uncount.run();
                }
            }, e -> {
                try {
                    onConnectFailed(s, a, e);
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
            onConnectFailed(s, a, e);
            return;
        }
        boolean cancel;
        synchronized (lock) {
            cancel = closed;
            if (!cancel && s.current == a) {
                s.pending = d;
                if (a.windowNanos > 0) {
                    // Armed here, with the attempt's subscription in `pending`, so that its end finds it.
                    long left = a.windowNanos - (System.nanoTime() - a.startedAt);
                    s.windowEnd = LibraryTimer.schedule(() -> onLoop(() -> windowEnded(s, a)), Math.max(0, left),
                            TimeUnit.NANOSECONDS);
                }
            }
        }
        if (cancel) {
            d.dispose();
        }
    }

    /**
     * {@return how long a reconnect attempt after the backoff delay {@code delay} may run}: the
     * delay, at least {@link PeerPoolOptions#minAttemptTime()}; 0 (no window of the pool's own) when
     * that reaches the connect timeout, which then ends the attempt
     */
    private long window(Duration delay) {
        long w = Math.max(delay.toNanos(), options.minAttemptTime().toNanos());
        return w >= connectTimeoutNanos ? 0 : w;
    }

    /**
     * The slot's current attempt ended (call under the lock): the slot has no attempt in flight;
     * {@return the attempt's window timer, to dispose outside the lock, or null}
     */
    private static Disposable attemptEnded(Slot s) {
        s.connecting = false;
        s.pending = null;
        s.current = null;
        Disposable w = s.windowEnd;
        s.windowEnd = null;
        return w;
    }

    private static void dispose(Disposable d) {
        if (d != null) {
            d.dispose();
        }
    }

    private void onConnected(Slot s, Attempt a, RdmaConnection c) {
        int attempts;
        long outage;
        boolean firstReconnect;
        Disposable windowEnd;
        synchronized (lock) {
            if (s.current != a) {
                // An abandoned attempt whose connection arrived as it was disposed: the slot has
                // moved on to another attempt, so nobody takes this one.
                attempts = -1;
                outage = 0;
                firstReconnect = false;
                windowEnd = null;
            } else if (closed) {
                windowEnd = attemptEnded(s);
                attempts = -1;
                outage = 0;
                firstReconnect = false;
            } else {
                windowEnd = attemptEnded(s);
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
                state = PeerPool.State.CONNECTED;
                events.emit(PeerPoolEvent.Kind.CONNECTED, s.index, attempts, null, null, c.description());
            }
        }
        dispose(windowEnd);
        if (attempts < 0) {
            c.dispose();
            return;
        }
        events.drain();
        Logger log = log();
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
        host.serveWaiters();
    }

    private void onConnectFailed(Slot s, Attempt a, Throwable e) {
        boolean report;
        boolean isClosed;
        Disposable windowEnd;
        synchronized (lock) {
            if (s.current != a) {
                return; // an abandoned attempt: its end was reported when it was abandoned
            }
            windowEnd = attemptEnded(s);
            isClosed = closed;
            report = !s.outageLogged;
            if (!isClosed) {
                lastFailure = e;
                s.outageLogged = true;
                if (s.outageSince == 0) {
                    s.outageSince = System.nanoTime();
                }
            }
        }
        dispose(windowEnd);
        if (isClosed) {
            return;
        }
        // A connect that failed before sending anything (not the peer's or the network's
        // ConnectionException) may have a request that can no longer be sent: then no retry can
        // succeed. Checked before the instance's state: its shutdown also fails the check.
        String unsendable = e instanceof ConnectionException ? null : unsendableRequest();
        if (cq.isDisposed()) {
            host.end(null);
            return;
        }
        if (unsendable != null) {
            host.end(unsendable);
            return;
        }
        Duration next = scheduleRetry(s, e, System.nanoTime() - a.startedAt);
        if (next != null) {
            logFailedAttempt(s, e, report, next);
        }
    }

    /**
     * The window of the attempt {@code a} ended (on a loop): when it is still running, it is
     * abandoned and the next attempt starts at once, its wait spent inside the window.
     */
    private void windowEnded(Slot s, Attempt a) {
        Disposable attempt;
        boolean report;
        ConnectionException cause;
        long nextWindow;
        synchronized (lock) {
            if (closed || s.current != a) {
                return;
            }
            attempt = s.pending;
            attemptEnded(s); // the timer that runs this is spent
            cause = new ConnectionException(ConnectionEvent.UNREACHABLE, "connect attempt " + s.attempt + " to "
                    + PeerPool.hostAndPort(address) + " abandoned: not established within its "
                    + TimeUnit.NANOSECONDS.toMillis(a.windowNanos) + " ms (the backoff delay before it, at least"
                    + " minAttemptTime " + options.minAttemptTime().toMillis() + " ms); the next attempt starts at once");
            lastFailure = cause;
            report = !s.outageLogged;
            s.outageLogged = true;
            if (s.outageSince == 0) {
                s.outageSince = System.nanoTime();
            }
            int next = s.attempt + 1;
            Duration delay = jittered(options.nominalBackoff(next));
            nextWindow = window(delay);
            events.emit(PeerPoolEvent.Kind.RETRYING, s.index, next, Duration.ZERO, cause, null);
        }
        events.drain();
        // Released as a connect timeout releases it: the connect Mono's cancel closes what it set up.
        dispose(attempt);
        logFailedAttempt(s, cause, report, Duration.ZERO);
        connect(s, nextWindow);
    }

    /** Logs a failed (or abandoned) attempt: the outage's first at WARN or INFO, further ones at DEBUG. */
    private void logFailedAttempt(Slot s, Throwable e, boolean report, Duration next) {
        Logger log = log();
        String msg = name + ": connect attempt for connection " + s.index + " failed (" + e.getMessage()
                + "); next attempt in " + next.toMillis() + " ms";
        if (report && state == PeerPool.State.CONNECTING) {
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
            if (log().isDebugEnabled()) {
                log().debug(name + ": checking the connect request after a failed attempt failed", other);
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
            events.emit(PeerPoolEvent.Kind.LOST, s.index, 0, null, cause, c.description());
            if (anyLive()) {
                state = PeerPool.State.CONNECTED;
            } else {
                state = PeerPool.State.RECONNECTING;
            }
        }
        events.drain();
        if (cq.isDisposed()) {
            host.end(null);
            return;
        }
        // One WARN line per outage: ConnectionCore has written it already for a LOST end, and
        // the further losses of one outage (connections that did not stay up) go to DEBUG.
        Logger log = log();
        boolean saidAlready = cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.LOST;
        if (firstLoss && !saidAlready) {
            log.warn(name + ": connection " + s.index + " ended: " + cause.getMessage());
        } else if (!firstLoss && log.isDebugEnabled()) {
            log.debug(name + ": connection " + s.index + " ended again after " + TimeUnit.NANOSECONDS.toMillis(lived)
                    + " ms, before it proved stable (" + options.backoffResetAfter() + "): " + cause.getMessage());
        }
        Duration next = scheduleRetry(s, cause, 0);
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
     * Emits RETRYING and schedules the next attempt; {@return its wait, or null when closed}
     *
     * @param spentNanos how long the failed attempt ran (0 after a loss): the wait is cut so that
     *     the next attempt starts at most the longest gap after it started
     */
    private Duration scheduleRetry(Slot s, Throwable cause, long spentNanos) {
        Duration wait;
        synchronized (lock) {
            if (closed) {
                return null;
            }
            int next = s.attempt + 1;
            Duration delay = jittered(options.nominalBackoff(next));
            long waitNanos = waitAfter(delay.toNanos(), spentNanos, gapNanos);
            wait = waitNanos == delay.toNanos() ? delay : Duration.ofNanos(waitNanos);
            long nextWindow = window(delay);
            events.emit(PeerPoolEvent.Kind.RETRYING, s.index, next, wait, cause, null);
            // Real time (LibraryTimer), on a loop: the attempt emits the pool's events.
            s.pending = LibraryTimer.schedule(() -> onLoop(() -> connect(s, nextWindow)), waitNanos,
                    TimeUnit.NANOSECONDS);
        }
        events.drain();
        return wait;
    }

    /**
     * {@return the wait before the next attempt}: the backoff delay {@code delayNanos}, cut so that
     * the next attempt starts no later than {@code gapNanos} after the failed one started
     * ({@code spentNanos} ago), never negative
     */
    static long waitAfter(long delayNanos, long spentNanos, long gapNanos) {
        return Math.clamp(gapNanos - spentNanos, 0, delayNanos);
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
}
