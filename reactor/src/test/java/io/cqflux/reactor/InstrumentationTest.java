package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.QueueFullException;
import io.cqflux.epoll.LoopStats;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The hooks for metrics and debugging, over fabric/tcp on loopback: operation Monos are
 * Scannable with their kind's name and go through Mono.onAssembly; a CqfluxListener hears of
 * connections and of each operation's outcome; per-connection rejections; a subscriber callback
 * that blocks the loop is reported (WARN + LoopStats.blocked) and a fast one is not.
 */
class InstrumentationTest {
    private static final Duration T = FaultRig.T;

    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Logger loopLog = Logger.getLogger("io.cqflux.epoll.loop.EventLoop");
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue() && r.getMessage().contains("was blocked for")) {
                warnings.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void capture() {
        loopLog.addHandler(handler);
    }

    @AfterEach
    void release() {
        loopLog.removeHandler(handler);
        Hooks.resetOnEachOperator("cqflux-test");
    }

    /** Records what a listener hears, as "kind/outcome/error" and "opened"/"closed". */
    static final class Recorder implements CqfluxListener {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void connectionOpened(RdmaConnection connection) {
            events.add("opened " + connection.description());
        }

        @Override
        public void connectionClosed(RdmaConnection connection) {
            events.add("closed " + connection.description());
        }

        @Override
        public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                      String error, long nanos) {
            assertTrue(nanos >= 0, "nanos " + nanos);
            events.add(kind.tagValue() + "/" + outcome.tagValue() + "/" + error);
        }
    }

    @Test
    void operationMonos_areScannableWithTheirKindsName() {
        try (FaultRig rig = new FaultRig()) {
            RdmaConnection c = rig.conn;
            PeerRegion r = rig.remote();
            assertEquals("cqflux.write", Scannable.from(c.write(r, 0, rig.local, 0, 8)).name());
            assertEquals("cqflux.read", Scannable.from(c.read(rig.local, 0, r, 0, 8)).name());
            assertEquals("cqflux.durableWrite", Scannable.from(c.durableWrite(r, 0, rig.local, 0, 8)).name());
            assertEquals("cqflux.flush", Scannable.from(c.flush(r, 0, 8, FlushType.VISIBILITY)).name());
            assertEquals("cqflux.atomicWrite", Scannable.from(c.atomicWrite(r, 0, 1)).name());
            assertEquals("cqflux.send", Scannable.from(c.send(rig.local, 0, 8)).name());
            assertEquals("cqflux.sendWithImmediate", Scannable.from(c.sendWithImmediate(rig.local, 0, 8, 1)).name());
            assertEquals("cqflux.writeWithImmediate",
                    Scannable.from(c.writeWithImmediate(r, 0, rig.local, 0, 8, 1)).name());
            // Downstream operators find the name among their parents (what checkpoint and tap use).
            assertEquals("cqflux.write", Scannable.from(c.write(r, 0, rig.local, 0, 8).map(v -> v)).name());
            // The forms staged through the buffer pool carry the name of what they stage.
            assertEquals("cqflux.write", Scannable.from(c.write(r, 0, new byte[8])).name());
            assertEquals("cqflux.durableWrite",
                    Scannable.from(c.durableWrite(r, 0, java.nio.ByteBuffer.allocate(8))).name());
            assertEquals("cqflux.read", Scannable.from(c.read(r, 0, 8)).name());
            assertEquals("cqflux.send", Scannable.from(c.send(new byte[8])).name());
            for (OperationKind k : OperationKind.values()) {
                assertEquals("cqflux." + k.tagValue(), k.sequenceName());
            }
        }
    }

    @Test
    void onEachOperatorHook_seesTheOperationMonosAtAssembly() {
        try (FaultRig rig = new FaultRig()) {
            List<String> seen = new CopyOnWriteArrayList<>();
            Hooks.onEachOperator("cqflux-test", p -> {
                seen.add(Scannable.from(p).name());
                return p;
            });
            Mono<Void> read = rig.conn.read(rig.local, 0, rig.remote(), 0, 64);
            assertTrue(seen.contains("cqflux.read"), seen::toString);
            StepVerifier.create(read).verifyComplete();
        }
    }

    @Test
    void listener_hearsOfOpenConnectionsOutcomesAndTheEnd() {
        try (FaultRig rig = new FaultRig()) {
            Recorder rec = new Recorder();
            Disposable installed = rig.client.addListener(rec);
            assertEquals(List.of("opened " + rig.conn.description()), rec.events);

            StepVerifier.create(rig.conn.write(rig.remote(), 0, rig.local, 0, 64)).expectComplete().verify(T);
            StepVerifier.create(rig.conn.read(rig.local, 0, rig.remote(), 0, SIZE_TOO_BIG))
                    .expectError(IllegalArgumentException.class).verify(T);
            rig.conn.durableWrite(rig.remote(), 0, rig.local, 0, 64).subscribe(new BaseSubscriber<Void>() {
                @Override
                protected void hookOnSubscribe(Subscription s) {
                    s.cancel();
                }
            });
            assertEquals(List.of("opened " + rig.conn.description(), "write/success/none",
                    "read/error/IllegalArgumentException", "durableWrite/cancelled/none"), rec.events);

            rig.conn.disposeNow(T);
            assertEquals("closed " + rig.conn.description(), rec.events.getLast());

            installed.dispose();
            RdmaConnection another = rig.connectOne();
            StepVerifier.create(another.write(another.remoteRegion(0), 0, rig.local, 0, 8)).expectComplete().verify(T);
            assertEquals(5, rec.events.size(), rec.events::toString); // removed: nothing more
        }
    }

    @Test
    void operationStarted_seesTheSubscribersContext_andWhatItReturnsHearsTheEnd() {
        try (FaultRig rig = new FaultRig()) {
            List<String> events = new CopyOnWriteArrayList<>();
            // Two listeners (the composite): one answers with an object per operation, which
            // alone must hear of that operation's end; the other hears every end itself.
            rig.client.addListener(new CqfluxListener() {
                @Override
                public CqfluxListener operationStarted(RdmaConnection connection, OperationKind kind, long bytes,
                                                       reactor.util.context.ContextView context) {
                    String parent = context.getOrDefault("parent", "none");
                    events.add("started " + kind.tagValue() + "/" + bytes + " in " + parent);
                    return new CqfluxListener() {
                        @Override
                        public void operationFinished(RdmaConnection c, OperationKind k, OperationOutcome outcome,
                                                      String error, long nanos) {
                            events.add("ended " + k.tagValue() + "/" + outcome.tagValue() + " in " + parent);
                        }
                    };
                }

                @Override
                public void operationFinished(RdmaConnection connection, OperationKind kind,
                                              OperationOutcome outcome, String error, long nanos) {
                    events.add("the listener itself heard an end");
                }
            });
            Recorder rec = new Recorder();
            rig.client.addListener(rec);

            StepVerifier.create(rig.conn.write(rig.remote(), 0, rig.local, 0, 64)
                    .contextWrite(ctx -> ctx.put("parent", "request-1"))).expectComplete().verify(T);
            StepVerifier.create(rig.conn.durableWrite(rig.remote(), 0, new byte[100])
                    .contextWrite(ctx -> ctx.put("parent", "request-2"))).expectComplete().verify(T);
            StepVerifier.create(rig.conn.read(rig.remote(), 0, 16)).expectNextCount(1).expectComplete().verify(T);

            assertEquals(List.of("started write/64 in request-1", "ended write/success in request-1",
                    "started durableWrite/100 in request-2", "ended durableWrite/success in request-2",
                    "started read/16 in none", "ended read/success in none"), events);
            assertEquals(List.of("opened " + rig.conn.description(), "write/success/none",
                    "durableWrite/success/none", "read/success/none"), rec.events);
        }
    }

    @Test
    void connectionEndingWhileAListenerHearsItOpened_isReportedClosedAfterOpenedReturns() {
        try (FaultRig rig = new FaultRig()) {
            List<String> events = new CopyOnWriteArrayList<>();
            rig.client.addListener(new CqfluxListener() {
                @Override
                public void connectionOpened(RdmaConnection connection) {
                    // Told by addListener on this thread; the end is reported on the loop meanwhile.
                    events.add("opened>");
                    connection.disposeNow(T);
                    events.add("<opened");
                }

                @Override
                public void connectionClosed(RdmaConnection connection) {
                    events.add("closed");
                }

                @Override
                public void operationFinished(RdmaConnection connection, OperationKind kind,
                                              OperationOutcome outcome, String error, long nanos) {
                }
            });
            assertEquals(List.of("opened>", "<opened", "closed"), events);
        }
    }

    @Test
    void listenerThrowing_withAnErrorDroppedHookThatRethrows_stillCompletesTheOperation() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        Hooks.onErrorDropped(e -> {
            dropped.add(e);
            throw Exceptions.propagate(e); // an application hook that rethrows
        });
        try (FaultRig rig = new FaultRig()) {
            rig.client.addListener(new CqfluxListener() {
                @Override
                public void operationFinished(RdmaConnection connection, OperationKind kind,
                                              OperationOutcome outcome, String error, long nanos) {
                    throw new IllegalStateException("listener failure");
                }
            });
            StepVerifier.create(rig.conn.write(rig.remote(), 0, rig.local, 0, 64)).expectComplete().verify(T);
            assertEquals(List.of(), dropped, "a listener's exception is logged, not dropped to the hook");
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    private static final long SIZE_TOO_BIG = FaultRig.SIZE + 1L;

    @Test
    void pendingLimitRefusals_areCountedPerConnectionAndReported() {
        try (FaultRig rig = new FaultRig(UnaryOperator.identity(), b -> b.pendingLimit(0)
                .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withSendQueueSize(2)))) {
            Recorder rec = new Recorder();
            rig.client.addListener(rec);
            assertEquals(0, rig.conn.rejections());
            // Inside one loop callback: two writes take the send queue's two credits, the third
            // would wait, and with pendingLimit 0 nothing may.
            List<String> outcomes = rig.conn.read(rig.local, 0, rig.remote(), 0, 8)
                    .thenMany(reactor.core.publisher.Flux.range(0, 3).flatMap(i -> rig.conn.write(rig.remote(), 8L * i,
                            rig.local, 0, 8).thenReturn("ok").onErrorResume(QueueFullException.class,
                            e -> Mono.just("full")), 3))
                    .collectList().block(T);
            assertEquals(List.of("full", "ok", "ok"), outcomes.stream().sorted().toList());
            assertEquals(1, rig.conn.rejections());
            assertEquals(1, rec.events.stream().filter("write/error/QueueFullException"::equals).count(),
                    rec.events::toString);
            assertEquals(0, rig.conn.waiting());
            assertTrue(FaultRig.await(() -> rig.conn.inFlight() == 0, T));
        }
    }

    @Test
    void subscriberCallbackBlockingTheLoop_isReportedWithItsOperation() {
        try (FaultRig rig = new FaultRig(UnaryOperator.identity(),
                b -> b.blockedLoopThreshold(Duration.ofMillis(200)))) {
            long before = rig.client.loopStats().getFirst().blocked();
            rig.conn.write(rig.remote(), 0, rig.local, 0, 64)
                    .doOnSuccess(v -> sleep(300)) // runs on the loop thread
                    .block(T);
            assertTrue(FaultRig.await(() -> rig.client.loopStats().getFirst().blocked() == before + 1, T),
                    () -> "blocked " + rig.client.loopStats());
            assertTrue(FaultRig.await(() -> !warnings.isEmpty(), T), "no blocked-loop warning");
            String m = warnings.getFirst().getMessage();
            assertTrue(m.contains(rig.client.loopNames().getFirst()), m);
            assertTrue(m.contains("operation: cqflux.write"), m);
        }
    }

    @Test
    void bindSubscriberBlockingTheLoop_isReportedWithTheBind() {
        try (FaultRig rig = new FaultRig(b -> b.blockedLoopThreshold(Duration.ofMillis(200)),
                UnaryOperator.identity())) {
            long before = rig.server.loopStats().getFirst().blocked();
            RdmaServer another = rig.server.bind(new java.net.InetSocketAddress(rig.srv.address().getAddress(), 0),
                            rig.serverRegion)
                    .doOnNext(s -> sleep(300)) // the bind's subscriber, on the loop thread
                    .block(T);
            try {
                assertTrue(FaultRig.await(() -> rig.server.loopStats().getFirst().blocked() == before + 1, T),
                        () -> "blocked " + rig.server.loopStats());
                assertTrue(FaultRig.await(() -> !warnings.isEmpty(), T), "no blocked-loop warning");
                String m = warnings.getFirst().getMessage();
                assertTrue(m.contains("operation: cqflux.bind"), m);
            } finally {
                another.dispose();
            }
        }
    }

    @Test
    void fastSubscriberCallbacks_areNotReported() {
        try (FaultRig rig = new FaultRig(UnaryOperator.identity(),
                b -> b.blockedLoopThreshold(Duration.ofMillis(200)))) {
            for (int i = 0; i < 100; i++) {
                rig.conn.write(rig.remote(), 0, rig.local, 0, 64).doOnSuccess(v -> { }).block(T);
            }
            FaultRig.drainLoop(rig.conn);
            LoopStats s = rig.client.loopStats().getFirst();
            assertEquals(0, s.blocked(), s::toString);
            assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains(rig.client.loopNames().getFirst())),
                    warnings::toString);
        }
    }

    @Test
    void blockedLoopThreshold_outsideItsRange_isRefusedWithTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().blockedLoopThreshold(Duration.ofHours(2)));
        assertTrue(e.getMessage().contains("PT2H") && e.getMessage().contains("PT1H"), e.getMessage());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
