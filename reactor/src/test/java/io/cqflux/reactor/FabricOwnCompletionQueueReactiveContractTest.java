package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.TransportOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * The reactive contract on libfabric's tcp provider with a completion queue per connection
 * ({@link TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP} = 1; the default shares them in groups
 * of 32): the layout a user who opts out of the groups gets.
 */
class FabricOwnCompletionQueueReactiveContractTest extends FabricReactiveContractTest {

    @Override
    Cqflux.Builder builder() {
        return super.builder().transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "1");
    }

    @Test
    void everyConnection_hasCompletionQueuesOfItsOwn() {
        for (RdmaConnection c : new RdmaConnection[] {conn, serverConn}) {
            for (CompletionQueue q : c.core().conn.completionQueues()) {
                assertNull(q.sharedBy(), c + ": " + q + " is shared");
            }
        }
    }

    /**
     * The tag is the receiver's to choose: a grouped server (K = 32: its first connection too) and a client with queues
     * of its own exchange writes with immediate both ways, each side putting in its CQ data the tag
     * the other side's hello asked for (none, from the client), whatever its own setting.
     */
    @Test
    void aGroupedServerAndAnUngroupedClient_deliverEachOthersWritesWithImmediate() {
        try (Arena a = Arena.ofConfined();
             Cqflux grouped = super.builder().loops(1).transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP,
                     "32").build();
             Cqflux own = builder().loops(1).build()) {
            MemorySegment sm = a.allocate(4096, 64);
            MemorySegment cm = a.allocate(4096, 64);
            Region serverSide = grouped.register(sm, RegionAccess.WRITE_DST, RegionAccess.WRITE_SRC);
            Region clientSide = own.register(cm, RegionAccess.WRITE_DST, RegionAccess.WRITE_SRC);
            RdmaServer s = grouped.bind(listenAddress(), serverSide).block(T);
            assertNotNull(s);
            CompletableFuture<RdmaConnection> accepted = new CompletableFuture<>();
            s.connections().subscribe(accepted::complete);
            RdmaConnection c = own.connect(s.address(), clientSide).block(T);
            assertNotNull(c);
            RdmaConnection sc = accepted.orTimeout(T.toMillis(), TimeUnit.MILLISECONDS).join();
            assertNotNull(sc.core().conn.completionQueues().get(0).sharedBy(), "the server's end is grouped");
            assertNull(c.core().conn.completionQueues().get(0).sharedBy(), "the client's end is not");
            StepVerifier.create(sc.receive(m -> m.immediate() + ":" + m.opcode()).take(1))
                    .then(() -> c.writeWithImmediate(c.remoteRegion(0), 0, clientSide, 64, 8, 0x0C11_E27).subscribe())
                    .expectNext(0x0C11_E27 + ":" + Opcode.RECEIVE_WRITE_WITH_IMMEDIATE)
                    .expectComplete().verify(T);
            StepVerifier.create(c.receive(m -> m.immediate() + ":" + m.opcode()).take(1))
                    .then(() -> sc.writeWithImmediate(sc.remoteRegion(0), 0, serverSide, 64, 8, 0x5E27E2).subscribe())
                    .expectNext(0x5E27E2 + ":" + Opcode.RECEIVE_WRITE_WITH_IMMEDIATE)
                    .expectComplete().verify(T);
            c.dispose();
            c.onDispose().block(T);
        }
    }
}
