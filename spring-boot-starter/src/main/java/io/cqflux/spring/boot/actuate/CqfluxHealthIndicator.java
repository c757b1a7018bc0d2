package io.cqflux.spring.boot.actuate;

import io.cqflux.epoll.LoopStats;
import io.cqflux.reactor.Cqflux;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Mono;

/**
 * The health of the {@link Cqflux} instance itself: {@code UP} with its transport and loop count
 * while it runs, {@code DOWN} once it is disposed.
 */
public final class CqfluxHealthIndicator implements ReactiveHealthIndicator {
    private final Cqflux cqflux;

    /** @param cqflux the instance to report */
    public CqfluxHealthIndicator(Cqflux cqflux) {
        this.cqflux = Objects.requireNonNull(cqflux, "cqflux");
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> {
            if (cqflux.isDisposed()) {
                return Health.down().withDetail("transport", cqflux.transportName()).withDetail("disposed", true).build();
            }
            long completions = 0;
            int loops = 0;
            for (LoopStats s : cqflux.loopStats()) {
                loops++;
                completions += s.completions();
            }
            return Health.up()
                    .withDetail("transport", cqflux.transportName())
                    .withDetail("loops", loops)
                    .withDetail("completions", completions)
                    .build();
        });
    }
}
