package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The bounded backlog of write-with-immediate notifications that consume no receive (libfabric's
 * tcp provider, fabric-only): kept up to {@code Cqflux.Builder.notificationBacklog} for an absent
 * receiver, and one more ends the connection with an error naming the limit, never a silent drop.
 */
class NotificationBacklogTest {

    @Test
    void notificationBacklog_atItsLimit_keepsEveryNotification_forTheNextSubscriber() {
        try (FaultRig rig = new FaultRig(b -> b.notificationBacklog(4), b -> b)) {
            StepVerifier.create(Flux.range(0, 4).concatMap(i -> rig.conn.writeWithImmediate(rig.remote(), 64L * i,
                    rig.local, 0, 64, 100 + i))).expectComplete().verify(FaultRig.T);
            assertTrue(FaultRig.await(() -> ReactiveContract.backlogOf(rig.serverConn) == 4, FaultRig.T));
            StepVerifier.create(rig.serverConn.receive(m -> m.opcode() + ":" + m.immediate()).take(4))
                    .expectNext(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":100", Opcode.RECEIVE_WRITE_WITH_IMMEDIATE
                            + ":101", Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":102", Opcode.RECEIVE_WRITE_WITH_IMMEDIATE
                            + ":103")
                    .expectComplete().verify(FaultRig.T);
            assertTrue(rig.serverConn.core().isOpen());
        }
    }

    /**
     * With receiveQueueSize 0 no receive is ever posted, but on fabric/tcp a peer's
     * write-with-immediate needs none: its notifications arrive and are kept, so receive() must
     * take them (it was refused with an IllegalStateException, and the kept notifications could
     * only overflow the backlog and end the connection LOST).
     */
    @Test
    void receiveQueueSizeZero_notificationsStillReachTheReceiver_inOrder() {
        try (FaultRig rig = new FaultRig(b -> b.connectionConfig(
                io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(0)), b -> b)) {
            StepVerifier.create(Flux.range(0, 3).concatMap(i -> rig.conn.writeWithImmediate(rig.remote(), 64L * i,
                    rig.local, 0, 64, 400 + i))).expectComplete().verify(FaultRig.T);
            assertTrue(FaultRig.await(() -> ReactiveContract.backlogOf(rig.serverConn) == 3, FaultRig.T));
            StepVerifier.create(rig.serverConn.receive(m -> m.opcode() + ":" + m.immediate()), 2)
                    .expectNext(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":400", Opcode.RECEIVE_WRITE_WITH_IMMEDIATE
                            + ":401")
                    .thenRequest(2)
                    .expectNext(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":402")
                    // one arriving while the subscriber waits goes straight to it
                    .then(() -> rig.conn.writeWithImmediate(rig.remote(), 0, rig.local, 0, 64, 403).subscribe())
                    .expectNext(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE + ":403")
                    .thenCancel().verify(FaultRig.T);
            assertTrue(rig.serverConn.core().isOpen());
        }
    }

    @Test
    void notificationBacklog_overflow_endsTheConnectionLoudly_namingTheLimit() {
        try (FaultRig rig = new FaultRig(b -> b.notificationBacklog(4), b -> b)) {
            Tally w = new Tally(5);
            for (int i = 0; i < 5; i++) {
                w.subscribe(i, rig.conn.writeWithImmediate(rig.remote(), 64L * i, rig.local, 0, 64, 200 + i));
            }
            StepVerifier.create(rig.serverConn.events().filter(ConnectionEvent::isTerminal).take(1))
                    .expectNext(ConnectionEvent.LOST).expectComplete().verify(FaultRig.T);
            // The four it kept and the fifth that overflowed are still delivered (nothing that
            // arrived is lost), then the error.
            StepVerifier.create(rig.serverConn.receive())
                    .expectNextCount(5)
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(ConnectionException.class, e);
                        assertEquals(ConnectionEvent.LOST, ((ConnectionException) e).event());
                        assertTrue(e.getMessage().contains("4 write-with-immediate notifications")
                                && e.getMessage().contains("backlog limit")
                                && e.getMessage().contains("notificationBacklog"), e.getMessage());
                    }).verify(FaultRig.T);
            // The writer hears of the end too: its connection ends, nothing of it stays pending.
            assertTrue(w.awaitAll(FaultRig.T), w.toString());
            StepVerifier.create(rig.conn.events().filter(ConnectionEvent::isTerminal).take(1))
                    .expectNextMatches(ConnectionEvent::isTerminal).expectComplete().verify(FaultRig.T);
            System.out.println("FACT fabric/tcp: 5 notifications over a backlog of 4, the writer's outcomes: "
                    + w.kinds());
            assertEquals(5, w.kinds().values().stream().mapToInt(Integer::intValue).sum(), w.toString());
        }
    }

    @Test
    void notificationBacklog_overflow_dropsNothing_everyArrivalDeliveredInOrder_beforeTheError() {
        try (FaultRig rig = new FaultRig(b -> b.notificationBacklog(4), b -> b)) {
            int n = 10;
            Tally w = new Tally(n);
            for (int i = 0; i < n; i++) {
                w.subscribe(i, rig.conn.writeWithImmediate(rig.remote(), 64L * i, rig.local, 0, 64, 300 + i));
            }
            assertTrue(w.awaitAll(FaultRig.T), w.toString());
            StepVerifier.create(rig.serverConn.events().filter(ConnectionEvent::isTerminal).take(1))
                    .expectNext(ConnectionEvent.LOST).expectComplete().verify(FaultRig.T);
            List<Integer> got = new ArrayList<>();
            StepVerifier.create(rig.serverConn.receive(InboundMessage::immediate))
                    .recordWith(() -> got)
                    .thenConsumeWhile(x -> true)
                    .expectError(ConnectionException.class).verify(FaultRig.T);
            // A gap-free run from the first: the overflowing one and any after it are kept, in order.
            assertTrue(got.size() >= 5, got.toString());
            for (int i = 0; i < got.size(); i++) {
                assertEquals(300 + i, got.get(i), got.toString());
            }
            // Every write the writer saw complete arrived, so it was delivered.
            for (int i = 0; i < n; i++) {
                if (w.error(i) == null) {
                    assertTrue(i < got.size(), "write " + i + " completed but its notification is missing: " + got);
                }
            }
        }
    }
}
