package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;

/**
 * One connection's deadlines, checked by a periodic library-timer task handed to the loop: a
 * posted operation without a completion for {@code operationTimeout} ends the connection LOST
 * (the peer stopped answering; fi_cq(3) and ibv_poll_cq(3) promise no completion otherwise); an
 * ENDING connection whose terminal event does not come within the connect timeout ends LOST (or
 * CLOSED, when the peer said goodbye); a connection not established within the connect timeout
 * ends UNREACHABLE. The period is a quarter of the shorter bound, within [10 ms, 1 s].
 */
final class Deadlines {
    private final ConnectionCore core;
    private final SendQueue sendQueue;
    private final PeerControl control;
    private final ConnectionConfig config;
    private final String description;
    private final long operationTimeoutNanos;
    private long startedAt;
    /** {@code System.nanoTime()} when the connection became ENDING. */
    private long endingSince;
    private Disposable task;

    Deadlines(ConnectionCore core, SendQueue sendQueue, PeerControl control, long operationTimeoutNanos) {
        this.core = core;
        this.sendQueue = sendQueue;
        this.control = control;
        this.config = core.config;
        this.description = core.description;
        this.operationTimeoutNanos = operationTimeoutNanos;
    }

    /** Loop thread: the connection starts its handshake now; the checks begin. */
    void start() {
        startedAt = System.nanoTime();
        long period = Math.clamp(Math.min(operationTimeoutNanos, config.timeout().toNanos()) / 4,
                TimeUnit.MILLISECONDS.toNanos(10), TimeUnit.SECONDS.toNanos(1));
        task = LibraryTimer.schedulePeriodically(() -> core.runOnLoop(this::check),
                period, period, TimeUnit.NANOSECONDS);
    }

    /** Loop thread: the connection became ENDING; its verdict is due within the connect timeout. */
    void ending() {
        endingSince = System.nanoTime();
    }

    /** The connection ended: no more checks. */
    void stop() {
        if (task != null) {
            task.dispose();
        }
    }

    /** Loop thread, from the periodic task. */
    private void check() {
        long now = System.nanoTime();
        State state = core.state();
        if (state == State.ENDING && now - endingSince > config.timeout().toNanos()) {
            if (control.enabled() && control.peerSaidGoodbye()) {
                core.end(new ConnectionException(ConnectionEvent.CLOSED, "connection " + description
                        + " closed by the peer"), ConnectionEvent.CLOSED);
            } else {
                core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: its"
                        + " operations were flushed and no end was reported within " + config.timeout().toMillis()
                        + " ms"), ConnectionEvent.LOST);
            }
            return;
        }
        if (state == State.CONNECTING && now - startedAt > config.timeout().toNanos()) {
            // A server-side connection whose client vanished mid-handshake would wait forever.
            core.end(new ConnectionException(ConnectionEvent.UNREACHABLE, "connection " + description + " was not"
                    + " established within " + config.timeout().toMillis() + " ms"), ConnectionEvent.UNREACHABLE);
            return;
        }
        if (state != State.ESTABLISHED) {
            return;
        }
        long longest = sendQueue.longestInFlight(now);
        if (longest > operationTimeoutNanos) {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description + " lost: an operation"
                    + " posted " + TimeUnit.NANOSECONDS.toMillis(longest) + " ms ago has no completion"
                    + " (operationTimeout " + TimeUnit.NANOSECONDS.toMillis(operationTimeoutNanos)
                    + " ms): the peer stopped answering"), ConnectionEvent.LOST);
        }
    }
}
