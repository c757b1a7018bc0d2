package io.cqflux.epoll.loop;

/*
 * Design: the threads that do an instance's background work (its set-up thread, its close
 * thread) run at a lower CPU priority than its event loops.
 *
 * Why: a storm of connects or closes is throughput work, an established connection's operation
 * is latency work. Where the runnable threads outnumber the free cores (a server loop, the set-up
 * and close threads beside it, the application's own threads), the kernel's fair scheduler
 * shares a core between a loop and a set-up thread of equal weight in slices of milliseconds, and
 * an operation of an established connection waits for its loop's next slice however little the
 * loop has to do. With the background thread's weight lowered, a loop that wakes preempts it at
 * once, and the background work still gets every cycle the loops leave, and a share of a
 * saturated core by its weight (nice +19: about 1.5 % of a nice 0 thread's), so it slows down
 * under load but never stops.
 *
 * Facts this rests on (setpriority(2) NOTES and BUGS, nice(2), sched(7) "The nice value"):
 *  - on Linux the nice value is an attribute of each thread, not of the process; glibc's nice(3)
 *    is getpriority then setpriority(PRIO_PROCESS, 0, ...), and "0" is the calling thread;
 *  - any thread may raise its own nice value (lower its priority) without privilege; lowering it
 *    again needs CAP_SYS_NICE or RLIMIT_NICE. So a thread lowered stays lowered: only a thread
 *    that does background work for its whole life is lowered, never a pooled or borrowed one;
 *  - the increment is relative, so a JVM started under nice(1) keeps its offset; the kernel caps
 *    the result at 19.
 *
 * BackgroundPriorityTest checks that the calling thread alone moves, by the increment.
 */

/**
 * Lowers the CPU priority of a thread that does background work for an instance (see the design
 * comment at the top of this file).
 *
 * <p>Thread safety: any thread, for itself only.
 */
public final class BackgroundPriority {

    /**
     * What a background thread adds to its nice value: the most there is, since the loops' latency
     * is what the priority is for and a background thread still gets what the loops leave.
     */
    public static final int INCREMENT = 19;

    private BackgroundPriority() {
    }

    /**
     * Lowers the calling thread's CPU priority by {@link #INCREMENT} (nice(2)). Call it first
     * thing on a thread that does background work for the rest of its life: it cannot be undone.
     *
     * @return the thread's nice value afterwards, or {@code Integer.MIN_VALUE} when the kernel
     *     refused (nothing changed then; the thread runs on at its priority)
     */
    public static int lowerCallingThread() {
        int rc = Libc.nice(Libc.threadErrno(), INCREMENT);
        return rc >= 0 ? rc : rc == -1 ? -1 : Integer.MIN_VALUE;
    }
}
