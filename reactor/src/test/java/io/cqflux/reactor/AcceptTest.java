package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * Where accepted connections go: to a handler given to {@link Cqflux#bind(InetSocketAddress,
 * java.util.function.Function, Region...)}, or through the bounded buffer of
 * {@link RdmaServer#connections()}; over libfabric's tcp provider on loopback.
 */
class AcceptTest {
    static final Duration T = Duration.ofSeconds(15);
    static final InetAddress LO = InetAddress.getLoopbackAddress();

    Arena arena;
    Cqflux server;
    Cqflux client;
    Region exposed;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).acceptBufferSize(2).build();
        client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).build();
        exposed = server.register(arena.allocate(4096, 64), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
    }

    @AfterEach
    void tearDown() {
        client.disposeNow(T);
        server.disposeNow(T);
        arena.close();
    }

    InetSocketAddress any() {
        return new InetSocketAddress(LO, 0);
    }

    /**
     * {@return "closed" once a client connection to {@code srv} was closed by the server: either it
     * was established and then ended, or the server's close beat the client's establishment}
     */
    Mono<String> connectAndAwaitClose(RdmaServer srv) {
        return client.connect(srv.address())
                .flatMap(c -> c.onDispose().thenReturn("closed"))
                .onErrorResume(ConnectionException.class, e -> Mono.just("closed"));
    }

    /** Waits until the server side holds {@code n} connections (the refused ones are freed on its loop). */
    void awaitServerConnections(int n) {
        StepVerifier.create(Mono.fromCallable(server::openConnections).filter(x -> x == n)
                        .repeatWhenEmpty(500, f -> f.delayElements(Duration.ofMillis(10))))
                .expectNext(n).expectComplete().verify(T);
    }

    // ------------------------------------------------------------------ cancelled before the server is up

    /**
     * {@code listen}: "cancelling the Flux stops listening"; that holds for a cancel that comes
     * before the bind is done too, and a {@code bind} cancelled that early leaves no listener
     * either (a connect does the same with its connection). They kept listening, and accepting,
     * until the instance was disposed.
     */
    @Test
    void listenOrBind_cancelledBeforeTheListenerIsUp_stopsListening_andLeavesNoServer() {
        CompletableFuture<Void> held = new CompletableFuture<>();
        CompletableFuture<Void> release = new CompletableFuture<>();
        // Holds the loop that binds (a listener's loop is always the first), so that both
        // cancels come before the listener exists.
        server.firstLoop().execute(() -> {
            held.complete(null);
            release.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).exceptionally(e -> null).join();
        });
        held.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        server.listen(any(), exposed).subscribe().dispose();
        server.bind(any(), exposed).subscribe().dispose();
        release.complete(null);
        // The two bind tasks ran before this one, queued after them on the same loop: read the
        // count once they did (0 before they ran proves nothing), then until their listeners'
        // closes, which fabric/tcp runs on the instance's close thread, let them go.
        CompletableFuture<Integer> afterBinds = new CompletableFuture<>();
        server.firstLoop().execute(() -> afterBinds.complete(server.openServers()));
        afterBinds.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        assertTrue(FaultRig.await(() -> server.openServers() == 0, T),
                () -> "servers left listening after their bind was cancelled: " + server.openServers());
    }

    // ------------------------------------------------------------------ handler

    @Test
    void handlerBind_handsEachConnectionToTheHandler_andClosesItWhenThePublisherCompletes() {
        Sinks.Empty<Void> finish = Sinks.empty();
        CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
        RdmaServer srv = server.bind(any(), c -> {
            accepted.complete(c);
            return finish.asMono();
        }, exposed).block(T);
        assertNotNull(srv);
        RdmaConnection conn = client.connect(srv.address()).block(T);
        assertNotNull(conn);
        RdmaConnection peer = accepted.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        assertFalse(peer.isDisposed());
        assertEquals(1, conn.remoteRegions().size(), "the client sees the exposed region");
        finish.tryEmitEmpty();
        StepVerifier.create(peer.onDispose()).expectComplete().verify(T);
        StepVerifier.create(conn.onDispose()).expectComplete().verify(T);
    }

    @Test
    void handlerBind_whenThePublisherFails_closesTheConnection() {
        RdmaServer srv = server.bind(any(), c -> Mono.error(new IllegalStateException("handler failed on purpose")),
                exposed).block(T);
        StepVerifier.create(connectAndAwaitClose(srv)).expectNext("closed").expectComplete().verify(T);
        awaitServerConnections(0);
    }

    @Test
    void handlerBind_whenTheHandlerThrows_closesTheConnection() {
        RdmaServer srv = server.bind(any(), c -> {
            throw new IllegalStateException("handler threw on purpose");
        }, exposed).block(T);
        StepVerifier.create(connectAndAwaitClose(srv)).expectNext("closed").expectComplete().verify(T);
        awaitServerConnections(0);
    }

    @Test
    void handlerBind_whenThePeerClosesFirst_cancelsTheHandlersSubscription() {
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        RdmaServer srv = server.bind(any(), c -> Mono.<Void>never().doOnCancel(() -> cancelled.complete(null)),
                exposed).block(T);
        RdmaConnection conn = client.connect(srv.address()).block(T);
        assertNotNull(conn);
        awaitServerConnections(1);
        conn.dispose();
        cancelled.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        awaitServerConnections(0);
    }

    @Test
    void handlerBind_connections_failsNamingTheHandler() {
        RdmaServer srv = server.bind(any(), c -> c.onDispose(), exposed).block(T);
        StepVerifier.create(srv.connections())
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof IllegalStateException, e.toString());
                    assertTrue(e.getMessage().contains("handler"), e.getMessage());
                })
                .verify(T);
    }

    // ------------------------------------------------------------------ bounded connections()

    @Test
    void connections_withoutSubscriber_buffersUpToTheLimit_andClosesTheNextArrival() {
        RdmaServer srv = server.bind(any(), exposed).block(T);
        RdmaConnection first = client.connect(srv.address()).block(T);
        RdmaConnection second = client.connect(srv.address()).block(T);
        assertNotNull(first);
        assertNotNull(second);
        awaitServerConnections(2);
        // The buffer holds 2: the third is closed by the server, never kept.
        StepVerifier.create(connectAndAwaitClose(srv)).expectNext("closed").expectComplete().verify(T);
        awaitServerConnections(2);
        assertFalse(first.isDisposed());
        assertFalse(second.isDisposed());
        // The buffered two are still claimable, then the stream completes with the server.
        srv.dispose();
        StepVerifier.create(srv.connections())
                .assertNext(c -> assertFalse(c.isDisposed()))
                .assertNext(c -> assertFalse(c.isDisposed()))
                .expectComplete().verify(T);
    }

    @Test
    void connections_afterTheSubscriberCancelled_closesBufferedAndLaterArrivals() {
        RdmaServer srv = server.bind(any(), exposed).block(T);
        RdmaConnection first = client.connect(srv.address()).block(T);
        RdmaConnection second = client.connect(srv.address()).block(T);
        assertNotNull(first);
        assertNotNull(second);
        awaitServerConnections(2);
        // Claims the first; take(1) cancels with the second still buffered: it is closed.
        AtomicReference<RdmaConnection> claimed = new AtomicReference<>();
        StepVerifier.create(srv.connections().take(1)).consumeNextWith(claimed::set).expectComplete().verify(T);
        StepVerifier.create(second.onDispose()).expectComplete().verify(T);
        awaitServerConnections(1);
        assertFalse(claimed.get().isDisposed());
        assertFalse(first.isDisposed());
        // Nobody will ever claim a later arrival: it is closed too.
        StepVerifier.create(connectAndAwaitClose(srv)).expectNext("closed").expectComplete().verify(T);
        awaitServerConnections(1);
    }

    @Test
    void connections_withASubscriber_deliversMoreThanTheBufferOverTime() {
        RdmaServer srv = server.bind(any(), exposed).block(T);
        CompletableFuture<List<RdmaConnection>> got = srv.connections().take(5).collectList().toFuture();
        for (int i = 0; i < 5; i++) {
            assertNotNull(client.connect(srv.address()).block(T));
        }
        List<RdmaConnection> all = got.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
        assertEquals(5, all.size());
        assertTrue(all.stream().noneMatch(RdmaConnection::isDisposed));
    }
}
