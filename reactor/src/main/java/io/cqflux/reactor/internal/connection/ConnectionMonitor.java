package io.cqflux.reactor.internal.connection;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.op.Emissions;
import io.cqflux.reactor.internal.resources.Instrumentation;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * What one connection shows to whoever watches it: its events ({@link #events()}, replayed to a
 * late subscriber), the hot stream of its completions, whether its listeners were told it opened
 * and the state of their notices, the mirrors of its parts' metrics and test probes, and what its
 * release still waits for (for a close or shutdown that ran out of time). It reads the parts it
 * watches through their narrow methods and changes none of them; the lifecycle
 * ({@link ConnectionCore}) decides what is emitted and when.
 */
public final class ConnectionMonitor {
    private final ConnectionCore core;
    private final EventLoop loop;
    private final SendQueue sendQueue;
    private final CompletionDispatch dispatch;
    private final Deadlines deadlines;
    private final KeepAlive keepAlive;
    private final Goodbye goodbye;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    /** Established and reported opened: a listener added later is told of it ({@link Instrumentation#add}). */
    private volatile boolean announced;
    /**
     * Per added listener ({@link CqfluxListener}; the key is {@link Instrumentation}'s
     * registration, compared by identity), the state of its opened/closed notices for this
     * connection.
     */
    public final Map<Object, AtomicInteger> notices = new ConcurrentHashMap<>();

    ConnectionMonitor(ConnectionCore core, SendQueue sendQueue, CompletionDispatch dispatch, Deadlines deadlines,
                      KeepAlive keepAlive, Goodbye goodbye) {
        this.core = core;
        this.loop = core.loop;
        this.goodbye = goodbye;
        this.sendQueue = sendQueue;
        this.dispatch = dispatch;
        this.deadlines = deadlines;
        this.keepAlive = keepAlive;
    }

    /** Loop thread: the connection is established; set before its listeners hear of it. */
    void announce() {
        announced = true;
    }

    /** Emits a lifecycle event on {@link #events()}. */
    void emit(ConnectionEvent e) {
        Emissions.guarded(() -> events.tryEmitNext(e));
    }

    /** Completes {@link #events()}: the native connection is freed. */
    void completeEvents() {
        Emissions.guarded(events::tryEmitComplete);
    }

    /** {@return the connection's lifecycle events, replayed to a late subscriber} Any thread. */
    public Flux<ConnectionEvent> events() {
        return events.asFlux();
    }

    /** {@return whether the connection was established and its listeners told so} Any thread. */
    public boolean announced() {
        return announced;
    }

    /** {@return the hot stream of this connection's completions, for monitoring} Any thread. */
    public Flux<CompletionRecord> completions() {
        return dispatch.completions();
    }

    /** {@return the subscribers of {@link #completions()} now (diagnostics, tests)} Any thread. */
    public int monitors() {
        return dispatch.monitors();
    }

    /** {@return the send credits the connection may hold at once} Any thread. */
    public int creditLimit() {
        return sendQueue.creditLimit();
    }

    /** {@return the operations waiting for a send credit} Any thread. */
    public int waitingOps() {
        return sendQueue.waitingOps();
    }

    /** {@return the operations in flight} Any thread. */
    public int inFlightOps() {
        return sendQueue.inFlightOps();
    }

    /** {@return the most send credits ever held at once} Any thread. */
    public int maxInFlight() {
        return sendQueue.maxInFlight();
    }

    /** {@return the operations refused because the pending limit was reached} Any thread. */
    public long rejections() {
        return sendQueue.rejections();
    }

    /** {@return completions whose context matched nothing posted} Any thread. */
    public long staleCompletions() {
        return dispatch.staleCompletions();
    }

    /** {@return whether the operation deadline's timer is armed} Loop thread (tests). */
    public boolean operationDeadlineArmed() {
        return deadlines.operationTimerArmed();
    }

    /** {@return how many times the operation deadline's timer fired} Loop thread (tests). */
    public long operationDeadlineRuns() {
        return deadlines.operationTimerRuns();
    }

    /** {@return whether the keep-alive's timer is armed} Loop thread (tests). */
    public boolean keepAliveArmed() {
        return keepAlive.armed();
    }

    /** {@return the keep-alive probes this connection posted} Any thread. */
    public long keepAliveProbes() {
        return keepAlive.probes();
    }

    /**
     * {@return what the release of this connection still waits for, for the error of
     * {@link RdmaConnection#disposeNow}: the close task not run yet (its loop busy or blocked), the
     * goodbye write (waiting for a send credit, or posted and not completed: bounded by
     * {@link Goodbye#boundMillis}), or the teardown after it on the loop}; any thread, a snapshot
     * that the loop may have moved past already
     */
    public String releasePending() {
        State s = core.state();
        if (s.compareTo(State.ENDED) < 0) {
            return "the native connection is not freed yet: its loop " + loop.name() + " has not run the close task"
                    + " (it is busy or blocked)";
        }
        if (s == State.ENDED) {
            String g = goodbye.describePending();
            if (g != null) {
                return g;
            }
            return "the close task ran; its loop " + loop.name() + " has not finished the teardown (failing the queued"
                    + " operations, freeing the native connection): it is busy or blocked";
        }
        return "the native connection is freed; its loop " + loop.name() + " is running the last releases";
    }
}
