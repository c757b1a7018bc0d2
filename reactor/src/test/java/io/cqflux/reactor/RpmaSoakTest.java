package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * {@link SoakTest}'s soak on librpma over Soft-RoCE (tag {@code rpma}, the lane only): mixed
 * writes, durable writes and reads of random sizes on several connections, every byte
 * checksummed where it landed, nothing left in flight.
 *
 * <p>Bounded by time, not by count: under TCG an operation costs tens of times what it costs on
 * the host, and the lane's whole budget for this class is about ten seconds, so the
 * connections start no new round after {@link #BUDGET}; what ran is checked in full.
 *
 * <p>{@link Isolated}: the least number of rounds it asks for within the budget holds only while
 * no other class shares the guest's CPUs.
 */
@Tag("rpma")
@Isolated
class RpmaSoakTest {
    static final int CONNECTIONS = 4;
    static final Duration BUDGET = Duration.ofSeconds(8);

    @Test
    void fourConnections_mixedOperationsForEightSeconds_everyByteVerified() throws Exception {
        try (Cqflux server = rpma().batchSize(64).build(); Cqflux client = rpma().loops(2).batchSize(64).build()) {
            SoakTest.Result r = SoakTest.run(server, client,
                    new InetSocketAddress(RpmaReactiveContractTest.address(), ReactiveContract.freePort()),
                    CONNECTIONS, Integer.MAX_VALUE, BUDGET);
            System.out.println("FACT rpma/rxe soak: " + r);
            r.assertClean();
            assertTrue(r.operations() >= 10L * CONNECTIONS * SoakTest.ROUND,
                    "fewer than 10 rounds per connection in " + BUDGET + ": " + r);
        }
    }

    static Cqflux.Builder rpma() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address());
    }
}
