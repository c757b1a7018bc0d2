package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.spi.Connection;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopTimer;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/*
 * Design: the keep-alive of one established connection to a cqflux peer.
 *
 * Why: the operation deadline only judges operations in flight; a connection with nothing in
 * flight (a receive-only side, a client between requests) would stay ESTABLISHED across a silent
 * outage (a partition, a peer host that froze) until its next write, and a pool built on it would
 * report CONNECTED throughout.
 *
 * How: one timer of the loop's heap per connection. Every completion of the connection (an
 * operation's, a receive's, a control write's, the probe's own) is life: the dispatch stores the
 * loop's clock of the unit it runs in (EventLoop#unitClock: no clock read while the blocked-loop
 * detection is on), nothing more. A tick comes one interval after the last life it knows of: one
 * that finds life since then waits out the interval from that life and probes nothing, so a busy
 * connection probes nothing; one that finds a whole interval quiet posts a probe if none is in
 * flight: an 8-byte RDMA read of the peer's credit word (PeerControl). On rpma/verbs the peer's
 * NIC answers it; on fabric/tcp the peer's own event loop does (the provider makes progress
 * there), so a peer loop blocked for about `misses` intervals ends the connection too. Only
 * unanswered probes count: each interval that a probe stays outstanding with no life at all is a
 * miss, and after `misses` of them in a row the connection ends LOST, naming the keep-alive. Quiet
 * alone is no miss, so misses = 1 does not end an idle healthy connection. A silent peer is so
 * found within (misses + 1) x interval of its last sign of life, whatever that was: the probe
 * goes out one interval after it, and each miss takes one more. So a live idle connection costs
 * one read per interval: a tick counted from the last life, not on a fixed beat, is what keeps
 * the bound when that life was the previous probe's answer (on a fixed beat the tick after an
 * answer finds life, and the next probe waits one interval more).
 *
 * A tick that finds operations in flight resets the misses and probes nothing: a probe would
 * queue behind them, so their silence says nothing about the peer, and the operation deadline
 * judges them (an operationTimeout longer than misses x interval must hold).
 *
 * A probe whose post is refused (no send credit, the transport's queue full) is simply tried at
 * the next tick: a connection whose credits are all taken has operations in flight, which the
 * operation deadline judges.
 *
 * Peers whose hello does not say their control words are readable (a cqflux from before the
 * keep-alive, or a hello with no room for its flags: PeerHello) get no keep-alive either: the
 * probe's read would be refused and end a healthy connection.
 *
 * Peers without control words (raw private data: a peer not written with cqflux; or a hello that
 * names none) get no keep-alive at all: nothing may be sent that they did not ask for, and
 * without a probe an idle connection's silence says nothing about the peer.
 */

/**
 * The keep-alive of one connection (see the design comment at the top of this file). Loop thread,
 * except the volatile metric {@link #probes()} and {@link #stop()}.
 */
final class KeepAlive {
    private final ConnectionCore core;
    private final EventLoop loop;
    private final SendQueue sendQueue;
    private final PeerControl control;
    private final Connection conn;
    private final String description;
    private final long intervalNanos;
    private final int misses;
    /** The loop's clock ({@link EventLoop#unitClock}) at the connection's last completion: life. Loop thread only. */
    private long lastLife;
    /** Ticks in a row that found no life while a probe was outstanding: probes unanswered. */
    private int missed;
    private boolean probeInFlight;
    /** {@link #lastLife} when the outstanding probe was posted. */
    private long lifeAtProbe;
    /** Ticks were armed ({@link #established}): only then is life recorded. Loop thread only. */
    private boolean active;
    private LoopTimer.Timeout timer;
    private volatile boolean stopped;
    /** Probes posted, in total: a metric, written on the loop only. */
    private volatile long probes;

    /**
     * @param intervalNanos the interval, 0 for no keep-alive
     * @param misses intervals without life before the connection ends
     */
    KeepAlive(ConnectionCore core, SendQueue sendQueue, PeerControl control, long intervalNanos, int misses) {
        this.core = core;
        this.loop = core.loop;
        this.sendQueue = sendQueue;
        this.control = control;
        this.conn = core.conn;
        this.description = core.description;
        this.intervalNanos = intervalNanos;
        this.misses = misses;
    }

    /** Loop thread: the connection is established; ticks begin when the peer takes part and keep-alive is on. */
    void established() {
        if (intervalNanos > 0 && control.enabled() && control.peerReadable() && !stopped) {
            active = true;
            lastLife = loop.unitClock();
            arm(intervalNanos);
        }
    }

    /** Loop thread, per completion of the connection: a sign of life. */
    void life() {
        if (active) { // no keep-alive: no clock for nothing (a read per completion without the detection)
            lastLife = loop.unitClock();
        }
    }

    /** Loop thread: the probe's read completed (successfully or not: the dispatch judges an error). */
    void probeCompleted() {
        probeInFlight = false;
    }

    /** The connection ended or became ENDING. Any thread (off the loop once it is gone, its heap went with it). */
    void stop() {
        stopped = true;
        if (loop.inEventLoop() && timer != null) {
            timer.cancel();
        }
        timer = null;
    }

    /** {@return whether the tick timer is armed} Loop thread (tests). */
    boolean armed() {
        return timer != null;
    }

    /** {@return the probes posted so far} Any thread. */
    long probes() {
        return probes;
    }

    private void arm(long delayNanos) {
        timer = loop.schedule(Duration.ofNanos(delayNanos), this::tick);
    }

    private void tick() {
        timer = null;
        if (stopped || core.state() != State.ESTABLISHED) {
            return;
        }
        if (core.violations.checkControlWords()) {
            return; // the peer wrote what no cqflux peer can: it ended
        }
        long now = System.nanoTime();
        if (sendQueue.longestInFlight(now) >= 0) {
            // Operations in flight: a probe would queue behind them, so their silence says
            // nothing; the operation deadline (Deadlines) judges them.
            missed = 0;
            arm(intervalNanos);
            return;
        }
        if (probeInFlight) {
            if (lastLife != lifeAtProbe) {
                // Life since the probe went out: the peer is there; the probe's answer is awaited.
                lifeAtProbe = lastLife;
                missed = 0;
            } else if (++missed >= misses) {
                long silentMillis = TimeUnit.NANOSECONDS.toMillis(now - lastLife);
                core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: the"
                        + " keep-alive had no sign of life from the peer (no completion, no answer to its probe) for ~"
                        + silentMillis + " ms (" + missed + " unanswered " + (missed == 1 ? "interval" : "intervals")
                        + " of " + TimeUnit.NANOSECONDS.toMillis(intervalNanos) + " ms after a quiet one): the peer"
                        + " or the path to it is gone"), ConnectionEvent.LOST);
                return;
            }
            arm(intervalNanos);
            return;
        }
        missed = 0;
        long quiet = now - lastLife;
        if (quiet < intervalNanos - (intervalNanos >> 4)) {
            arm(intervalNanos - quiet); // one interval after the last life
            return;
        }
        // Quiet for (nearly) an interval: a tick armed when the previous probe went out comes a
        // round trip less than an interval after its answer, and waiting out that rest would take
        // a second timer per interval on every idle connection; a probe up to a sixteenth of an
        // interval early keeps the bound.
        probe();
        if (core.state() == State.ESTABLISHED) {
            arm(intervalNanos);
        }
    }

    private void probe() {
        SendQueue.Posted p;
        try {
            p = sendQueue.postControl(SendQueue.Internal.PROBE, ctx -> control.postProbe(conn, ctx));
        } catch (RuntimeException e) {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting the keep-alive probe failed", e), ConnectionEvent.LOST);
            return;
        }
        if (p == SendQueue.Posted.YES) {
            probeInFlight = true;
            lifeAtProbe = lastLife;
            probes++; // NOSONAR: written by the loop thread only
        }
    }
}
