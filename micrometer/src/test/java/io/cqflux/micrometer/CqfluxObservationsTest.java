package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Observations of real operations over libfabric's tcp provider on loopback: the conventions'
 * names and key values, the parent taken from the subscriber's context, none once closed.
 */
class CqfluxObservationsTest {

    /** What a handler saw stop: the context, its key values then, and the thread it stopped on. */
    record Stopped(Observation.Context context, Map<String, String> keys, String thread) {
    }

    static final class Recording implements ObservationHandler<Observation.Context> {
        final List<Stopped> stopped = new CopyOnWriteArrayList<>();

        @Override
        public void onStop(Observation.Context context) {
            Map<String, String> keys = new TreeMap<>();
            for (KeyValue kv : context.getAllKeyValues()) {
                keys.put(kv.getKey(), kv.getValue());
            }
            stopped.add(new Stopped(context, keys, Thread.currentThread().getName()));
        }

        @Override
        public boolean supportsContext(Observation.Context context) {
            return true;
        }
    }

    @Test
    void eachOperation_isAnObservation_childOfTheOneInTheSubscribersContext() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recording rec = new Recording();
        registry.observationConfig().observationHandler(rec);
        try (LoopbackPeer peer = CqfluxTest.loopback().start();
                CqfluxObservations observations = new CqfluxObservations(peer.client(), registry)) {
            RdmaConnection c = peer.connection();
            Observation request = Observation.start("http.server.requests", registry);
            CqfluxTest.verify(StepVerifier.create(c.durableWrite(peer.remote(), 0, new byte[100])
                    .contextWrite(ctx -> ctx.put(CqfluxObservations.PARENT_KEY, request))).expectComplete());
            CqfluxTest.verify(StepVerifier.create(c.read(peer.local(), 0, peer.remote(), 0, 64)).expectComplete());
            request.stop();

            assertEquals(3, rec.stopped.size(), rec.stopped::toString);
            Stopped write = rec.stopped.get(0);
            assertEquals(CqfluxObservations.NAME, write.context().getName());
            assertEquals("cqflux durableWrite", write.context().getContextualName());
            assertSame(request, write.context().getParentObservation());
            assertEquals(Map.of("kind", "durableWrite", "transport", peer.client().transportName(),
                    "outcome", "success", "error.type", "none", "peer", c.description(), "bytes", "100"),
                    write.keys());
            // Stopped where the outcome arrived: the connection's event loop.
            assertTrue(peer.client().loopNames().contains(write.thread()), write.thread());

            Stopped read = rec.stopped.get(1);
            assertEquals("cqflux read", read.context().getContextualName());
            assertNull(read.context().getParentObservation(), "no parent in the context: a root");
            assertEquals("64", read.keys().get("bytes"));
            assertEquals("http.server.requests", rec.stopped.get(2).context().getName());
        }
    }

    @Test
    void anOperationThatFails_isObservedWithItsOutcomeAndErrorType_andNoneAfterClose() {
        ObservationRegistry registry = ObservationRegistry.create();
        Recording rec = new Recording();
        registry.observationConfig().observationHandler(rec);
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection c = peer.connection();
            CqfluxObservations observations = new CqfluxObservations(peer.client(), registry);
            CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, Long.MAX_VALUE))
                    .expectError(IllegalArgumentException.class));
            assertEquals(1, rec.stopped.size(), rec.stopped::toString);
            assertEquals("error", rec.stopped.getFirst().keys().get("outcome"));
            assertEquals("IllegalArgumentException", rec.stopped.getFirst().keys().get("error.type"));

            observations.close();
            observations.close(); // idempotent
            CqfluxTest.verify(StepVerifier.create(c.write(peer.remote(), 0, peer.local(), 0, 8)).expectComplete());
            assertEquals(1, rec.stopped.size(), "closed: not observed");
        }
    }
}
