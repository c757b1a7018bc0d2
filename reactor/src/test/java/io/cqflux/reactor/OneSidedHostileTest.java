package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * One-sided operations, regions and lifecycle as a hostile user drives them, over libfabric's tcp
 * provider on loopback: extreme and malformed arguments refused before posting, memory kept while
 * the NIC may use it, closed things refusing further use.
 */
class OneSidedHostileTest {
    FaultRig rig;
    /** Lets a loop go that {@link #blockServerLoop()} holds; tearDown opens it too. */
    final CountDownLatch unblock = new CountDownLatch(1);

    @BeforeEach
    void setUp() {
        rig = new FaultRig();
    }

    @AfterEach
    void tearDown() {
        unblock.countDown();
        rig.close();
    }

    /** Occupies the server's loop (fabric/tcp: it progresses the client's operations) until the latch opens. */
    void blockServerLoop() throws InterruptedException {
        CountDownLatch blocked = new CountDownLatch(1);
        rig.server.nextLoop().execute(() -> {
            blocked.countDown();
            try {
                unblock.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(blocked.await(10, TimeUnit.SECONDS));
    }

    private static Throwable failureOf(Supplier<Mono<?>> call) {
        try {
            call.get().block(FaultRig.T);
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("no error");
    }

    private static void assertIae(Throwable e, String... words) {
        assertInstanceOf(IllegalArgumentException.class, e, String.valueOf(e));
        for (String w : words) {
            assertTrue(e.getMessage().contains(w), "'" + w + "' not in: " + e.getMessage());
        }
    }

    /**
     * A flush on fabric reads the range back: on a raw region whose stated access grants no read,
     * it would fail at the peer after the durable write's write was posted, ending the connection.
     */
    @Test
    void durableWriteAndFlush_toARawFabricRegionStatedWriteOnly_areRefusedBeforePosting_andTheConnectionLivesOn() {
        Region writeOnly = rig.server.register(rig.arena.allocate(4096), RegionAccess.WRITE_DST);
        PeerRegion p = rig.conn.remoteRegion(writeOnly.rawDescriptor(), RegionAccess.WRITE_DST);
        assertEquals(java.util.Set.of(), p.flushTypes());
        assertIae(failureOf(() -> rig.conn.durableWrite(p, 0, rig.local, 0, 8)), "VISIBILITY");
        assertIae(failureOf(() -> rig.conn.flush(p, 0, 8, FlushType.VISIBILITY)), "VISIBILITY");
        rig.local.segment().set(ValueLayout.JAVA_LONG, 0, 0x0bad_cafeL);
        rig.conn.write(p, 0, rig.local, 0, 8).block(FaultRig.T);
        assertEquals(0x0bad_cafeL, writeOnly.segment().get(ValueLayout.JAVA_LONG, 0));
        assertFalse(rig.conn.isDisposed());
        assertEquals(0, rig.conn.inFlight());
    }
}
