package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Messaging, streams and buffers as a hostile user drives them, over fabric/tcp on 127.0.0.1:
 * refusals that name what they refuse, and release rules counted afterwards.
 */
class MessagingHostileTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void send_longerThanThePeersReceiveBuffer_andARegionOfAnotherConnection_areRefusedNamingTheConnection() {
        rig = new FaultRig(b -> b.receiveBufferSize(1024), b -> b.bufferPool(4, 8192));
        String name = rig.conn.description();
        StepVerifier.create(rig.conn.send(new byte[2000]))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains("2000") && e.getMessage().contains("1024"), e.getMessage());
                    assertTrue(e.getMessage().contains(name), e.getMessage());
                    assertFalse(e.getMessage().contains("connection null"), e.getMessage());
                })
                .verify(T);
        assertEquals(0, rig.client.buffers().leased(), "the refused send's staging buffer went back");
        RdmaConnection other = rig.connectOne();
        StepVerifier.create(other.write(rig.remote(), 0, rig.local, 0, 8))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains(other.description()), e.getMessage());
                    assertFalse(e.getMessage().endsWith("null"), e.getMessage());
                })
                .verify(T);
    }

    @Test
    void receive_messageIsAnImmutableCopy_neitherItsArrayNorAReturnedOneChangesIt() throws Exception {
        rig = new FaultRig();
        java.util.concurrent.BlockingQueue<Message> got = new java.util.concurrent.LinkedBlockingQueue<>();
        reactor.core.Disposable d = rig.serverConn.receive().subscribe(got::add);
        try {
            rig.conn.send(new byte[] {1, 2, 3}).block(T);
            rig.conn.send(new byte[] {1, 2, 3}).block(T);
            Message m = got.poll(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            Message same = got.poll(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertNotNull(m);
            assertNotNull(same);
            m.data()[0] = 9;
            assertArrayEquals(new byte[] {1, 2, 3}, m.data(), "a returned array is a copy");
            assertEquals(same, m, "two messages with the same bytes");
            assertEquals(same.hashCode(), m.hashCode());
        } finally {
            d.dispose();
        }
        byte[] given = {4, 5};
        Message built = new Message(io.cqflux.core.Opcode.RECEIVE, given, false, 0, 2);
        given[0] = 0;
        assertArrayEquals(new byte[] {4, 5}, built.data(), "the constructor copies");
        assertNotEquals(built, new Message(io.cqflux.core.Opcode.RECEIVE, new byte[] {4, 6}, false, 0, 2));
    }
}
