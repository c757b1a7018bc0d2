/**
 * cqflux reactor: the public reactive API. One cold {@code Mono} per posted RDMA operation,
 * each completion queue a hot {@code Flux}, credits for backpressure.
 */
module io.cqflux.reactor {
    requires transitive io.cqflux.core;
    requires transitive io.cqflux.epoll;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    requires java.logging;

    exports io.cqflux.reactor;
}
