package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.health.contributor.ReactiveHealthContributor;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Mono;

/** One whole Spring Boot application (auto-configuration as an application gets it) over fabric/tcp on loopback. */
class CqfluxApplicationTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    @Test
    void application_durableWriteThroughANamedPeer_landsInThePeersMemory_andStopReleasesEverything() {
        try (LoopbackPeer server = CqfluxTest.loopback().start(); Arena arena = Arena.ofShared()) {
            Cqflux cq;
            CqfluxPeer store;
            try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
                    .web(WebApplicationType.NONE)
                    .properties("cqflux.transport=fabric", "cqflux.thread-name-prefix=app",
                            "cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run()) {
                cq = ctx.getBean(Cqflux.class);
                store = ctx.getBean(CqfluxPeers.class).get("store");
                assertThat(store.state()).isEqualTo(CqfluxPeer.State.UP);
                assertThat(ctx.getBean("cqfluxHealthContributor")).isInstanceOf(ReactiveHealthContributor.class);
                // Boot 4's metrics auto-configuration (spring-boot-micrometer-metrics) made the registry.
                assertThat(ctx.getBean(io.micrometer.core.instrument.MeterRegistry.class)
                        .find("cqflux.loop.wakeups").meters()).isNotEmpty();

                MemorySegment mem = arena.allocate(256);
                for (int i = 0; i < 256; i++) {
                    mem.set(ValueLayout.JAVA_BYTE, i, (byte) i);
                }
                Region src = cq.register(mem, RegionAccess.WRITE_SRC);
                store.withConnection(c -> c.durableWrite(c.remoteRegion(0), 1024, src, 0, 256))
                        .block(Duration.ofSeconds(10));
                assertThat(server.memory().asSlice(1024, 256).mismatch(mem)).isEqualTo(-1);
                assertThat(store.withConnection(c -> Mono.just(c.description())).block(Duration.ofSeconds(10)))
                        .isNotBlank();
            }
            assertThat(store.state()).isEqualTo(CqfluxPeer.State.CLOSED);
            assertThat(cq.isDisposed()).isTrue();
            // The loop thread signals its end, then returns from run(): it is gone a moment later.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces()
                    .keySet().stream().noneMatch(t -> t.getName().startsWith("app-loop")));
        }
    }
}
