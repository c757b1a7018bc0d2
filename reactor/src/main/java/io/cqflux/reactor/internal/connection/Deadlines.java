package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopTimer;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One connection's deadlines, each one timer of its loop's heap ({@link EventLoop#schedule}),
 * armed only while something is due: a posted operation without a completion for
 * {@code operationTimeout} ends the connection LOST (the peer stopped answering; fi_cq(3) and
 * ibv_poll_cq(3) promise no completion otherwise); an ENDING connection whose terminal event does
 * not come within the connect timeout ends LOST (or CLOSED, when the peer said goodbye); a
 * connection not established within the connect timeout ends UNREACHABLE.
 *
 * <p>The operation deadline costs a post one field test and a completion nothing: the first post
 * while no timer is armed arms one for a full timeout; when it fires it finds the oldest
 * operation in flight, ends the connection if that one is past the timeout, re-arms for the
 * moment it will be, or arms nothing when no operation is in flight. So a connection with nothing
 * in flight holds at most one timer, for at most one timeout after its last post, and then none;
 * a busy one fires once per timeout. Loop thread only, except {@link #stop()}.
 */
final class Deadlines {
    private final ConnectionCore core;
    private final EventLoop loop;
    private final SendQueue sendQueue;
    private final PeerControl control;
    private final ConnectionConfig config;
    private final String description;
    private final long operationTimeoutNanos;
    /** The connect timeout's timer (CONNECTING) or the end's (ENDING); null when none is armed. */
    private LoopTimer.Timeout lifecycleTimer;
    /** The operation deadline's timer; null while none is armed. */
    private LoopTimer.Timeout operationTimer;
    /** The timers fired or re-armed for the operation deadline (tests). */
    private long operationTimerRuns;
    private volatile boolean stopped;

    Deadlines(ConnectionCore core, SendQueue sendQueue, PeerControl control, long operationTimeoutNanos) {
        this.core = core;
        this.loop = core.loop;
        this.sendQueue = sendQueue;
        this.control = control;
        this.config = core.config;
        this.description = core.description;
        this.operationTimeoutNanos = operationTimeoutNanos;
    }

    /** Loop thread: the connection starts its handshake now; it must be established within the connect timeout. */
    void start() {
        lifecycleTimer = arm(config.timeout().toNanos(), this::connectTimeout);
    }

    /** Loop thread: the connection is established; the connect timeout no longer applies. */
    void established() {
        cancel(lifecycleTimer);
        lifecycleTimer = null;
    }

    /** Loop thread: the connection became ENDING; its verdict is due within the connect timeout. */
    void ending() {
        cancel(operationTimer);
        operationTimer = null;
        cancel(lifecycleTimer);
        lifecycleTimer = arm(config.timeout().toNanos(), this::endingTimeout);
    }

    /**
     * Loop thread: an operation was posted; arms the operation deadline if none is armed. On the
     * hot path: one field test when a timer is armed already.
     */
    void posted() {
        if (operationTimer == null && !stopped) {
            operationTimer = arm(operationTimeoutNanos, this::operationDeadline);
        }
    }

    /** The connection ended: no more checks. Any thread (off the loop, once it is gone, its heap is dropped with it). */
    void stop() {
        stopped = true;
        if (loop.inEventLoop()) {
            cancel(lifecycleTimer);
            cancel(operationTimer);
        }
        lifecycleTimer = null;
        operationTimer = null;
    }

    /** {@return whether the operation deadline's timer is armed} Loop thread (tests). */
    boolean operationTimerArmed() {
        return operationTimer != null;
    }

    /** {@return how many times the operation deadline's timer fired} Loop thread (tests). */
    long operationTimerRuns() {
        return operationTimerRuns;
    }

    private LoopTimer.Timeout arm(long delayNanos, Runnable task) {
        return loop.schedule(Duration.ofNanos(Math.clamp(delayNanos, 0, LoopTimer.MAX_DELAY_NANOS)), task);
    }

    private static void cancel(LoopTimer.Timeout t) {
        if (t != null) {
            t.cancel();
        }
    }

    private void connectTimeout() {
        lifecycleTimer = null;
        if (stopped || core.state() != State.CONNECTING) {
            return;
        }
        // A server-side connection whose client vanished mid-handshake would wait forever.
        core.end(new ConnectionException(ConnectionEvent.UNREACHABLE, "connection " + description + " was not"
                + " established within " + config.timeout().toMillis() + " ms"), ConnectionEvent.UNREACHABLE);
    }

    private void endingTimeout() {
        lifecycleTimer = null;
        if (stopped || core.state() != State.ENDING) {
            return;
        }
        if (control.enabled() && control.peerSaidGoodbye()) {
            core.end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                    + " closed by the peer"), ConnectionEvent.CLOSED);
        } else {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: its"
                    + " operations were flushed and no end was reported within " + config.timeout().toMillis()
                    + " ms"), ConnectionEvent.LOST);
        }
    }

    private void operationDeadline() {
        operationTimer = null;
        operationTimerRuns++;
        if (stopped || core.state() != State.ESTABLISHED) {
            return; // ENDING has its own deadline; an ended connection none
        }
        long longest = sendQueue.longestInFlight(System.nanoTime());
        if (longest > operationTimeoutNanos) {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: an operation"
                    + " posted " + TimeUnit.NANOSECONDS.toMillis(longest) + " ms ago has no completion"
                    + " (operationTimeout " + TimeUnit.NANOSECONDS.toMillis(operationTimeoutNanos)
                    + " ms): the peer stopped answering"), ConnectionEvent.LOST);
            return;
        }
        if (longest >= 0) {
            // The oldest operation reaches the timeout then; a millisecond later it is past it.
            operationTimer = arm(operationTimeoutNanos - longest + TimeUnit.MILLISECONDS.toNanos(1),
                    this::operationDeadline);
        }
    }
}
