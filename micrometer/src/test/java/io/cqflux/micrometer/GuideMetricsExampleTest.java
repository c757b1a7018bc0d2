package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.observability.micrometer.Micrometer;
import reactor.test.StepVerifier;

/** The code of docs/guide/threads-and-metrics.md's "Metrics" section, compiled and run as written there. */
class GuideMetricsExampleTest {

    @Test
    void bindingExample_registersTheLoopMeters() {
        MeterRegistry registry = new SimpleMeterRegistry();
        // --- guide/threads-and-metrics.md, Metrics
        Cqflux cq = Cqflux.builder().transport(TransportChoice.FABRIC).build();
        CqfluxMetrics metrics = new CqfluxMetrics(cq, Tags.of("service", "orders"));
        metrics.bindTo(registry);   // any MeterRegistry; in Spring Boot, return it as a MeterBinder @Bean
        // ...
        metrics.close();            // removes its meters and its listener
        // ---
        cq.dispose();
        assertEquals(0, registry.getMeters().size());
    }

    @Test
    void reactorMetricsExample_namesTheOperation() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            RdmaConnection conn = peer.connection();
            PeerRegion remote = peer.remote();
            Region region = peer.local();
            // --- guide/threads-and-metrics.md, Metrics
            var tapped = conn.durableWrite(remote, 0, region, 0, 4096)
                    .tap(Micrometer.metrics(registry));   // meters named cqflux.durableWrite.*
            String name = Scannable.from(conn.read(region, 0, remote, 0, 64)).name();   // "cqflux.read"
            // ---
            CqfluxTest.verify(StepVerifier.create(tapped).expectComplete());
            assertEquals("cqflux.read", name);
            assertNotNull(registry.find("cqflux.durableWrite.flow.duration").timer(), registry::getMetersAsString);
        }
    }
}
