package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.QueueFullException;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.observability.micrometer.Micrometer;
import reactor.test.StepVerifier;

/**
 * The meters after real operations over libfabric's tcp provider on loopback: names, tags and
 * values; per-connection meters removed when the connection ends; Reactor's own
 * {@code tap(Micrometer.metrics(...))} names its meters after the operation kind.
 */
class CqfluxMetricsTest {
    private static final Duration T = CqfluxTest.DEFAULT_VERIFY_TIMEOUT;

    @Test
    void bindingTwiceToOneRegistry_countsEachOperationOnce_andASecondBinderIsRefused() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client());
                CqfluxMetrics other = new CqfluxMetrics(peer.client())) {
            metrics.bindTo(registry);
            metrics.bindTo(registry); // a no-op
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> other.bindTo(registry));
            assertTrue(e.getMessage().contains("counted twice"), e.getMessage());
            for (int i = 0; i < 3; i++) {
                CqfluxTest.verify(StepVerifier.create(peer.connection().write(peer.remote(), 0, peer.local(), 0, 64))
                        .expectComplete());
            }
            assertEquals(3, registry.get("cqflux.operation").tags("kind", "write", "outcome", "success").timer().count());
            // Other tags are other meters: fine (closed with its registry binding at once).
            try (CqfluxMetrics tagged = new CqfluxMetrics(peer.client(), Tags.of("instance", "b"))) {
                tagged.bindTo(registry);
            }
            // Another registry is fine, and a new binding after close is too.
            SimpleMeterRegistry second = new SimpleMeterRegistry();
            other.bindTo(second);
            metrics.close();
            metrics.bindTo(registry);
        }
    }

    /**
     * Two instances with equal tags in one registry share meter ids: the registry keeps the first
     * one's gauges for both. It binds (said at WARNING: two Spring contexts sharing one registry
     * must still start) and shows one gauge; with a tag each, both instances have their own.
     */
    @Test
    void twoInstancesWithEqualTagsInOneRegistry_shareTheirMeters_andWithATagEachBothHaveTheirOwn() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxMetrics client = new CqfluxMetrics(peer.client());
                CqfluxMetrics server = new CqfluxMetrics(peer.server())) {
            client.bindTo(registry);
            server.bindTo(registry);
            assertEquals(1, registry.find("cqflux.server.connections").gauges().size(), "one id, one gauge");
            client.close();
            server.close();
            try (CqfluxMetrics a = new CqfluxMetrics(peer.client(), Tags.of("instance", "client"));
                    CqfluxMetrics b = new CqfluxMetrics(peer.server(), Tags.of("instance", "server"))) {
                a.bindTo(registry);
                b.bindTo(registry);
                assertEquals(2, registry.find("cqflux.server.connections").gauges().size());
            }
        }
    }

    @Test
    void afterWritesAndReads_loopAndOperationMetersCountThem() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client(), Tags.of("app", "test"))) {
            metrics.bindTo(registry);
            RdmaConnection c = peer.connection();
            for (int i = 0; i < 3; i++) {
                CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 64)).expectComplete());
            }
            CqfluxTest.verify(StepVerifier.create(c.durableWrite(peer.remote(), 0, peer.local(), 0, 64))
                    .expectComplete());
            CqfluxTest.verify(StepVerifier.create(c.read(peer.local(), 0, peer.remote(), 0, 64)).expectComplete());

            String loop = peer.client().loopNames().getFirst();
            String transport = peer.client().transportName();
            Timer writes = registry.get("cqflux.operation").tags("kind", "write", "outcome", "success", "error", "none",
                    "transport", transport, "app", "test").timer();
            assertEquals(3, writes.count());
            assertTrue(writes.totalTime(TimeUnit.NANOSECONDS) > 0);
            assertEquals(1, registry.get("cqflux.operation").tags("kind", "durableWrite", "outcome", "success")
                    .timer().count());
            assertEquals(1, registry.get("cqflux.operation").tags("kind", "read").timer().count());

            // The loop counts a batch's completions after its sinks ran: the read's signal can
            // reach this thread before its completion is counted.
            assertTrue(awaitAtLeast(() -> registry.get("cqflux.loop.completions").tags("loop", loop, "app", "test")
                    .functionCounter().count(), 5) >= 5);
            assertTrue(registry.get("cqflux.loop.batches").tag("loop", loop).functionCounter().count() >= 1);
            assertTrue(registry.get("cqflux.loop.wakeups").tag("loop", loop).functionCounter().count() >= 1);
            assertTrue(registry.get("cqflux.loop.tasks").tag("loop", loop).functionCounter().count() >= 1);
            assertEquals(0, registry.get("cqflux.loop.blocked").tag("loop", loop).functionCounter().count());
            // One connection on the default blocking loop: nothing for a spinning round to skip.
            assertEquals(0, registry.get("cqflux.loop.quiet.skips").tag("loop", loop).functionCounter().count());
            assertNotNull(registry.get("cqflux.loop.lag").tag("loop", loop).timeGauge());

            String conn = c.description();
            assertEquals(c.sendCredits(), registry.get("cqflux.connection.credits.max").tag("connection", conn)
                    .gauge().value());
            assertEquals(0, registry.get("cqflux.connection.credits.used").tag("connection", conn).gauge().value());
            assertEquals(0, registry.get("cqflux.connection.waiting").tag("connection", conn).gauge().value());
            assertEquals(0, registry.get("cqflux.connection.rejections").tags("connection", conn,
                    "transport", transport).functionCounter().count());
        }
    }

    /**
     * Waits (bounded by {@link #T}) until {@code count} reaches {@code min}; {@return the last value
     * read} A loop counter is published after the batch whose sink signalled the test.
     */
    static double awaitAtLeast(java.util.function.DoubleSupplier count, double min) {
        long deadline = System.nanoTime() + T.toNanos();
        double v;
        while ((v = count.getAsDouble()) < min && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return v;
    }

    @Test
    void anErrorOutcome_isTaggedWithItsCause() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().client(b -> b.pendingLimit(0)
                        .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withSendQueueSize(2))).start();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client())) {
            metrics.bindTo(registry);
            RdmaConnection c = peer.connection();
            // Inside one loop callback: two writes take the two send credits; the third would
            // wait, which pendingLimit 0 refuses.
            java.util.List<String> outcomes = c.read(peer.local(), 0, peer.remote(), 0, 8)
                    .thenMany(reactor.core.publisher.Flux.range(0, 3).flatMap(i -> c.write(peer.remote(), 64L * i,
                            peer.local(), 0, 64).thenReturn("ok").onErrorResume(QueueFullException.class,
                            e -> reactor.core.publisher.Mono.just("full")), 3))
                    .collectList().block(T);
            assertEquals(java.util.List.of("full", "ok", "ok"), outcomes.stream().sorted().toList());
            assertEquals(1, registry.get("cqflux.operation").tags("kind", "write", "outcome", "error",
                    "error", "QueueFullException").timer().count());
            assertEquals(1, registry.get("cqflux.connection.rejections").tag("connection", c.description())
                    .functionCounter().count());
        }
    }

    @Test
    void connectionMeters_areRemovedWhenTheConnectionEnds() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client())) {
            metrics.bindTo(registry);
            // The first connection was open at binding time (id 1); this one opens after it (id 2).
            RdmaConnection another = peer.connectAnother();
            String first = peer.connection().description();
            String second = another.description();
            assertNotNull(registry.find("cqflux.connection.credits.used").tags("connection", first, "id", "1").gauge());
            assertNotNull(registry.find("cqflux.connection.waiting").tags("connection", second, "id", "2").gauge());

            another.disposeNow(T);
            for (String name : new String[] {"cqflux.connection.credits.used", "cqflux.connection.credits.max",
                    "cqflux.connection.waiting", "cqflux.connection.rejections"}) {
                assertNull(registry.find(name).tags("connection", second, "id", "2").meter(), name);
                assertNotNull(registry.find(name).tags("connection", first, "id", "1").meter(), name);
            }
            metrics.close();
            assertEquals(0, registry.getMeters().stream().map(Meter::getId)
                    .filter(id -> id.getName().startsWith("cqflux.")).count(), registry.getMetersAsString());
        }
    }

    @Test
    void reactorTap_namesItsMetersAfterTheOperationKind() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection c = peer.connection();
            CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 64)
                    .tap(Micrometer.metrics(registry))).expectComplete());
            assertTrue(registry.getMeters().stream().anyMatch(m -> m.getId().getName().startsWith("cqflux.write.")),
                    registry::getMetersAsString);
        }
    }
}
