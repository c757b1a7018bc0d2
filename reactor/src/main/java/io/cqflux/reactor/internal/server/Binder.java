package io.cqflux.reactor.internal.server;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Listener;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.AcceptDecision;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.op.LoopSafeMono;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Binds a server for a {@link Cqflux}: the listener comes up on the instance's first loop, and a
 * server that no subscriber takes is disposed. Internal: {@link Cqflux#bind} is the API.
 */
public final class Binder {
    private static final ApiAccess API = ApiAccess.get();

    private Binder() {
    }

    /**
     * {@return a cold Mono of a server bound to {@code address}: {@code Cqflux.bind}'s}
     *
     * @param owner the instance
     * @param address where to listen
     * @param handler where every connection goes, or null: to {@link RdmaServer#connections()}
     * @param rawAccept the accept function of a raw private data server, or null: a hello server
     * @param regionList the exposed regions
     * @param options the bind's options, or null: the defaults
     */
    public static Mono<RdmaServer> bind(Cqflux owner, InetSocketAddress address,
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
                API.checkOpen(owner);
                // Every accept carries its own hello (its connection's control words); encode
                // one now so that a hello that cannot fit fails the bind, not every accept.
                if (rawAccept == null) {
                    API.factory(owner).checkHelloFits(regionList, API.transport(owner).maxAcceptPrivateData());
                }
                // A shared receive pool's chunk too large fails the bind, not its first accept.
                ServerCore.sharedReceiveChunk(options, API.config(owner), rawAccept != null,
                        API.limits(owner).receiveBufferSize());
                // Keys scoped to their connection that the transport cannot give fail the bind.
                checkScopedKeys(options, API.transport(owner));
                EventLoop loop = API.firstLoop(owner);
                if (loop.endedOnFatalError()) {
                    // Servers listen on the first loop (LoopGroup#first): said why, not "shut down".
                    throw new ResourceClosedException("cannot bind " + address + ": the first event loop of this"
                            + " instance, " + loop.name() + ", where servers listen, ended on a fatal error that code"
                            + " running on it threw (the log names it); dispose the instance and build another");
                }
                Runnable task = () -> {
                    loop.noteSetup("cqflux.bind"); // the library's own work: not a blocked-loop WARN
                    if (owner.isDisposed()) {
                        // A hand-over that the loop dropped in its shutdown runs after it ended.
                        loop.noteOperation("cqflux.bind"); // subscriber code: reported if it blocks
                        sink.error(new ResourceClosedException("cqflux is closed: cannot bind " + address));
                        return;
                    }
                    Listener listener;
                    try {
                        listener = API.transport(owner).listen(address, API.config(owner));
                    } catch (RuntimeException e) {
                        loop.noteOperation("cqflux.bind");
                        sink.error(e);
                        return;
                    }
                    RdmaServer server = API.newServer(owner, loop, listener, regionList, handler, rawAccept,
                            options);
                    if (!API.keep(owner, server)) { // the shutdown may have closed the servers already
                        server.dispose();
                        loop.noteOperation("cqflux.bind");
                        sink.error(new ResourceClosedException("cqflux is closed: cannot bind " + address));
                        return;
                    }
                    try {
                        API.core(server).start();
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

    /**
     * Refuses, at the bind, keys scoped to their connection that the options require on a
     * transport that cannot scope them, naming the transport and why.
     *
     * @throws io.cqflux.core.UnsupportedCapabilityException when {@code options} require them and the
     *     transport cannot
     */
    static void checkScopedKeys(AcceptOptions options, io.cqflux.core.spi.Transport transport) {
        if (options == null || options.keyScoping() != AcceptOptions.KeyScoping.REQUIRED) {
            return; // not required
        }
        String why = transport.connectionScopedKeysRefusal();
        if (why != null) {
            throw new io.cqflux.core.UnsupportedCapabilityException(transport.name(),
                    io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS,
                    "AcceptOptions.withKeysScopedToConnection cannot be served: " + why);
        }
    }

    /**
     * {@return whether a server bound with {@code options} gives each accepted connection keys of
     * its own} The one decision (RdmaServer#keysScopedToConnection): never with raw private data
     * (nothing is registered for such a connection), not when turned off, and by default where
     * the transport scopes them by default (Transport#connectionScopedKeysDefaultRefusal: where it
     * can at a cost measured and bearable); a requirement the transport cannot meet failed the bind already
     * ({@link #checkScopedKeys}).
     *
     * @param raw whether the server accepts with raw private data
     */
    static boolean scopesKeys(AcceptOptions options, boolean raw, io.cqflux.core.spi.Transport transport) {
        if (raw) {
            return false;
        }
        return switch (options.keyScoping()) {
            case OFF -> false;
            case REQUIRED -> true;
            case WHERE_SUPPORTED -> transport.connectionScopedKeysDefaultRefusal() == null;
        };
    }
}
