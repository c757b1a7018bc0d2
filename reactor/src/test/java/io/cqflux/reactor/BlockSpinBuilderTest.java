package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code Cqflux.Builder.blockSpin}: its bounds, and the default that spins only where a caller
 * can have a core of its own (the operation's {@code block()} itself: test kit's
 * {@code OperationBlockTest}).
 */
class BlockSpinBuilderTest {
    private static final int CPUS = Runtime.getRuntime().availableProcessors();
    private static final long DEFAULT = TimeUnit.MICROSECONDS.toNanos(Cqflux.Builder.DEFAULT_BLOCK_SPIN_MICROS);

    @Test
    void blockSpin_outsideItsRange_isRefusedNamingValueAndBound() {
        IllegalArgumentException neg = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().blockSpin(Duration.ofNanos(-1)));
        assertTrue(neg.getMessage().contains("PT-0.000000001S") && neg.getMessage().contains("[PT0S, PT0.001S]"),
                neg.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().blockSpin(Duration.ofMillis(2)));
        assertTrue(big.getMessage().contains("PT0.002S") && big.getMessage().contains("[PT0S, PT0.001S]"), big.getMessage());
        assertThrows(NullPointerException.class, () -> Cqflux.builder().blockSpin(null));
    }

    @Test
    void blockSpin_set_isUsedAsGiven_zeroIncluded() {
        assertEquals(0, Cqflux.builder().waitStrategy(WaitStrategy.BLOCKING).blockSpin(Duration.ZERO).blockSpinNanos());
        assertEquals(1_000_000, Cqflux.builder().waitStrategy(WaitStrategy.BUSY_POLL).blockSpin(Duration.ofMillis(1))
                .blockSpinNanos());
    }

    @Test
    void blockSpin_default_spinsOnlyWhenTheMachineHasACoreBeyondTheSpinningLoops() {
        // Sleeping loops leave every core but the caller's free.
        assertEquals(CPUS > 1 ? DEFAULT : 0, Cqflux.builder().waitStrategy(WaitStrategy.BLOCKING).blockSpinNanos());
        // As many spinning loops as processors: a spinning caller would only delay them.
        int loops = Math.min(CPUS, 64); // loops(n) allows 1..64
        long expected = CPUS > loops + 1 ? DEFAULT : 0;
        assertEquals(expected, Cqflux.builder().waitStrategy(WaitStrategy.BUSY_POLL).loops(loops).blockSpinNanos());
        assertEquals(expected, Cqflux.builder().waitStrategy(WaitStrategy.adaptive(100)).loops(loops).blockSpinNanos());
        // One busy loop: spins only from three processors on.
        assertEquals(CPUS > 2 ? DEFAULT : 0, Cqflux.builder().waitStrategy(WaitStrategy.BUSY_POLL).blockSpinNanos());
    }
}
