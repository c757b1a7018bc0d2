package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.observability.micrometer.Micrometer;
import reactor.test.StepVerifier;

/**
 * One Micrometer Observation per operation through Reactor's own
 * {@code tap(Micrometer.observation(registry))}: the operation Mono's name makes the
 * observation's name, with no naming by the application.
 */
class ObservationTapTest {

    @Test
    void observationTap_namesTheObservationAfterTheOperationKind() {
        List<String> stopped = new CopyOnWriteArrayList<>();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<Observation.Context>() {
            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context.getName() + "/" + context.getLowCardinalityKeyValues().stream()
                        .filter(kv -> kv.getKey().equals("reactor.status")).map(kv -> kv.getValue())
                        .findFirst().orElse("?"));
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection c = peer.connection();
            CqfluxTest.verify(StepVerifier.create(c.durableWrite(peer.remote(), 0, peer.local(), 0, 64)
                    .tap(Micrometer.observation(registry))).expectComplete());
            assertEquals(List.of("cqflux.durableWrite/completedEmpty"), stopped);
        }
    }
}
