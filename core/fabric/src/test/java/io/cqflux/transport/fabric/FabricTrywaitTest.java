package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * fi_trywait is asked again only when it has to be (FabricCompletionQueue and FabricEventQueue,
 * field {@code sleepOk}): after a read of the queue, after a post on its endpoint (a CQ), after a
 * connection-management call (an EQ); an untouched queue answers from its last call. Against the
 * real library: the server side is pumped by the fixture, the client's queues by the test.
 */
class FabricTrywaitTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    @Test
    void completionQueue_asksTrywaitAgainOnlyAfterAReadOrAPost_andStillDeliversWhatCame() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        FabricConnection c = (FabricConnection) p.client();
        FabricCompletionQueue cq = (FabricCompletionQueue) c.completionQueues().get(0);
        pump.remove(p.clientSide());
        MemorySegment scratch = arena.allocate(16L * CompletionQueue.MAX_ENTRY_BYTES, 64);
        List<CompletionRecord> seen = new ArrayList<>();
        settle(cq, scratch, seen);

        int calls = cq.trywaitCalls();
        assertTrue(cq.prepareToSleep());
        assertTrue(cq.prepareToSleep());
        assertEquals(calls, cq.trywaitCalls(), "an untouched queue answers from its last fi_trywait");

        assertEquals(0, cq.poll(scratch, 16, r -> seen.add(r.snapshot())));
        cq.prepareToSleep();
        assertEquals(calls + 1, cq.trywaitCalls(), "a read asks fi_trywait again");

        assertTrue(c.write(remote, 0, src, 0, 8, 77, true));
        cq.prepareToSleep();
        assertEquals(calls + 2, cq.trywaitCalls(), "a post asks fi_trywait again");
        // The write completes although prepareToSleep may have said "sleep": reading until it
        // comes (the fd would have woken a loop) finds it.
        pump.until("the write's completion", DEADLINE, () -> {
            cq.poll(scratch, 16, r -> seen.add(r.snapshot()));
            return seen.stream().anyMatch(r -> r.context() == 77);
        });
        assertTrue(seen.stream().filter(r -> r.context() == 77).allMatch(CompletionRecord::isSuccess), seen::toString);
    }

    @Test
    void eventQueue_asksTrywaitAgainOnlyAfterAReadOrAShutdown() {
        Pair p = connect(new byte[0], new byte[0]);
        FabricConnection c = (FabricConnection) p.client();
        FabricEventQueue eq = c.eventQueue();
        pump.remove(p.clientSide());
        pump.until("the client's EQ is empty", DEADLINE, () -> {
            while (c.events().nextEvent() != null) {
                // the fixture saw ESTABLISHED already; nothing else is expected
            }
            return eq.trywait();
        });
        int calls = eq.trywaitCalls();
        assertTrue(eq.trywait());
        assertTrue(eq.trywait());
        assertEquals(calls, eq.trywaitCalls(), "an untouched queue answers from its last fi_trywait");

        assertEquals(FabricEventQueue.NONE, eq.read());
        eq.trywait();
        assertEquals(calls + 1, eq.trywaitCalls(), "a read asks fi_trywait again");

        c.disconnect();
        eq.trywait();
        assertEquals(calls + 2, eq.trywaitCalls(), "fi_shutdown asks fi_trywait again");
        assertFalse(c.events().prepareToSleep(), "the CLOSED that disconnect() reports keeps the loop awake");
    }

    /** Reads the client's CQ until fi_trywait says it is safe to block. */
    private void settle(FabricCompletionQueue cq, MemorySegment scratch, List<CompletionRecord> seen) {
        pump.until("the client's CQ is empty", DEADLINE, () -> {
            cq.poll(scratch, 16, r -> seen.add(r.snapshot()));
            return cq.prepareToSleep();
        });
    }
}
