package io.cqflux.spring.boot.actuate;

import io.cqflux.spring.boot.CqfluxPeer;
import java.util.Objects;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The health of one named peer: {@code UP} while its connection carries operations, {@code DOWN}
 * otherwise, with the peer's state, address, connection and credits as details.
 */
public final class CqfluxPeerHealthIndicator implements ReactiveHealthIndicator {
    private final CqfluxPeer peer;

    /** @param peer the peer to report */
    public CqfluxPeerHealthIndicator(CqfluxPeer peer) {
        this.peer = Objects.requireNonNull(peer, "peer");
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> (peer.isAvailable() ? Health.up() : Health.down())
                .withDetails(peer.details())
                .withDetail("required", peer.required())
                .build());
    }
}
