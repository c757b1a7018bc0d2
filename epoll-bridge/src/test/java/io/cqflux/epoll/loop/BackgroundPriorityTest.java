package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The facts of BackgroundPriority's design comment, on this kernel: nice(2) moves the calling
 * thread alone, by the increment, capped at 19, and a thread such a thread starts inherits its
 * value.
 */
class BackgroundPriorityTest {

    /**
     * {@return a thread's nice value, field 19 of /proc/thread-self/stat (proc(5)), read by the
     * thread itself} The fields are counted after the command's closing parenthesis, since the
     * command may hold spaces and parentheses.
     */
    static int niceOfCallingThread() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Integer.parseInt(after[19 - 3]); // field 3 (state) is after[0]
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int[] onFreshThread(java.util.function.IntSupplier action) throws Exception {
        CompletableFuture<int[]> result = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                int before = niceOfCallingThread();
                int returned = action.getAsInt();
                int after = niceOfCallingThread();
                int[] child = new int[1];
                Thread grandchild = Thread.ofPlatform().start(() -> child[0] = niceOfCallingThread());
                grandchild.join();
                result.complete(new int[] {before, returned, after, child[0]});
            } catch (Throwable x) {
                result.completeExceptionally(x);
            }
        });
        t.join(TimeUnit.SECONDS.toMillis(10));
        return result.get(10, TimeUnit.SECONDS);
    }

    @Test
    void lowerCallingThread_addsTheIncrementToThatThreadAlone_cappedAt19_andItsChildrenInheritIt()
            throws Exception {
        int mine = niceOfCallingThread();
        int[] r = onFreshThread(BackgroundPriority::lowerCallingThread);
        int expected = Math.min(19, r[0] + BackgroundPriority.INCREMENT);
        assertEquals(mine, r[0], "a fresh thread starts at its creator's nice value");
        assertEquals(expected, r[1], "what lowerCallingThread returned");
        assertEquals(expected, r[2], "the thread's nice value afterwards");
        assertEquals(expected, r[3], "a thread it starts inherits the lowered value");
        assertEquals(mine, niceOfCallingThread(), "the calling thread's neighbour is unchanged");
    }

    @Test
    void nice_refusesAnIncrementThatWouldRaiseThePriority_orIsOutOfRange_beforeTheCall() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Libc.nice(Libc.threadErrno(), -1));
        assertEquals("nice increment -1 is outside [0, 39]: a thread only ever lowers its own priority here",
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Libc.nice(Libc.threadErrno(), 40));
    }

    @Test
    void nice_ofZero_changesNothing_andReturnsTheCurrentValue() throws Exception {
        int[] r = onFreshThread(() -> Libc.nice(Libc.threadErrno(), 0));
        assertEquals(r[0], r[1]);
        assertEquals(r[0], r[2]);
    }
}
