package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Connects the named peers when the application context starts, and on stop drains what is in
 * flight before anything is closed.
 *
 * <p><b>Order.</b> Its {@link #PHASE} is below the web server's (Spring Boot 4.0: graceful
 * shutdown at {@code Integer.MAX_VALUE - 1024}, the server's stop at {@code Integer.MAX_VALUE -
 * 2048}); a lower phase starts earlier and stops later. So the peers are connecting before the
 * server takes its first request. On shutdown the {@link CqfluxRequestGate} (reactive web
 * applications; phase {@link CqfluxRequestGate#PHASE}, above the server's) has closed first:
 * requests that arrive from then on are refused with a {@code 503} before any RDMA work, kept-alive
 * connections included, which the server's graceful shutdown does not cover. Then the server's
 * graceful shutdown and stop run, then this stop.
 *
 * <p><b>Drain.</b> Stop first closes the gate (if it is not closed yet), then waits, within
 * {@code cqflux.shutdown-timeout} (one budget for the whole stop, from its start), until no
 * request admitted by the gate is still in progress and no operation is in flight or waiting for
 * a credit on any peer (the NIC has completed everything that was posted, including operations
 * whose subscribers cancelled). Only then does it close the peers in order and dispose the
 * {@link Cqflux} with what is left of the budget ({@link Cqflux#disposeNow(Duration)}): whatever
 * is still pending then fails with a {@code ConnectionException}, never hangs. The wait for the
 * requests ends a quarter of the budget (at least 1 s, or half of a budget under 2 s) before its
 * end, so that a request that never ends (an SSE stream, a WebSocket) leaves the drain and the
 * orderly close time to run: such requests are logged, and their operations fail with the close.
 *
 * <p><b>Thread safety.</b> Called by the context's lifecycle processor; start and stop are
 * idempotent. A stop is final: the instance is disposed, and a start after it is refused.
 */
public final class CqfluxLifecycle implements SmartLifecycle {
    /** The phase: {@code Integer.MAX_VALUE - 4096}, below the web server's start/stop and graceful shutdown. */
    public static final int PHASE = Integer.MAX_VALUE - 4096;

    private static final Log LOG = LogFactory.getLog(CqfluxLifecycle.class);
    /** How often the drain looks at the in-flight counts: short against any shutdown budget. */
    private static final Duration DRAIN_POLL = Duration.ofMillis(5);

    private final Cqflux cqflux;
    private final CqfluxPeers peers;
    private final Duration startWait;
    private final Duration shutdownTimeout;
    private final CqfluxRequestGate gate;
    private volatile boolean running;
    /** Stopped once: the instance is disposed for good, so a later start is refused (see {@link #start()}). */
    private volatile boolean stopped;

    /**
     * @param cqflux the instance disposed at the end of the drain
     * @param peers the peers connected at start and drained at stop
     * @param startWait how long start waits for the first connection attempts to end (the
     *     connect timeout); a peer still down then does not stop the start, readiness tells it
     * @param shutdownTimeout the budget of the drain and the disposal together
     */
    public CqfluxLifecycle(Cqflux cqflux, CqfluxPeers peers, Duration startWait, Duration shutdownTimeout) {
        this(cqflux, peers, startWait, shutdownTimeout, null);
    }

    /**
     * @param cqflux the instance disposed at the end of the drain
     * @param peers the peers connected at start and drained at stop
     * @param startWait how long start waits for the first connection attempts to end (the
     *     connect timeout); a peer still down then does not stop the start, readiness tells it
     * @param shutdownTimeout the budget of the whole stop: the wait for the requests in progress,
     *     the drain and the disposal together
     * @param gate the requests admitted while the application ran, closed and waited for before
     *     the drain; null when none is gated (not a reactive web application)
     */
    public CqfluxLifecycle(Cqflux cqflux, CqfluxPeers peers, Duration startWait, Duration shutdownTimeout,
            CqfluxRequestGate gate) {
        this.cqflux = cqflux;
        this.peers = peers;
        this.startWait = startWait;
        this.shutdownTimeout = shutdownTimeout;
        this.gate = gate;
    }

    /**
     * Connects the peers. After a {@link #stop()} the {@link Cqflux} is disposed and cannot be
     * started again: a later start (a context stopped and started again, a CRaC checkpoint's
     * restore) fails with an {@link IllegalStateException} (which Spring wraps in an
     * {@code ApplicationContextException}) rather than report a dead instance running.
     */
    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        if (stopped) {
            throw new IllegalStateException("cqflux cannot start again after its stop: the stop disposed " + cqflux
                    + " and closed its peers; create a new application context instead");
        }
        List<Mono<CqfluxPeer.State>> firsts = new ArrayList<>();
        try {
            for (CqfluxPeer p : peers.all()) {
                p.link().start();
                firsts.add(p.states().filter(s -> s != CqfluxPeer.State.CONNECTING).next());
            }
        } catch (RuntimeException e) {
            // Not running: the peers started so far are closed, and the context's start fails.
            for (CqfluxPeer p : peers.all()) {
                p.link().close().subscribe(null, x -> LOG.warn("cqflux: closing peer '" + p.name() + "' failed", x));
            }
            throw e;
        }
        running = true;
        if (firsts.isEmpty()) {
            return;
        }
        // Bounded: a peer that is down does not stop the application; readiness and health say it.
        try {
            Flux.merge(firsts).then().timeout(startWait.plusSeconds(1)).block();
        } catch (RuntimeException e) {
            LOG.warn("cqflux: peers still connecting after " + startWait + ": " + peers);
        }
        for (CqfluxPeer p : peers.all()) {
            if (!p.isAvailable()) {
                LOG.warn("cqflux peer '" + p.name() + "' at " + p.address() + " is " + p.state() + " at start: "
                        + p.details().getOrDefault("error", ""));
            }
        }
    }

    @Override
    public synchronized void stop() {
        if (!running) {
            return;
        }
        running = false;
        stopped = true;
        long start = System.nanoTime();
        long deadline = start + shutdownTimeout.toNanos();
        int requests = 0;
        if (gate != null) {
            gate.close(); // closed by its own, earlier, stop; here too when this one is called alone
            requests = gate.active();
            // A request that never ends (an SSE stream, a WebSocket, a long poll) must not take the
            // whole budget: the drain and the orderly close (goodbyes, so that peers see CLOSED,
            // not LOST) keep a quarter of it, at least 1 s or half of it, whichever is less.
            long budget = shutdownTimeout.toNanos();
            long kept = Math.max(budget / 4, Math.min(Duration.ofSeconds(1).toNanos(), budget / 2));
            long requestDeadline = deadline - kept;
            if (!awaitZero(gate::active, requestDeadline)) {
                LOG.warn("cqflux: " + gate.active() + " requests still in progress after "
                        + Duration.ofNanos(requestDeadline - start) + " of cqflux.shutdown-timeout " + shutdownTimeout
                        + "; draining and closing the peers under them with the " + Duration.ofNanos(kept) + " left");
            } else if (requests > 0) {
                LOG.info("cqflux: waited for " + requests + " requests in progress");
            }
        }
        int before = peers.inFlight();
        if (!awaitZero(peers::inFlight, deadline)) {
            LOG.warn("cqflux: " + peers.inFlight() + " operations still in flight after " + shutdownTimeout
                    + "; closing fails them");
        } else if (before > 0) {
            LOG.info("cqflux: drained " + before + " in-flight operations");
        }
        List<Mono<Void>> closes = new ArrayList<>();
        for (CqfluxPeer p : peers.all()) {
            closes.add(p.link().close());
        }
        try {
            Mono.when(closes).timeout(remaining(deadline)).block();
        } catch (RuntimeException e) {
            LOG.warn("cqflux: peers did not close within the shutdown budget: " + e);
        }
        try {
            cqflux.disposeNow(remaining(deadline));
        } catch (RuntimeException e) {
            LOG.warn("cqflux: " + e.getMessage());
        }
    }

    /**
     * Polls {@code count} until it is zero or the deadline passes.
     *
     * @return whether it reached zero
     */
    private static boolean awaitZero(java.util.function.IntSupplier count, long deadline) {
        while (count.getAsInt() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(DRAIN_POLL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return count.getAsInt() == 0;
    }

    private static Duration remaining(long deadline) {
        return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
