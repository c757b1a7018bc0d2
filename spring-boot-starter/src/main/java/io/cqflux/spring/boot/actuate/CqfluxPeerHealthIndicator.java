package io.cqflux.spring.boot.actuate;

import io.cqflux.spring.boot.CqfluxPeer;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The health of one named peer, with the peer's state, address, connection and credits as
 * details. A required peer ({@code cqflux.peers.<name>.required=true}, the default) is {@code UP}
 * while its connection carries operations and {@code DOWN} otherwise (connecting at start
 * included). An optional peer is always {@code UP}, its state only in the details: the
 * application declared that it works without it, so its absence must not turn the aggregated
 * {@code /actuator/health} DOWN (and a load balancer or monitor reading that status away); this
 * is the same rule readiness follows ({@link io.cqflux.spring.boot.CqfluxReadiness}).
 */
public final class CqfluxPeerHealthIndicator implements ReactiveHealthIndicator {
    private final CqfluxPeer peer;

    /** @param peer the peer to report */
    public CqfluxPeerHealthIndicator(CqfluxPeer peer) {
        this.peer = Objects.requireNonNull(peer, "peer");
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> (peer.isAvailable() || !peer.required() ? Health.up() : Health.down())
                .withDetails(peer.details())
                .withDetail("required", peer.required())
                .build());
    }
}
