package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
}
