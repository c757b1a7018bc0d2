package io.cqflux.reactor.internal.pool;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;

/*
 * Design: connections that heal.
 *
 * PeerPool is the public face of this core, which is a facade over its parts, all sharing its
 * `lock`: PoolSlots (each slot's connect and reconnect; its design block has the state machine),
 * with AttemptSchedule (when each attempt starts and how long it may run) and OutageLog (each
 * slot's per-outage logging), PoolStatus (the state PoolSlots records), PoolEvents (the ordered
 * event stream), PoolReleases (what onDispose waits for) and the queue of PoolWaiters here.
 * Nothing slow or user-supplied runs under the lock (connect subscriptions, disposals, waiters'
 * signals, the validation and the event sink all run after it is released).
 *
 * A connection is shared, not leased: RDMA connections multiplex (every operation is its own
 * Mono), so acquire() hands the same live connection to many callers, the least loaded first.
 * Regions are re-learned on each reconnect because each new connection carries the peer's hello:
 * callers look regions up on the connection they are given, never keep a PeerRegion across calls.
 *
 * Operations already posted on a connection that ends fail as they always do
 * (ConnectionException): the pool never replays them — a write may or may not have landed.
 *
 * The pool's onDispose waits for the release of every connection it started, a cancelled
 * connect's too: the Connector it connects through hands it each new connection's release
 * future (PoolReleases).
 *
 * The pool ends in one way, end(reason): dispose() (no reason), or the pool itself when its
 * connect request can no longer be sent (PoolSlots finds that out and asks for the end).
 */

/**
 * The state behind one {@link PeerPool}: its slots, its event stream, what its
 * {@code onDispose} waits for and the operations waiting for a connection. The pool's public
 * methods forward here; {@link #start} makes the pool and starts connecting. Thread-safe, as the
 * pool's javadoc says.
 */
public final class PoolCore {
    private static final ApiAccess API = ApiAccess.get();

    private final PoolHost host;
    private final InetSocketAddress address;
    private final PeerPoolOptions options;
    private final String name;
    /** Guards {@code waiters} and everything of {@link PoolSlots} and {@link PoolStatus}. */
    private final Object lock = new Object();
    private final PoolEvents events;
    private final PoolReleases releases = new PoolReleases();
    private final PoolStatus status = new PoolStatus();
    private final PoolSlots slots;
    private final ArrayDeque<PoolWaiter> waiters = new ArrayDeque<>();
    /** The public face, made with the core: what its instance is told of at the end ({@link PoolHost#forget}). */
    private final PeerPool pool;

    private PoolCore(PoolHost host, InetSocketAddress address, PeerPoolOptions options) {
        this.host = host;
        this.address = address;
        this.options = options;
        this.name = "peer pool " + hostAndPort(address);
        this.events = new PoolEvents(address);
        this.slots = new PoolSlots(host, address, options, name, lock, status, events, releases, new PoolSlots.Host() {
            @Override
            public void serveWaiters() {
                PoolCore.this.serveWaiters();
            }

            @Override
            public void end(String reason) {
                PoolCore.this.end(reason);
            }

            @Override
            public void attemptFailed() {
                PoolCore.this.failFastWaiters();
            }
        });
        this.pool = API.newPeerPool(this);
    }

    /**
     * Creates a pool and starts connecting every slot.
     *
     * @param host what the pool uses of its instance
     * @param address the peer, checked ({@link PeerPool#checkAddress})
     * @param options the pool's options, its connect request checked
     * @return the pool, already connecting
     */
    public static PeerPool start(PoolHost host, InetSocketAddress address, PeerPoolOptions options) {
        PoolCore core = new PoolCore(host, address, options);
        core.slots.start();
        return core.pool;
    }

    private static Logger log() {
        return API.peerPoolLog();
    }

    /** {@return the address as given, with the IP where the name is not one: {@code host/ip:port}} */
    static String hostAndPort(InetSocketAddress a) {
        String host = a.getHostString();
        java.net.InetAddress ip = a.getAddress();
        if (ip != null && !host.equals(ip.getHostAddress())) {
            host = host + "/" + ip.getHostAddress();
        }
        return host + ":" + a.getPort();
    }

    /** {@return the peer's address} */
    public InetSocketAddress address() {
        return address;
    }

    /** {@return the options the pool was made with} */
    public PeerPoolOptions options() {
        return options;
    }

    /** {@return the state now ({@link PeerPool#state()}): {@code CONNECTED} only while a connection is live} */
    public PeerPool.State state() {
        return slots.state();
    }

    /** {@return the state as last recorded, not checked against the connections} */
    public PeerPool.State recordedState() {
        return status.recorded();
    }

    /** {@return how many connections are live now} */
    public int liveConnections() {
        return slots.liveCount();
    }

    /** {@return the events ({@link PeerPool#events()})} */
    public Flux<PeerPoolEvent> events() {
        return events.flux();
    }

    /** {@return the future that completes once the pool is closed and everything it started released} */
    public CompletableFuture<Void> terminated() {
        return releases.terminated();
    }

    /** {@return what is left to release, for a timeout's message} */
    public String pending() {
        return releases.pending();
    }

    /** {@return a cold Mono of a live connection, as {@link PeerPool#acquire()} says} */
    public Mono<RdmaConnection> acquire() {
        return Mono.create(sink -> {
            RdmaConnection c = pick();
            if (c != null) {
                sink.success(c);
                return;
            }
            PoolWaiter w = new PoolWaiter(sink);
            Throwable refused = null;
            synchronized (lock) {
                Throwable lastFailure = status.lastFailure();
                if (status.closed()) {
                    String closedFor = status.closedFor();
                    refused = new ResourceClosedException(closedFor != null ? closedFor : name + " is disposed");
                } else if (options.whenUnavailable() == PeerPoolOptions.WhenUnavailable.FAIL_FAST
                        && (status.recorded() != PeerPool.State.CONNECTING || lastFailure != null)) {
                    // The pool's very first attempts, before any failed, are waited for (bounded):
                    // an operation right after peerPool() is not "during a gap". Those waiters
                    // fail once an attempt fails (failFastWaiters).
                    refused = failingFast();
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
                if (w.claim()) {
                    synchronized (lock) {
                        waiters.remove(w);
                    }
                }
            });
            Duration max = options.maxAcquireTime();
            // The library's real-time timer, not Reactor's (LibraryTimer: virtual time); the
            // expiry signals the waiter, so it runs on a loop, as the pool's other signals do.
            w.expireWith(LibraryTimer.schedule(() -> slots.onLoop(() -> expire(w)), max.toNanos(), TimeUnit.NANOSECONDS));
            // A connection may have become live between pick() and joining the queue.
            serveWaiters();
        });
    }

    /** {@return the error of an operation that fails fast: no live connection, and why (under the lock)} */
    private ConnectionException failingFast() {
        return new ConnectionException(ConnectionEvent.UNREACHABLE, name + ": no live connection (pool "
                + status.recorded() + ", failing fast as configured)" + status.lastFailureText(), status.lastFailure());
    }

    /**
     * An attempt failed: with FAIL_FAST, the operations that joined the queue while the pool's
     * first connect was on its way (the only ones FAIL_FAST lets wait) fail now, as one arriving
     * now would; a live connection of another slot serves them first.
     */
    private void failFastWaiters() {
        if (options.whenUnavailable() != PeerPoolOptions.WhenUnavailable.FAIL_FAST) {
            return;
        }
        serveWaiters();
        List<PoolWaiter> ws;
        ConnectionException e;
        synchronized (lock) {
            if (waiters.isEmpty() || status.closed()) {
                return;
            }
            ws = new ArrayList<>(waiters);
            waiters.clear();
            e = failingFast();
        }
        for (PoolWaiter w : ws) {
            w.fail(e);
        }
    }

    private void expire(PoolWaiter w) {
        synchronized (lock) {
            if (!waiters.remove(w)) {
                return;
            }
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - w.since());
        w.fail(new ConnectionException(ConnectionEvent.UNREACHABLE, name + ": no live connection within "
                + options.maxAcquireTime() + " (waited " + waited + " ms; pool " + status.recorded() + ")"
                + status.lastFailureText(), status.lastFailure()));
    }

    /**
     * {@return the live connection with the least work, or null}; evicts connections that fail
     * the validation (outside the lock: it is the user's code).
     */
    private RdmaConnection pick() {
        while (true) {
            PoolSlots.Pick best = slots.leastLoaded();
            if (best == null) {
                return null;
            }
            boolean valid;
            Throwable why = null;
            try {
                valid = options.validation().test(best.conn());
            } catch (Throwable e) {
                // Any non-fatal throwable (an AssertionError included) fails the validation: one
                // that escaped would fail the connect that delivered this connection and leave it
                // open behind the pool's back.
                Exceptions.throwIfJvmFatal(e);
                valid = false;
                why = e;
            }
            if (valid) {
                return best.conn();
            }
            slots.evict(best, new IllegalStateException("connection " + best.conn().description()
                    + " failed the pool's validation and was evicted", why));
        }
    }

    /** Hands live connections to waiting operations, first come first served. */
    private void serveWaiters() {
        while (true) {
            PoolWaiter w;
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

    // ---------------------------------------------------------------- lifetime

    /**
     * Ends the pool, once, as {@link PeerPool#dispose()} says: the one way it ends.
     *
     * @param reason null for a dispose; else why the pool ends on its own (its connect request can
     *     no longer be sent), which waiting and later acquires fail with and the CLOSED event carries
     */
    public void end(String reason) {
        List<Disposable> pendings = new ArrayList<>();
        List<RdmaConnection> conns = new ArrayList<>();
        List<PoolWaiter> ws;
        ResourceClosedException why = reason == null ? null : new ResourceClosedException(reason);
        synchronized (lock) {
            if (!slots.close(reason, pendings, conns)) {
                return;
            }
            releases.close();
            ws = new ArrayList<>(waiters);
            waiters.clear();
            events.emit(PeerPoolEvent.Kind.CLOSED, -1, 0, null, why, null);
            events.complete();
        }
        host.forget().accept(pool);
        for (Disposable d : pendings) {
            d.dispose();
        }
        for (RdmaConnection c : conns) {
            c.dispose();
        }
        ResourceClosedException gone = why != null ? why
                : new ResourceClosedException(name + " was disposed while waiting for a connection");
        for (PoolWaiter w : ws) {
            w.fail(gone);
        }
        events.drain();
        Logger log = log();
        if (reason != null) {
            log.warn(reason);
        } else if (log.isDebugEnabled()) {
            log.debug(name + ": disposed");
        }
        releases.checkTerminated();
    }
}
