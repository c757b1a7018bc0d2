package io.cqflux.spring.boot.actuate;

import io.cqflux.reactor.Cqflux;
import io.cqflux.spring.boot.CqfluxAutoConfiguration;
import io.cqflux.spring.boot.CqfluxPeer;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.spring.boot.CqfluxServer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeReactiveHealthContributor;
import org.springframework.boot.health.contributor.ReactiveHealthContributor;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code cqflux} health contributor, when the application has Spring Boot's actuator:
 * {@code cqflux.transport} (the instance), {@code cqflux.server} (the server side, when
 * {@code cqflux.server.port} is set: see {@link CqfluxServerHealthIndicator}) and {@code cqflux.peers.<name>} (one per peer with
 * details; a required peer is DOWN while it is not up, an optional one always UP, see
 * {@link CqfluxPeerHealthIndicator}). Off with {@code management.health.cqflux.enabled=false}.
 * The readiness group needs nothing added: its {@code readinessState} already follows the
 * required peers ({@link io.cqflux.spring.boot.CqfluxReadiness} moves it); adding {@code cqflux}
 * would only repeat that. Keep {@code cqflux} out of the liveness group: a peer being away is no
 * reason to restart the instance.
 */
@AutoConfiguration(after = CqfluxAutoConfiguration.class)
@ConditionalOnClass({ ReactiveHealthIndicator.class, ConditionalOnEnabledHealthIndicator.class, Cqflux.class })
@ConditionalOnBean(Cqflux.class)
public class CqfluxHealthContributorAutoConfiguration {

    /** Created by Spring. */
    public CqfluxHealthContributorAutoConfiguration() {
    }

    /**
     * The contributor, unless switched off. A nested class, so that its condition (whose class is
     * in spring-boot-health) is read only once the enclosing class's class-path condition held.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnEnabledHealthIndicator("cqflux")
    static class Contributor {
        /**
         * The composite contributor named {@code cqflux}.
         *
         * @param cqflux the instance
         * @param peers the peers; absent when the application brings its own {@link Cqflux} with
         *     {@code cqflux.enabled=false}, and then only the transport is reported
         * @param server the server side, when {@code cqflux.server.port} is set
         * @return the contributor
         */
        @Bean
        @ConditionalOnMissingBean(name = "cqfluxHealthContributor")
        public ReactiveHealthContributor cqfluxHealthContributor(Cqflux cqflux, ObjectProvider<CqfluxPeers> peers,
                ObjectProvider<CqfluxServer> server) {
            Map<String, ReactiveHealthContributor> all = new LinkedHashMap<>();
            all.put("transport", new CqfluxHealthIndicator(cqflux));
            CqfluxServer listening = server.getIfAvailable();
            if (listening != null) {
                all.put("server", new CqfluxServerHealthIndicator(listening));
            }
            CqfluxPeers named = peers.getIfAvailable();
            if (named != null && !named.all().isEmpty()) {
                Map<String, ReactiveHealthContributor> each = new LinkedHashMap<>();
                for (CqfluxPeer p : named.all()) {
                    each.put(p.name(), new CqfluxPeerHealthIndicator(p));
                }
                all.put("peers", CompositeReactiveHealthContributor.fromMap(each));
            }
            return CompositeReactiveHealthContributor.fromMap(all);
        }
    }
}
