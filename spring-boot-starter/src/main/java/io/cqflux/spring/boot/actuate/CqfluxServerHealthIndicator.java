package io.cqflux.spring.boot.actuate;

import io.cqflux.reactor.Region;
import io.cqflux.spring.boot.CqfluxServer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The health of the server side ({@code cqflux.server.*}): {@code UP} while it listens, with its
 * address and each exposed region's size and access as details; {@code DOWN} before its start and
 * once it or its instance is closed. Peers that write into this application cannot reach it then.
 */
public final class CqfluxServerHealthIndicator implements ReactiveHealthIndicator {
    private final CqfluxServer server;

    /** @param server the server side to report */
    public CqfluxServerHealthIndicator(CqfluxServer server) {
        this.server = Objects.requireNonNull(server, "server");
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> {
            if (!server.isServing()) {
                return Health.down().withDetail("listening", false).build();
            }
            Map<String, Object> regions = new LinkedHashMap<>();
            int index = 0;
            for (Map.Entry<String, Region> e : server.regions().entrySet()) {
                regions.put(e.getKey(), Map.of("index", index++, "size", e.getValue().size(),
                        "access", e.getValue().access().toString()));
            }
            return Health.up().withDetail("listening", true).withDetail("address", String.valueOf(server.address()))
                    .withDetail("regions", regions).build();
        });
    }
}
