package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.Registration;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A listening endpoint created by {@link Cqflux#bind}: accepts connections and hands each peer
 * the descriptors of the exposed regions in the accept's private data.
 *
 * <p><b>Lifetime and thread safety.</b> Thread-safe. {@link #close()} stops listening (idempotent,
 * non-blocking); connections already accepted live on. Closing the {@link Cqflux} closes it too.
 */
public final class RdmaServer implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(RdmaServer.class);

    private final Cqflux owner;
    private final EventLoop loop;
    private final Listener listener;
    private final byte[] acceptData;
    private final ConnectionConfig config;
    private final InetSocketAddress address;
    private final Sinks.Many<RdmaConnection> connections = Sinks.many().unicast().onBackpressureBuffer();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private Registration registration;
    private boolean closing;

    RdmaServer(Cqflux owner, EventLoop loop, Listener listener, byte[] acceptData, ConnectionConfig config) {
        this.owner = owner;
        this.loop = loop;
        this.listener = listener;
        this.acceptData = acceptData;
        this.config = config;
        this.address = listener.address();
    }

    /** Loop thread: starts watching the listener. */
    void start() {
        registration = loop.register(listener, this::onReadable, this::closeAsync);
        onReadable();
    }

    /** {@return the address it listens on, with the port actually bound} */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * {@return the established incoming connections; a single subscriber; connections that arrive
     * before it subscribes are buffered. Completes when the server closes}
     */
    public Flux<RdmaConnection> connections() {
        return connections.asFlux();
    }

    private void onReadable() {
        while (!closing) {
            ConnectionRequest req;
            try {
                req = listener.nextRequest();
            } catch (RuntimeException e) {
                // Its fd stays readable (level-triggered): keeping it registered would spin.
                LOG.warn("listener on " + address + " failed; the server closes", e);
                closeAsync();
                return;
            }
            if (req == null) {
                return;
            }
            Connection spi;
            try {
                spi = req.accept(acceptData);
            } catch (RuntimeException e) {
                LOG.warn("accepting a connection on " + address + " failed", e);
                continue;
            }
            EventLoop target = owner.nextLoop();
            ConnectionCore core = owner.adopt(target, spi, config);
            Runnable start = () -> core.start(this::emit,
                    e -> LOG.debug("incoming connection on " + address + " failed", e));
            if (target == loop) {
                start.run();
            } else {
                try {
                    target.execute(start);
                } catch (RuntimeException e) {
                    core.end(e, null);
                }
            }
        }
    }

    private void emit(RdmaConnection c) {
        // Connections established on different loops: serialise the emissions.
        synchronized (connections) {
            if (connections.tryEmitNext(c).isFailure()) {
                c.close();
            }
        }
    }

    /** {@return a Mono that closes the server and completes when the listener is freed} */
    public Mono<Void> disposeLater() {
        return Mono.defer(() -> Mono.fromFuture(closeAsync(), true));
    }

    CompletableFuture<Void> closeAsync() {
        Runnable task = () -> {
            if (closing) {
                return;
            }
            closing = true;
            try {
                if (registration != null) {
                    registration.close();
                }
            } finally {
                listener.close();
                synchronized (connections) {
                    connections.tryEmitComplete();
                }
                owner.forget(this);
                closed.complete(null);
            }
        };
        if (loop.inLoop()) {
            task.run();
        } else {
            try {
                loop.execute(task);
            } catch (RuntimeException e) {
                // Shutting down: never run beside the loop's last round; finish once it ended.
                loop.terminationFuture().whenComplete((v, t) -> task.run());
            }
        }
        return closed;
    }

    /** Stops listening; idempotent, non-blocking. */
    @Override
    public void close() {
        closeAsync();
    }

    @Override
    public String toString() {
        return "RdmaServer[" + address + "]";
    }
}
