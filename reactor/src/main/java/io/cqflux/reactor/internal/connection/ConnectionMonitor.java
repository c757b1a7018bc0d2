package io.cqflux.reactor.internal.connection;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.reactor.CqfluxListener;
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
 * and the state of their notices, and the mirrors of its parts' metrics and test probes. It reads
 * the parts it watches through their narrow methods and changes none of them; the lifecycle
 * ({@link ConnectionCore}) decides what is emitted and when.
 */
public final class ConnectionMonitor {
    private final SendQueue sendQueue;
    private final CompletionDispatch dispatch;
    private final Deadlines deadlines;
    private final KeepAlive keepAlive;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    /** Established and reported opened: a listener added later is told of it ({@link Instrumentation#add}). */
    private volatile boolean announced;
    /**
     * Per added listener ({@link CqfluxListener}; the key is {@link Instrumentation}'s
     * registration, compared by identity), the state of its opened/closed notices for this
     * connection.
     */
    public final Map<Object, AtomicInteger> notices = new ConcurrentHashMap<>();

    ConnectionMonitor(SendQueue sendQueue, CompletionDispatch dispatch, Deadlines deadlines, KeepAlive keepAlive) {
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
}
