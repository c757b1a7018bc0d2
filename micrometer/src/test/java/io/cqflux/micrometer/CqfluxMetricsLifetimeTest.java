package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Opcode;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.Faults;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The meters' lifetime at the edges: an operation that ends after {@link CqfluxMetrics#close()}
 * and a connection announced twice at once leave no meter behind.
 */
class CqfluxMetricsLifetimeTest {

    @Test
    void operationEndingAfterClose_bringsNoMeterBack() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            CqfluxMetrics metrics = new CqfluxMetrics(peer.client());
            metrics.bindTo(registry);
            faults.on(Opcode.READ).hang();
            RdmaConnection c = peer.connection();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            CountDownLatch ended = new CountDownLatch(1);
            // The operation keeps the listener it saw at subscription.
            c.read(peer.local(), 0, peer.remote(), 0, 64).subscribe(v -> { }, e -> {
                failed.set(e);
                ended.countDown();
            });
            metrics.close();
            assertEquals(List.of(), cqfluxMeters(registry));

            c.dispose(); // fails the hung read: its outcome is reported before its onError
            assertTrue(ended.await(10, TimeUnit.SECONDS), "the hung read did not fail when its connection ended");
            assertEquals(List.of(), cqfluxMeters(registry), "meters registered after close()");
        }
    }

    @Test
    void connectionAnnouncedTwiceAtOnce_hasOneSetOfMeters() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client())) {
            metrics.bindTo(registry);
            CqfluxListener binding = onlyBinding(metrics);
            RdmaConnection c = peer.connection();
            CyclicBarrier together = new CyclicBarrier(2);
            for (int round = 0; round < 200; round++) {
                binding.connectionClosed(c);
                Thread other = Thread.ofPlatform().start(() -> {
                    await(together);
                    binding.connectionOpened(c);
                });
                await(together);
                binding.connectionOpened(c);
                other.join();
                long perConnection = registry.getMeters().stream()
                        .filter(m -> m.getId().getTag("connection") != null).count();
                assertEquals(4, perConnection, "round " + round + ": " + registry.getMetersAsString());
            }
        }
    }

    /**
     * "Thread-safe" (CqfluxMetrics' class comment), with two calls at once: one binder bound to one
     * registry from two threads binds it once and neither call throws (the second is the
     * documented no-op); a bind racing the close leaves, after one more close, nothing behind.
     * Before, the check and the registration were two steps: the second thread found the registry
     * taken by "another" binder, or the close ran between them and the meters stayed.
     */
    @Test
    void bindingFromTwoThreadsAtOnce_bindsOnce_andABindRacingTheCloseLeavesNothingAfterTheNextClose() throws Exception {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            for (int round = 0; round < 100; round++) {
                SimpleMeterRegistry registry = new SimpleMeterRegistry();
                CqfluxMetrics metrics = new CqfluxMetrics(peer.client());
                CyclicBarrier both = new CyclicBarrier(2);
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Thread other = Thread.ofPlatform().start(() -> {
                    await(both);
                    try {
                        metrics.bindTo(registry);
                    } catch (RuntimeException e) {
                        failed.set(e);
                    }
                });
                await(both);
                metrics.bindTo(registry);
                other.join();
                assertEquals(null, failed.get(), "round " + round + ": the second bind of the same binder threw");
                assertEquals(1, registry.find("cqflux.server.connections").gauges().size(), "round " + round);

                CyclicBarrier race = new CyclicBarrier(2);
                SimpleMeterRegistry second = new SimpleMeterRegistry();
                Thread closer = Thread.ofPlatform().start(() -> {
                    await(race);
                    metrics.close();
                });
                await(race);
                metrics.bindTo(second);
                closer.join();
                metrics.close();
                assertEquals(List.of(), cqfluxMeters(registry), "round " + round);
                assertEquals(List.of(), cqfluxMeters(second), "round " + round + ": a bind raced the close");
            }
        }
    }

    private static List<String> cqfluxMeters(SimpleMeterRegistry registry) {
        return registry.getMeters().stream().map(Meter::getId).filter(id -> id.getName().startsWith("cqflux."))
                .map(Object::toString).toList();
    }

    /** The listener of the one registry bound (the race needs two calls at once, not a real announcement). */
    private static CqfluxListener onlyBinding(CqfluxMetrics metrics) throws ReflectiveOperationException {
        Field f = CqfluxMetrics.class.getDeclaredField("bindings");
        f.setAccessible(true);
        List<?> bindings = (List<?>) f.get(metrics);
        assertEquals(1, bindings.size());
        return (CqfluxListener) bindings.getFirst();
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
