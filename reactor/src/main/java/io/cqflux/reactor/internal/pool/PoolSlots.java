package io.cqflux.reactor.internal.pool;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
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
 * When each attempt starts and how long it may run is the schedule's (AttemptSchedule: the
 * backoff, the attempt's window, the shortened wait after a late failure, the attempt count's
 * reset); what happens at each step is here:
 *  - a reconnect attempt (started by a retry timer or right after an abandoned attempt) gets its
 *    window as a timer of its own, unless the window is 0 (the connect's timeout ends it). An
 *    attempt still running at the end of its window is abandoned: its subscription is disposed,
 *    which releases its set-up through the connect Mono's cancel path (the one its own timeout
 *    takes), RETRYING is emitted with a zero delay and an UNREACHABLE cause, and the next attempt
 *    starts at once;
 *  - an attempt that fails, or a live connection that ends, emits RETRYING with the schedule's
 *    wait and arms a retry timer for it;
 *  - the pool's very first connect has no window: it keeps the full connect timeout, so a slow
 *    first handshake is not cut short by a backoff that has not begun.
 * Each attempt is a token (Attempt) in its slot while it runs: an abandoned attempt's late outcome
 * (its connection arriving as it is disposed) finds another token there and is dropped, the
 * connection disposed, so a slot has at most one attempt in flight and its events stay in the
 * documented order (CONNECTING, then CONNECTED or RETRYING, then CONNECTING again).
 *
 * The attempt count is reset only when a connection that stayed up ends (the schedule decides),
 * not when one is established. A live connection that has begun to end (ENDING: still open,
 * posting nothing) is not handed out. Each step records what its outage has logged (OutageLog)
 * under the lock and writes the line after it.
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
 * The connection slots of one {@link PeerPool}: each slot's connect and reconnect, and the pool's
 * state that follows from them (recorded in its {@link PoolStatus}); when each attempt starts and
 * how long it may run is the {@link AttemptSchedule}'s, the per-outage logging each slot's
 * {@link OutageLog}'s. Guarded by the {@link PoolCore}'s lock, which it shares with it; what ends the
 * pool or serves its waiters is the core's ({@link Host}).
 */
final class PoolSlots {
    private static final ApiAccess API = ApiAccess.get();

    /** What the slots ask of their pool: called outside the lock. */
    interface Host {
        /** Hands live connections to waiting operations. */
        void serveWaiters();

        /** Ends the pool; {@code reason} null for a dispose, else why it ends on its own. */
        void end(String reason);

        /** An attempt failed (recorded in the status): waiters that must not wait through a gap fail now. */
        void attemptFailed();
    }

    /** One connection of the pool. Guarded by {@code lock}; written only by {@link PoolSlots}. */
    private static final class Slot {
        final int index;
        RdmaConnection conn;
        /** A connect in progress or a retry timer. */
        Disposable pending;
        /** The attempt in progress, or null: an outcome of any other attempt is dropped. */
        Attempt current;
        /** The end of the current attempt's window (a timer), or null. */
        Disposable windowEnd;
        /** Attempts since the start or the loss of a connection that stayed up (AttemptSchedule#provedStable). */
        int attempt;
        /** What the current outage has logged. */
        final OutageLog outage;
        /** When the live connection was established ({@code System.nanoTime()}). */
        long connectedAt;
        /** Why the pool itself ended the live connection (validation), or null. */
        Throwable evictedFor;

        Slot(int index, OutageLog outage) {
            this.index = index;
            this.outage = outage;
        }
    }

    /**
     * One connect attempt of a slot: its token while it runs (compared by identity: each attempt is
     * a new one).
     *
     * @param startedAt when it started ({@code System.nanoTime()})
     * @param windowNanos how long it may run before it is abandoned, or 0 when only the connect timeout ends it
     */
    private record Attempt(long startedAt, long windowNanos) {
    }

    /** A live connection and the slot it is in, as {@link #leastLoaded()} finds it. */
    record Pick(RdmaConnection conn, Slot slot) {
    }

    /** What the pool uses of its instance ({@link PoolHost}). */
    private final PoolHost instance;
    private final InetSocketAddress address;
    private final PeerPoolOptions options;
    private final String name;
    private final Object lock;
    private final PoolEvents events;
    private final PoolReleases releases;
    private final Host host;
    private final Slot[] slots;
    private final AttemptSchedule schedule;
    private final AtomicInteger turn = new AtomicInteger();
    /** The pool's state, written here only. */
    private final PoolStatus status;

    PoolSlots(PoolHost instance, InetSocketAddress address, PeerPoolOptions options, String name,
              Object lock, PoolStatus status, PoolEvents events, PoolReleases releases, Host host) {
        this.instance = instance;
        this.address = address;
        this.options = options;
        this.name = name;
        this.lock = lock;
        this.status = status;
        this.events = events;
        this.releases = releases;
        this.host = host;
        this.schedule = new AttemptSchedule(options, instance.connectTimeout());
        this.slots = new Slot[options.size()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(i, new OutageLog(name, i, options));
        }
    }

    private static Logger log() {
        return API.peerPoolLog();
    }

    /** Starts connecting every slot. */
    void start() {
        for (Slot s : slots) {
            connect(s, 0); // the first connect: the full connect timeout
        }
    }

    // ---------------------------------------------------------------- the pool's state

    /** {@return the state, {@code CONNECTED} only while a connection is live} */
    PeerPool.State state() {
        PeerPool.State s = status.recorded();
        if (s == PeerPool.State.CONNECTED) {
            synchronized (lock) {
                if (!anyLive()) {
                    return PeerPool.State.RECONNECTING;
                }
            }
        }
        return s;
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
     * Closes the pool's status and its slots, once; call under the lock.
     *
     * @param reason null for a dispose, else why the pool ends on its own
     * @param pendings receives the connects in progress and retry timers to dispose
     * @param conns receives the connections to dispose
     * @return false when closed already
     */
    boolean close(String reason, List<Disposable> pendings, List<RdmaConnection> conns) {
        if (!status.close(reason)) {
            return false;
        }
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
        return c != null && !c.isDisposed() && API.core(c).canPost();
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
            if (status.closed()) {
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
        instance.timerLoop().executeOrAfterTermination(task);
    }

    /**
     * Starts a connect attempt for {@code s}.
     *
     * @param windowNanos how long it may run before it is abandoned ({@link AttemptSchedule#window}), or 0 for
     *     the connect timeout alone (the pool's first connect)
     */
    private void connect(Slot s, long windowNanos) {
        Runnable uncount;
        Attempt a;
        synchronized (lock) {
            if (status.closed()) {
                return;
            }
            s.pending = null;
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
            Disposable attempt = instance.connector().connect(address, options.connectOptions(), releases::track).subscribe(c -> {
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
            cancel = status.closed();
            if (!cancel && s.current == a) {
                s.pending = d;
                if (a.windowNanos() > 0) {
                    // Armed here, with the attempt's subscription in `pending`, so that its end finds it.
                    long left = a.windowNanos() - (System.nanoTime() - a.startedAt());
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
     * The slot's current attempt ended (call under the lock): the slot has no attempt in flight;
     * {@return the attempt's window timer, to dispose outside the lock, or null}
     */
    private static Disposable attemptEnded(Slot s) {
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
            } else if (status.closed()) {
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
                outage = s.outage.since();
                firstReconnect = s.outage.reconnected();
                s.evictedFor = null;
                status.record(PeerPool.State.CONNECTED);
                events.emit(PeerPoolEvent.Kind.CONNECTED, s.index, attempts, null, null, c.description());
            }
        }
        dispose(windowEnd);
        if (attempts < 0) {
            c.dispose();
            return;
        }
        events.drain();
        s.outage.logConnected(attempts, outage, firstReconnect, c.description());
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
            isClosed = status.closed();
            report = !isClosed && s.outage.attemptFailed(System.nanoTime());
            if (!isClosed) {
                status.failed(e);
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
        if (instance.closing().getAsBoolean()) {
            host.end(null);
            return;
        }
        if (unsendable != null) {
            host.end(unsendable);
            return;
        }
        Duration next = scheduleRetry(s, e, System.nanoTime() - a.startedAt());
        if (next != null) {
            s.outage.logFailedAttempt(e, report, status.recorded() == PeerPool.State.CONNECTING, next);
        }
        host.attemptFailed();
    }

    /**
     * The window of the attempt {@code a} ended (on a loop): when it is still running, it is
     * abandoned and the next attempt starts at once, its wait spent inside the window.
     */
    private void windowEnded(Slot s, Attempt a) {
        Disposable attempt;
        boolean report;
        ConnectionException cause;
        AttemptSchedule.Next next;
        synchronized (lock) {
            if (status.closed() || s.current != a) {
                return;
            }
            attempt = s.pending;
            attemptEnded(s); // the timer that runs this is spent
            cause = new ConnectionException(ConnectionEvent.UNREACHABLE, "connect attempt " + s.attempt + " to "
                    + PoolCore.hostAndPort(address) + " abandoned: not established within its "
                    + TimeUnit.NANOSECONDS.toMillis(a.windowNanos()) + " ms (the backoff delay before it, at least"
                    + " minAttemptTime " + options.minAttemptTime().toMillis() + " ms); the next attempt starts at once");
            status.failed(cause);
            report = s.outage.attemptFailed(System.nanoTime());
            next = schedule.afterAbandon(s.attempt);
            events.emit(PeerPoolEvent.Kind.RETRYING, s.index, next.attempt(), next.pause(), cause, null);
        }
        events.drain();
        // Released as a connect timeout releases it: the connect Mono's cancel closes what it set up.
        dispose(attempt);
        s.outage.logFailedAttempt(cause, report, status.recorded() == PeerPool.State.CONNECTING, next.pause());
        connect(s, next.windowNanos());
        host.attemptFailed();
    }

    /**
     * {@return why the pool's connect request can no longer be sent, or null when it can}: the
     * check that {@link Cqflux#peerPool} ran when the pool was made
     * ({@link PoolHost#checkConnectRequest}), run again; what it refuses stays refused (a region
     * closed since then never opens again)
     */
    private String unsendableRequest() {
        try {
            instance.checkConnectRequest().accept(options.connectOptions());
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
            if (status.closed()) {
                return;
            }
            Throwable end = API.core(c).endCause();
            cause = s.evictedFor != null ? s.evictedFor
                    : end != null ? end
                    : new ConnectionException(ConnectionEvent.LOST, "connection " + c.description() + " ended");
            s.evictedFor = null;
            long now = System.nanoTime();
            lived = now - s.connectedAt;
            // A connection that stayed up ends the outage (if any): this loss starts a new one and
            // the backoff starts again from its minimum.
            boolean stable = schedule.provedStable(lived);
            if (stable) {
                s.attempt = 0;
            }
            firstLoss = s.outage.lost(now, stable);
            status.failed(cause);
            events.emit(PeerPoolEvent.Kind.LOST, s.index, 0, null, cause, c.description());
            status.record(anyLive() ? PeerPool.State.CONNECTED : PeerPool.State.RECONNECTING);
        }
        events.drain();
        if (instance.closing().getAsBoolean()) {
            host.end(null);
            return;
        }
        s.outage.logLost(cause, firstLoss, lived);
        Duration next = scheduleRetry(s, cause, 0);
        if (next != null) {
            s.outage.logReconnecting(firstLoss, next);
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
            if (status.closed()) {
                return null;
            }
            AttemptSchedule.Next next = schedule.afterFailure(s.attempt, spentNanos);
            wait = next.pause();
            events.emit(PeerPoolEvent.Kind.RETRYING, s.index, next.attempt(), wait, cause, null);
            // Real time (LibraryTimer), on a loop: the attempt emits the pool's events.
            s.pending = LibraryTimer.schedule(() -> onLoop(() -> connect(s, next.windowNanos())), wait.toNanos(),
                    TimeUnit.NANOSECONDS);
        }
        events.drain();
        return wait;
    }
}
