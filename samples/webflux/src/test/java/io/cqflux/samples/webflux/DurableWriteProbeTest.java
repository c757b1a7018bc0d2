package io.cqflux.samples.webflux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The durable-write probe that load.sh sets beside the HTTP runs, against a real storage peer. */
class DurableWriteProbeTest {

    @Test
    void probe_timesChainedDurableWrites_andLeavesOneValidRecordInItsSlot() throws Exception {
        try (StoragePeer peer = new StoragePeer(new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()),
                "fabric", 64, 1024)) {
            peer.start();
            DurableWriteProbe.Result r = DurableWriteProbe.measure(peer.address(), 63, 1024, 0.2, WaitStrategy.BLOCKING);
            assertTrue(r.writes() > 0, "no write was timed: " + r);
            assertTrue(r.p50Nanos() > 0 && r.p50Nanos() <= r.p99Nanos(), "percentiles out of order: " + r);
            StoragePeer.Verification v = peer.verify();
            assertEquals(1, v.stored(), "the probe's slot only: " + v);
            assertEquals(1, v.verified(), "the probe's record must verify: " + v);
        }
    }

    @Test
    void probe_refusesASlotOutsideThePeersRegion_namingIt() throws Exception {
        try (StoragePeer peer = new StoragePeer(new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()),
                "fabric", 64, 1024)) {
            peer.start();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DurableWriteProbe.measure(peer.address(), 64, 1024, 0.1, WaitStrategy.BLOCKING));
            assertTrue(e.getMessage().contains("slot 64") && e.getMessage().contains("65536 B"), e.getMessage());
        }
    }

    @Test
    void waitStrategy_namesAsTheStarterSpellsThem_andRefusesOthers() {
        assertEquals(WaitStrategy.BLOCKING, DurableWriteProbe.waitStrategy("blocking"));
        assertEquals(WaitStrategy.BUSY_POLL, DurableWriteProbe.waitStrategy("BUSY_POLL"));
        assertEquals(WaitStrategy.BUSY_POLL, DurableWriteProbe.waitStrategy("busy-poll"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DurableWriteProbe.waitStrategy("spin"));
        assertTrue(e.getMessage().contains("'spin'"), e.getMessage());
    }
}
