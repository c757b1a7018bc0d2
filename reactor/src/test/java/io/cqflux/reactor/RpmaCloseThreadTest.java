package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * librpma's connections close on the instance's close thread (RpmaTransport#closesOffLoop, with
 * cqflux's log upcall, the default): {@code rpma_conn_disconnect} and {@code rpma_conn_delete}
 * off the loop, the release after them, the instance's shutdown after the queued closes. Runs
 * only in the Soft-RoCE lane (tag {@code rpma}).
 */
@Tag("rpma")
class RpmaCloseThreadTest {
    private static final Duration T = Duration.ofSeconds(60);

    private static Cqflux rpma() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address())
                .loops(1).build();
    }

    @Test
    void closes_runTheirNativePartOnTheCloseThread_andTheInstanceEndsAfterThem() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = rpma()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(RpmaReactiveContractTest.address(),
                    ReactiveContract.freePort()), exposed).block(T);
            assertNotNull(s);
            Cqflux client = rpma();
            assertTrue(client.transport().closesOffLoop(), "rpma with the log upcall closes off the loop");
            List<RdmaConnection> cs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                RdmaConnection c = client.connect(s.address()).block(T);
                assertNotNull(c);
                c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
                cs.add(c);
            }
            // Half closed one by one, the rest by the instance's shutdown right after.
            for (int i = 0; i < 3; i++) {
                cs.get(i).dispose();
            }
            for (int i = 0; i < 3; i++) {
                cs.get(i).onDispose().block(T);
                ConnectionCore core = cs.get(i).core();
                assertNotNull(core.nativeCloseThread(), "closed natively before onDispose(): " + cs.get(i));
                assertTrue(core.nativeCloseThread().getName().endsWith("-close"),
                        "the native close ran on " + core.nativeCloseThread().getName());
            }
            client.disposeNow(T);
            for (RdmaConnection c : cs) {
                assertNotNull(c.core().nativeCloseThread(), "closed natively: " + c);
            }
            assertEquals(0, client.openConnections());
            assertTrue(FaultRig.await(() -> s.stats().connections() == 0, T), "server " + s.stats());
        }
    }
}
