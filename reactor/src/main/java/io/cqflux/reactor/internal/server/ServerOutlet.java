package io.cqflux.reactor.internal.server;

import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.internal.op.Emissions;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Where an {@link RdmaServer}'s established connections go: to the handler it was bound with, or
 * to {@link RdmaServer#connections()}'s one subscriber through a bounded buffer; a connection
 * nobody will claim is closed and logged at WARN, never kept.
 */
final class ServerOutlet {
    /** The server's logger: what happens to its connections is the server's to say. */
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);
    private static final ApiAccess API = ApiAccess.get();

    /** The server, as its messages name it. */
    private final String server;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;
    private final int bufferSize;
    private final Sinks.Many<RdmaConnection> connections;
    /** Whether {@link #flux()} was subscribed once: the connections have one subscriber, ever. */
    private final java.util.concurrent.atomic.AtomicBoolean claimed = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * @param server the server, as messages name it
     * @param handler where every connection goes, or null: to the buffer
     * @param bufferSize how many connections the buffer holds
     */
    ServerOutlet(String server, Function<? super RdmaConnection, ? extends Publisher<Void>> handler, int bufferSize) {
        this.server = server;
        this.handler = handler;
        this.bufferSize = bufferSize;
        // A bounded queue: when it is full, tryEmitNext fails (FAIL_OVERFLOW / FAIL_ZERO_SUBSCRIBER)
        // and the newcomer is closed instead of piling up.
        this.connections = Sinks.many().unicast().onBackpressureBuffer(new ArrayBlockingQueue<>(bufferSize));
    }

    /** {@return whether a handler takes every connection} */
    boolean hasHandler() {
        return handler != null;
    }

    /** {@return the buffered connections, for one subscriber; those it cancels with are closed} */
    Flux<RdmaConnection> flux() {
        // A later subscriber is refused here, naming the server, rather than by the unicast sink's
        // own message, which names neither it nor connections().
        return Flux.defer(() -> claimed.compareAndSet(false, true)
                // The sink discards what it still buffers when its subscriber cancels: close those.
                ? connections.asFlux().doOnDiscard(RdmaConnection.class,
                        c -> refuse(c, "the connections() subscriber cancelled with it still buffered"))
                : Flux.error(new IllegalStateException(server + ": connections() takes one subscriber, and it had"
                        + " one already (share it, e.g. with publish(), to hand the connections to several)")));
    }

    /** Loop thread of the connection: an incoming connection is established. */
    void emit(RdmaConnection c) {
        if (handler != null) {
            handle(c);
            return;
        }
        // Connections established on different loops: serialise the emissions. A subscriber that
        // throws from onNext had the connection handed to it: delivered (OK), not refused.
        Sinks.EmitResult r = Emissions.guarded(() -> {
            synchronized (connections) {
                return connections.tryEmitNext(c);
            }
        });
        if (r.isFailure()) {
            refuse(c, switch (r) {
                case FAIL_OVERFLOW, FAIL_ZERO_SUBSCRIBER -> "connections() already buffers " + bufferSize
                        + " unclaimed connections (Cqflux.Builder.acceptBufferSize)";
                case FAIL_CANCELLED -> "the connections() subscriber cancelled: nobody will claim it";
                case FAIL_TERMINATED -> "the server is disposed";
                default -> "connections() refused it (" + r + ")";
            });
        }
    }

    /** Completes the buffered stream: the server closed. A subscriber that throws from onComplete is dropped. */
    void complete() {
        Emissions.guarded(() -> {
            synchronized (connections) {
                return connections.tryEmitComplete();
            }
        });
    }

    /**
     * Hands a connection to the handler and closes it once the handler's publisher terminates;
     * cancels the handler's subscription once the connection is released (peer closed, lost).
     */
    private void handle(RdmaConnection c) {
        Publisher<Void> p;
        try {
            p = Objects.requireNonNull(handler.apply(c), "the handler returned null");
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("the handler of " + server + " threw for " + c + "; the connection is closed", t);
            c.dispose();
            return;
        }
        Disposable d = Flux.from(p).subscribe(null, e -> {
            LOG.warn("the handler of " + server + " failed for " + c + "; the connection is closed", e);
            c.dispose();
        }, c::dispose);
        // Straight on the release's future, not through onDispose(): a Mono over it and its
        // subscription cost the server's loop more than the callback, for every connection.
        API.core(c).closed.whenComplete((v, t) -> {
            try {
                d.dispose();
            } catch (Throwable e) { // a handler whose cancel throws: logged, as Reactor would drop it
                Exceptions.throwIfJvmFatal(e);
                LOG.warn("cancelling the handler of " + server + " for " + c + " failed", e);
            }
        });
    }

    void refuse(RdmaConnection c, String reason) {
        LOG.warn("closing incoming connection " + c.description() + " on " + server + ": " + reason);
        c.dispose();
    }
}
