/**
 * cqflux reactor: the public reactive API. One cold {@code Mono} per posted RDMA operation,
 * each completion queue a hot {@code Flux}, credits for backpressure. It compiles against no
 * transport: transports are found at run time through
 * {@link io.cqflux.core.spi.TransportProvider} ({@code ServiceLoader}); put
 * {@code cqflux-transport-fabric} and/or {@code cqflux-transport-rpma} beside it.
 */
module io.cqflux.reactor {
    requires transitive io.cqflux.core;
    requires transitive io.cqflux.epoll;
    requires transitive reactor.core;
    requires transitive org.reactivestreams;
    // Optional: BlockHound, when the application has it (CqfluxBlockHoundIntegration, found by
    // its ServiceLoader: META-INF/services on the class path, the provides below on the module path).
    requires static reactor.blockhound;

    exports io.cqflux.reactor;
    // io.cqflux.reactor.internal.{resources,connection,op,server,pool} are exported to no module: none of the
    // project's other modules (test-kit, micrometer, the starter, samples, benchmarks) uses them;
    // they reach the library through its public API only. Add a qualified export (exports ... to)
    // for a module that comes to need one.
    // The integration, for BlockHound.install(new CqfluxBlockHoundIntegration()) and its
    // ServiceLoader. Without BlockHound at run time the module still resolves: a provides names
    // its service type only, and resolution does not look for it (BlockHoundModulePathTest).
    exports io.cqflux.reactor.blockhound;

    provides reactor.blockhound.integration.BlockHoundIntegration
            with io.cqflux.reactor.blockhound.CqfluxBlockHoundIntegration;
}
