package io.cqflux.reactor.internal.pool;

import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.internal.op.Emissions;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A {@link PeerPool}'s event stream: events are queued in the order of the state changes (the
 * pool queues them under its lock) and handed to the sink by one drainer at a time, outside that
 * lock, since Reactor sinks need serialized calls and a subscriber's code must not run under it.
 */
final class PoolEvents {
    private static final ApiAccess API = ApiAccess.get();
    /** Marks the end of the stream in the outbox: it completes the sink. */
    private static final PeerPoolEvent END = API.newPeerPoolEvent(PeerPoolEvent.Kind.CLOSED, null, -1, 0, null, null, null);

    private final InetSocketAddress address;
    private final Sinks.Many<PeerPoolEvent> sink = Sinks.many().replay().limit(PeerPool.EVENT_HISTORY);
    /** Events in order of the state changes; {@link #END} completes the sink. */
    private final Queue<PeerPoolEvent> outbox = new ConcurrentLinkedQueue<>();
    private final AtomicInteger draining = new AtomicInteger();

    PoolEvents(InetSocketAddress address) {
        this.address = address;
    }

    /** {@return the events as a hot Flux replaying the most recent {@link PeerPool#EVENT_HISTORY}} */
    Flux<PeerPoolEvent> flux() {
        return sink.asFlux();
    }

    /**
     * Queues an event of slot {@code slot} (-1: the whole pool); call under the pool's lock, then
     * {@link #drain()} after releasing it.
     */
    void emit(PeerPoolEvent.Kind kind, int slot, int attempt, Duration delay, Throwable cause, String conn) {
        outbox.add(API.newPeerPoolEvent(kind, address, slot, attempt, delay, cause, conn));
    }

    /** Queues the end of the stream, after the pool's last event; call under the pool's lock. */
    void complete() {
        outbox.add(END);
    }

    /** Hands queued events to the sink, one drainer at a time (Reactor sinks need serialized calls). */
    void drain() {
        if (draining.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            PeerPoolEvent e;
            while ((e = outbox.poll()) != null) {
                // Guarded: a subscriber's throw let out here would leave `draining` held, and the
                // pool's events stopped for good.
                if (e == END) {
                    Emissions.guarded(sink::tryEmitComplete);
                } else {
                    PeerPoolEvent next = e;
                    Emissions.guarded(() -> sink.tryEmitNext(next));
                }
            }
            missed = draining.addAndGet(-missed);
        } while (missed != 0);
    }
}
