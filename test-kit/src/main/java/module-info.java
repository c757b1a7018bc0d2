/**
 * cqflux test kit ({@code cqflux-test}): for tests of code that uses cqflux. A loopback peer in
 * one line ({@link io.cqflux.test.CqfluxTest#loopback()}), a fault-injecting test-double transport
 * named {@code faulty} ({@link io.cqflux.test.Faults}) and a default timeout for
 * {@code StepVerifier} ({@link io.cqflux.test.VerifyTimeoutExtension}).
 */
module io.cqflux.test {
    requires transitive io.cqflux.reactor;
    requires transitive reactor.test;
    requires transitive org.junit.jupiter.api;

    exports io.cqflux.test;

    uses io.cqflux.core.spi.TransportProvider;
    provides io.cqflux.core.spi.TransportProvider with io.cqflux.test.FaultyTransportProvider;
}
