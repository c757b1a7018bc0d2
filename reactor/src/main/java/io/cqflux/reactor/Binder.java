package io.cqflux.reactor;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.op.LoopSafeMono;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Binds a server for a {@link Cqflux}: the listener comes up on the instance's first loop, and a
 * server that no subscriber takes is disposed. Package-private: {@link Cqflux#bind} is the API.
 */
final class Binder {

    private Binder() {
    }

    static Mono<RdmaServer> bind(Cqflux owner, InetSocketAddress address,
                                 Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
                                 Function<byte[], AcceptDecision> rawAccept, List<Region> regionList,
                                 AcceptOptions options) {
        Objects.requireNonNull(address, "address");
        // A server that comes up after its subscriber cancelled is discarded by Mono.create,
        // never handed to anyone: it is disposed then (on the loop, in the task that started it,
        // so it accepts nothing), rather than left listening and accepting until this instance is
        // disposed. listen()'s "cancelling the Flux stops listening" rests on it too.
        return LoopSafeMono.of(Mono.<RdmaServer>create(sink -> {
            try {
                owner.checkOpen();
                // Every accept carries its own hello (its connection's control words); encode
                // one now so that a hello that cannot fit fails the bind, not every accept.
                if (rawAccept == null) {
                    owner.factory.checkHelloFits(regionList, owner.transport.maxAcceptPrivateData());
                }
                // A shared receive pool's chunk too large fails the bind, not its first accept.
                RdmaServer.sharedReceiveChunk(options, owner.config, rawAccept != null, owner.limits().receiveBufferSize());
                // Keys scoped to their connection that the transport cannot give fail the bind.
                RdmaServer.checkScopedKeys(options, owner.transport);
                EventLoop loop = owner.firstLoop();
                Runnable task = () -> {
                    loop.noteSetup("cqflux.bind"); // the library's own work: not a blocked-loop WARN
                    if (owner.closing.get()) {
                        // A hand-over that the loop dropped in its shutdown runs after it ended.
                        loop.noteOperation("cqflux.bind"); // subscriber code: reported if it blocks
                        sink.error(new ResourceClosedException("cqflux is closed: cannot bind " + address));
                        return;
                    }
                    Listener listener;
                    try {
                        listener = owner.transport.listen(address, owner.config);
                    } catch (RuntimeException e) {
                        loop.noteOperation("cqflux.bind");
                        sink.error(e);
                        return;
                    }
                    RdmaServer server = new RdmaServer(owner, loop, listener, regionList, owner.config, handler,
                            rawAccept, owner.acceptBufferSize, options);
                    if (!owner.keep(server)) { // the shutdown may have closed the servers already
                        server.dispose();
                        loop.noteOperation("cqflux.bind");
                        sink.error(new ResourceClosedException("cqflux is closed: cannot bind " + address));
                        return;
                    }
                    try {
                        server.start();
                    } catch (RuntimeException e) {
                        server.dispose();
                        loop.noteOperation("cqflux.bind");
                        sink.error(e);
                        return;
                    }
                    loop.noteOperation("cqflux.bind"); // the subscriber's onNext runs here
                    sink.success(server);
                };
                loop.executeOrAfterTermination(task);
            } catch (RuntimeException e) {
                sink.error(e);
            }
        }).doOnDiscard(RdmaServer.class, RdmaServer::dispose), RdmaServer.class, RdmaServer::dispose);
    }
}
