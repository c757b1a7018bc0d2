package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.RdmaConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The keep-alive leaves the judging of operations in flight to the operation deadline: operations
 * that take longer than misses x interval (here: never complete, and take every send credit, so
 * the probe cannot even be posted) do not end the connection by keep-alive.
 */
class KeepAliveInFlightTest {

    @Test
    void keepAlive_operationsInFlightLongerThanMissesTimesInterval_doNotEndTheConnection() throws Exception {
        Faults faults = Faults.create();
        int credits = 4;
        try (LoopbackPeer p = CqfluxTest.loopback().faults(faults)
                .client(b -> b.keepAlive(Duration.ofMillis(50), 2)
                        .operationTimeout(Duration.ofSeconds(30))
                        .connectionConfig(ConnectionConfig.DEFAULT.withSendQueueSize(credits)))
                .start()) {
            RdmaConnection c = p.connection();
            assertTrue(Await.until(() -> c.keepAliveProbes() > 0, Duration.ofSeconds(10)),
                    "the idle connection sent no probe: keep-alive is not on, the test would prove nothing");
            faults.on(Opcode.WRITE).hang();
            List<Disposable> held = new ArrayList<>();
            for (int i = 0; i < credits; i++) {
                held.add(c.write(p.remote(), 0, p.local(), 0, 64).subscribe(v -> { }, e -> { }));
            }
            // 20 intervals, ten times misses x interval: the old count ended it after two.
            Thread.sleep(1000);
            assertFalse(c.isDisposed(), "the keep-alive ended a connection whose operations were in flight");
            held.forEach(Disposable::dispose);
        }
    }
}
