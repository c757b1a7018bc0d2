package io.cqflux.reactor.internal.connection;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link PeerControl#violation()} and {@link PeerControl#receivedBeyondGrant()} call
 * impossible: the words the peer writes are set here directly, as its RDMA writes would.
 */
class PeerControlTest {
    private static final long CREDIT = 0;
    private static final long GOODBYE_WORD = 16;

    private final AtomicReference<MemorySegment> mem = new AtomicReference<>();
    private PeerControl pc;

    @BeforeEach
    void registerWords() {
        Transport t = proxy(Transport.class, (m, a) -> {
            if (m.equals("register")) {
                mem.set((MemorySegment) a[0]);
                return proxy(LocalRegion.class, (m2, a2) -> m2.equals("segment") ? a[0] : null);
            }
            return null;
        });
        pc = PeerControl.register(t);
        pc.peer(proxy(RemoteRegion.class, (m, a) -> null));
    }

    @AfterEach
    void close() {
        pc.close();
    }

    private void word(long offset, long v) {
        mem.get().set(ValueLayout.JAVA_LONG, offset, v);
    }

    /**
     * Waits two confirmation intervals: a sleep, since {@code LockSupport.parkNanos} returns at once
     * for a thread that holds a permit and would skip the wait.
     */
    private static void pauseTwiceTheConfirmation() {
        try {
            Thread.sleep(java.time.Duration.ofNanos(2 * PeerControl.CONFIRM_NANOS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The check twice, CONFIRM_NANOS apart: an impossible value counts only when it stays. */
    private String confirmed() {
        String first = pc.violation();
        assertNull(first, "a value read once is only a suspect: " + first);
        pauseTwiceTheConfirmation();
        return pc.violation();
    }

    @Test
    void honestWords_areNoViolation() {
        assertNull(pc.violation(), "all zero, as registered");
        word(CREDIT, 16);
        assertNull(pc.violation());
        word(CREDIT, PeerControl.MAX_OUTSTANDING);
        assertNull(pc.violation(), "a count that grew up to the bound: as many outstanding as any peer can post");
        word(GOODBYE_WORD, PeerControl.GOODBYE);
        assertNull(pc.violation(), "the goodbye");
    }

    @Test
    void aPeerThatNeverReceives_writesNoReceivesOnce_andThatIsNoViolation() {
        word(CREDIT, PeerControl.NO_RECEIVES);
        assertNull(pc.violation());
        assertNull(pc.violation());
    }

    @Test
    void creditsBeyondAnyReceiveQueue_areAViolation_namingTheBound() {
        word(CREDIT, PeerControl.MAX_OUTSTANDING + 1);
        String v = confirmed();
        assertTrue(v != null && v.contains("" + (PeerControl.MAX_OUTSTANDING + 1))
                && v.contains("" + PeerControl.MAX_OUTSTANDING), v);
    }

    @Test
    void creditsGoingBack_areAViolation_namingBothCounts() {
        word(CREDIT, 10);
        assertNull(pc.violation());
        word(CREDIT, 9);
        String v = confirmed();
        assertTrue(v != null && v.contains("from 10 to 9"), v);
    }

    @Test
    void aNegativeCount_andNoReceivesAfterACount_andACountAfterNoReceives_areViolations() {
        word(CREDIT, -5);
        assertTrue(confirmed().contains("negative count -5"));
        pc.close();
        registerWords();
        word(CREDIT, 3);
        assertNull(pc.violation());
        word(CREDIT, PeerControl.NO_RECEIVES);
        assertTrue(confirmed().contains("after it granted 3"));
        pc.close();
        registerWords();
        word(CREDIT, PeerControl.NO_RECEIVES);
        assertNull(pc.violation());
        word(CREDIT, 4);
        assertTrue(confirmed().contains("grants 4 receives after it said it posts none"));
    }

    @Test
    void aGoodbyeWordOfAnyOtherValue_isAViolation() {
        word(GOODBYE_WORD, PeerControl.GOODBYE ^ 1);
        String v = confirmed();
        assertTrue(v != null && v.contains("goodbye word"), v);
    }

    @Test
    void aWordReadHalfWritten_thenWhole_isNoViolation() {
        word(CREDIT, 0xFF);
        assertNull(pc.violation());
        // A count going from 0xFF to 0x100 whose low byte landed first reads 0 for a moment: it
        // went back, but only until the rest of the word lands.
        word(CREDIT, 0);
        assertNull(pc.violation(), "a value read once is only a suspect");
        pauseTwiceTheConfirmation();
        word(CREDIT, 0x100);
        assertNull(pc.violation(), "the whole word is plausible");
        pauseTwiceTheConfirmation();
        assertNull(pc.violation());
    }

    @Test
    void aLiarThatChangesItsValue_isCaughtWhileItStaysImpossible() {
        word(CREDIT, 10);
        assertNull(pc.violation());
        word(CREDIT, -1);
        assertNull(pc.violation(), "the first impossible read is a suspect");
        pauseTwiceTheConfirmation();
        word(CREDIT, -2);
        String v = pc.violation();
        assertTrue(v != null && v.contains("negative count -2"), v);
    }

    @Test
    void halfWrittenReadsAgainAndAgain_eachFollowedByTheWholeWord_endNothing() {
        // Two honest carries (0xFF -> 0x100, 0x1FF -> 0x200), each read once half-written (the low
        // byte landed, the high one not yet): neither, nor both, is a lie.
        long[][] carries = {{0xFF, 0x000, 0x100}, {0x1FF, 0x100, 0x200}}; // before, torn, whole
        for (long[] carry : carries) {
            word(CREDIT, carry[0]);
            assertNull(pc.violation(), "the count before the carry, " + carry[0]);
            word(CREDIT, carry[1]);
            assertNull(pc.violation(), "a torn read, " + carry[1] + ", is only a suspect");
            pauseTwiceTheConfirmation();
            word(CREDIT, carry[2]);
            assertNull(pc.violation(), "the whole word " + carry[2]);
            pauseTwiceTheConfirmation();
        }
    }

    @Test
    void aMessageBeyondTheGrantedCount_isAViolation_andOneWithinIsNot() {
        pc.receivesPosted(2);
        pc.postGrant(proxy(io.cqflux.core.spi.Connection.class, (m, a) -> true), 1); // granted = 2
        pc.grantDone();
        assertNull(pc.receivedBeyondGrant());
        assertNull(pc.receivedBeyondGrant());
        pc.receivesPosted(1); // posted 3, granted still 2
        String v = pc.receivedBeyondGrant();
        assertTrue(v != null && v.contains("message 3") && v.contains("2 receives had been granted"), v);
    }

    @Test
    void aPeerWithoutControlWords_hasNeitherCheck() {
        PeerControl none = PeerControl.none();
        assertNull(none.violation());
        assertNull(none.receivedBeyondGrant());
    }

    private interface Answer {
        Object answer(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Answer a) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, m, args) -> m.getName().equals("toString") ? type.getSimpleName()
                        : a.answer(m.getName(), args == null ? new Object[0] : args)));
    }
}
