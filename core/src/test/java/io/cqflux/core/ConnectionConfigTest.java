package io.cqflux.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConnectionConfigTest {

    @Test
    void completionQueueSmallerThanItsQueues_isRejectedNamingBothValues() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                new ConnectionConfig(64, 64, 100, 0, Duration.ofSeconds(1), false, CompletionLevel.DELIVERY));
        assertTrue(e.getMessage().contains("completionQueueSize 100") && e.getMessage().contains("128")
                && e.getMessage().contains("overrun"), e.getMessage());
    }

    @Test
    void separateReceiveQueue_needsOnlySendQueueOnMainCq() {
        ConnectionConfig c = new ConnectionConfig(64, 64, 64, 64, Duration.ofSeconds(1), false, CompletionLevel.DELIVERY);
        assertEquals(64, c.completionQueueSize());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                new ConnectionConfig(64, 64, 64, 32, Duration.ofSeconds(1), false, CompletionLevel.DELIVERY));
        assertTrue(e.getMessage().contains("receiveCompletionQueueSize 32"), e.getMessage());
    }

    @Test
    void default_sharesOneCq_andASeparateReceiveCqIsOneWitherAway() {
        assertEquals(0, ConnectionConfig.DEFAULT.receiveCompletionQueueSize());
        assertEquals(256, ConnectionConfig.DEFAULT.completionQueueSize(), "128 sends + 128 receives");
        ConnectionConfig sep = ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128);
        assertEquals(128, sep.receiveCompletionQueueSize());
        assertEquals(256, sep.completionQueueSize(), "the main CQ never shrinks");
        ConnectionConfig back = new ConnectionConfig(128, 128, 128, 128, Duration.ofSeconds(1), false,
                CompletionLevel.DELIVERY).withReceiveCompletionQueueSize(0);
        assertEquals(256, back.completionQueueSize(), "receives moved to the main CQ: it grows to hold them");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(64));
        assertTrue(e.getMessage().contains("receiveCompletionQueueSize 64") && e.getMessage().contains("overrun"),
                e.getMessage());
    }

    @Test
    void sharedCqOverItsBound_isRejectedNamingBothQueues_andASeparateReceiveCqLiftsIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionConfig.DEFAULT.withSendQueueSize(65_500));
        assertTrue(e.getMessage().contains("sendQueueSize 65500 + receiveQueueSize 128 = 65628")
                && e.getMessage().contains("65536") && e.getMessage().contains("withReceiveCompletionQueueSize(128)"),
                e.getMessage());
        IllegalArgumentException r = assertThrows(IllegalArgumentException.class,
                () -> ConnectionConfig.DEFAULT.withReceiveQueueSize(65_500));
        assertTrue(r.getMessage().contains("sendQueueSize 128 + receiveQueueSize 65500 = 65628"), r.getMessage());
        ConnectionConfig big = ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128).withSendQueueSize(65_500);
        assertEquals(65_500, big.completionQueueSize());
        IllegalArgumentException back = assertThrows(IllegalArgumentException.class,
                () -> big.withReceiveCompletionQueueSize(0));
        assertTrue(back.getMessage().contains("sendQueueSize 65500 + receiveQueueSize 128"), back.getMessage());
        // One queue over its own bound is named alone: no advice about a shared CQ that would not help.
        IllegalArgumentException alone = assertThrows(IllegalArgumentException.class,
                () -> ConnectionConfig.DEFAULT.withSendQueueSize(70_000));
        assertTrue(alone.getMessage().contains("sendQueueSize 70000 is outside [1, 65536]"), alone.getMessage());
    }

    @Test
    void sizesOutsideBounds_areRejectedNamingTheBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () ->
                ConnectionConfig.DEFAULT.withSendQueueSize(0));
        assertTrue(e.getMessage().contains("sendQueueSize 0") && e.getMessage().contains("[1, 65536]"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ConnectionConfig.DEFAULT.withSendQueueSize(1 << 17));
        assertThrows(IllegalArgumentException.class, () -> ConnectionConfig.DEFAULT.withTimeout(Duration.ZERO));
        // Past Long.MAX_VALUE milliseconds: the bound named, not an ArithmeticException from toMillis().
        e = assertThrows(IllegalArgumentException.class,
                () -> ConnectionConfig.DEFAULT.withTimeout(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(e.getMessage().contains("at most " + Integer.MAX_VALUE + " ms"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ConnectionConfig.DEFAULT.withTimeout(Duration.ofNanos(999_999)));
        assertEquals(Duration.ofMillis(Integer.MAX_VALUE),
                ConnectionConfig.DEFAULT.withTimeout(Duration.ofMillis(Integer.MAX_VALUE)).timeout());
    }

    @Test
    void withers_growTheCompletionQueueToStaySafe() {
        ConnectionConfig c = ConnectionConfig.DEFAULT.withSendQueueSize(1024);
        assertEquals(1024, c.sendQueueSize());
        assertTrue(c.completionQueueSize() >= 1024);
        ConnectionConfig r = ConnectionConfig.DEFAULT.withReceiveQueueSize(512);
        assertEquals(0, r.receiveCompletionQueueSize(), "the default has receives on the main CQ");
        assertTrue(r.completionQueueSize() >= 128 + 512, "main CQ " + r.completionQueueSize());
        ConnectionConfig sep = ConnectionConfig.DEFAULT.withReceiveCompletionQueueSize(128).withReceiveQueueSize(512);
        assertTrue(sep.receiveCompletionQueueSize() >= 512);
        assertEquals(CompletionLevel.TRANSMIT, c.withWriteCompletion(CompletionLevel.TRANSMIT).writeCompletion());
        assertTrue(c.withSharedCompletionChannel(true).sharedCompletionChannel());
    }
}
