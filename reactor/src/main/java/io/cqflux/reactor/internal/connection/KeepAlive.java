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
 * How: one timer of the loop's heap per connection, every interval. Every completion of the
 * connection (an operation's, a receive's, a control write's) counts as life: the dispatch bumps
 * a plain counter, nothing more, so a busy connection pays one increment per completion and its
 * timer finds the counter moved and probes nothing. A tick that finds it unmoved posts a probe if
 * none is in flight: an 8-byte RDMA read of the peer's credit word (PeerControl). On rpma/verbs
 * the peer's NIC answers it; on fabric/tcp the peer's own event loop does (the provider makes
 * progress there), so a peer loop blocked for about `misses` intervals ends the connection too.
 * The probe's completion is itself life. Only unanswered probes count: a tick that finds no life
 * while the probe is still outstanding is a miss, and after `misses` of them in a row the
 * connection ends LOST, naming the keep-alive. Quiet alone is no miss, so misses = 1 does not end
 * an idle healthy connection. A silent peer is so found within (misses + 1) x interval of its
 * last sign of life; a live idle one costs one read every other interval.
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
    /** Completions of the connection, in total: life. A plain field, loop thread only. */
    private long life;
    /** {@link #life} at the previous tick. */
    private long lifeAtTick;
    /** Ticks in a row that found no life while a probe was outstanding: probes unanswered. */
    private int missed;
    private boolean probeInFlight;
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
            lifeAtTick = life;
            arm();
        }
    }

    /** Loop thread, per completion of the connection: a sign of life. */
    void life() {
        life++;
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

    private void arm() {
        timer = loop.schedule(Duration.ofNanos(intervalNanos), this::tick);
    }

    private void tick() {
        timer = null;
        if (stopped || core.state() != State.ESTABLISHED) {
            return;
        }
        if (core.violations.checkControlWords()) {
            return; // the peer wrote what no cqflux peer can: it ended
        }
        if (life != lifeAtTick) {
            lifeAtTick = life;
            missed = 0;
            arm();
            return;
        }
        if (sendQueue.longestInFlight(System.nanoTime()) >= 0) {
            // Operations in flight: a probe would queue behind them, so their silence says
            // nothing; the operation deadline (Deadlines) judges them.
            missed = 0;
            arm();
            return;
        }
        if (probeInFlight && ++missed >= misses) {
            long silentMillis = TimeUnit.NANOSECONDS.toMillis(intervalNanos * missed);
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: the"
                    + " keep-alive had no sign of life from the peer (no completion, no answer to its probe) for "
                    + missed + " intervals of " + TimeUnit.NANOSECONDS.toMillis(intervalNanos) + " ms (~"
                    + silentMillis + " ms): the peer or the path to it is gone"), ConnectionEvent.LOST);
            return;
        }
        if (!probeInFlight) {
            missed = 0;
            probe();
        }
        if (core.state() == State.ESTABLISHED) {
            arm();
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
            probes++; // NOSONAR: written by the loop thread only
        }
    }
}
