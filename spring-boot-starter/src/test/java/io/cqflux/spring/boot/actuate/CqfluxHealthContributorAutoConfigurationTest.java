package io.cqflux.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.reactor.Cqflux;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.cqflux.spring.boot.CqfluxPeer;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.CompositeReactiveHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthContributor;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class CqfluxHealthContributorAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class,
                    CqfluxHealthContributorAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void peerUp_thenServerGone_peerIndicatorGoesDownWithDetails() {
        LoopbackPeer server = CqfluxTest.loopback().start();
        try {
            runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        CompositeReactiveHealthContributor cqflux =
                                (CompositeReactiveHealthContributor) ctx.getBean("cqfluxHealthContributor");
                        Health transport = health(cqflux.getContributor("transport"));
                        assertThat(transport.getStatus()).isEqualTo(Status.UP);
                        assertThat(transport.getDetails()).containsEntry("loops", 1).containsKey("transport");
                        ReactiveHealthContributor store =
                                ((CompositeReactiveHealthContributor) cqflux.getContributor("peers")).getContributor("store");
                        Health up = health(store);
                        assertThat(up.getStatus()).isEqualTo(Status.UP);
                        assertThat(up.getDetails()).containsEntry("state", "UP").containsEntry("liveConnections", 1)
                                .containsKey("inFlight").containsEntry("required", true);

                        CqfluxPeer peer = ctx.getBean(CqfluxPeers.class).get("store");
                        server.close();
                        peer.states().filter(s -> s == CqfluxPeer.State.DOWN).next().block(Duration.ofSeconds(10));
                        Health down = health(store);
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(down.getDetails()).containsEntry("state", "DOWN").containsKey("error");
                    });
        } finally {
            server.close();
        }
    }

    @Test
    void noPeers_onlyTheTransportIsReported() {
        runner.run(ctx -> {
            CompositeReactiveHealthContributor cqflux =
                    (CompositeReactiveHealthContributor) ctx.getBean("cqfluxHealthContributor");
            assertThat(cqflux.getContributor("transport")).isNotNull();
            assertThat(cqflux.getContributor("peers")).isNull();
        });
    }

    @Test
    void disabledByManagementProperty_noContributor() {
        runner.withPropertyValues("management.health.cqflux.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean("cqfluxHealthContributor"));
    }

    @Test
    void withoutCqflux_noContributor() {
        runner.withPropertyValues("cqflux.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean("cqfluxHealthContributor"));
    }

    @Test
    void applicationsOwnCqflux_withStarterDisabled_onlyTheTransportIsReported() {
        runner.withPropertyValues("cqflux.enabled=false")
                .withBean(Cqflux.class, () -> Cqflux.builder().transport("fabric").threadNamePrefix("own").build(),
                        bd -> bd.setDestroyMethodName("close"))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().doesNotHaveBean(CqfluxPeers.class);
                    CompositeReactiveHealthContributor cqflux =
                            (CompositeReactiveHealthContributor) ctx.getBean("cqfluxHealthContributor");
                    assertThat(health(cqflux.getContributor("transport")).getStatus()).isEqualTo(Status.UP);
                    assertThat(cqflux.getContributor("peers")).isNull();
                });
    }

    @Test
    void optionalPeerUnavailable_reportsUpWithItsState_requiredOneDown() throws Exception {
        int nobody;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobody = s.getLocalPort();
        }
        runner.withPropertyValues("cqflux.connect-timeout=2s",
                        "cqflux.peers.cache.address=127.0.0.1", "cqflux.peers.cache.port=" + nobody,
                        "cqflux.peers.cache.required=false",
                        "cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + nobody)
                .run(ctx -> {
                    CqfluxPeers peers = ctx.getBean(CqfluxPeers.class);
                    for (String name : new String[] {"cache", "store"}) {
                        peers.get(name).states().filter(s -> s == CqfluxPeer.State.DOWN).next()
                                .block(Duration.ofSeconds(10));
                    }
                    CompositeReactiveHealthContributor each = (CompositeReactiveHealthContributor)
                            ((CompositeReactiveHealthContributor) ctx.getBean("cqfluxHealthContributor"))
                                    .getContributor("peers");
                    Health cache = health(each.getContributor("cache"));
                    assertThat(cache.getStatus()).isEqualTo(Status.UP);
                    assertThat(cache.getDetails()).containsEntry("state", "DOWN").containsEntry("required", false)
                            .containsKey("error");
                    Health store = health(each.getContributor("store"));
                    assertThat(store.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(store.getDetails()).containsEntry("state", "DOWN").containsEntry("required", true);
                });
    }

    private static Health health(ReactiveHealthContributor c) {
        return ((ReactiveHealthIndicator) c).health().block(Duration.ofSeconds(10));
    }
}
