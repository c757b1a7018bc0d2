package io.cqflux.epoll.loop;

/*
 * Design: the threads that do an instance's background work (its set-up thread, its close
 * thread) may run at a lower CPU priority than its event loops, where the instance asks for it.
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
 *  - a thread starts at its creator's nice value (sched(7)), so whatever runs on a lowered thread
 *    passes the priority on to any thread it starts; which is why it is the instance's choice;
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
     * @return the thread's nice value afterwards, as nice(2) tells it: -1 for a thread that ran at
     *     -20, or when the kernel refused (it has no reason to for an increment that lowers the
     *     priority; nothing changed then)
     */
    public static int lowerCallingThread() {
        return Libc.nice(Libc.threadErrno(), INCREMENT);
    }
}
