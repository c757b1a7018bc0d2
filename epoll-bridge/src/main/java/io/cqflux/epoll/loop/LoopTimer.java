package io.cqflux.epoll.loop;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;

/*
 * Design.
 *
 * Why one structure per loop: per-connection deadlines and keep-alives as periodic tasks of a
 * shared scheduler cost a wake-up of some thread per connection per period, and a hand-over to
 * the loop each time; a loop with thousands of idle connections then works in proportion to what
 * is registered. Here every deadline of the loop lives in one binary min-heap that the loop thread
 * alone touches: scheduling and cancelling are O(log n) with no allocation beyond the handle, the
 * loop reads the earliest deadline once per turn (O(1)) and sleeps in epoll_wait no longer than
 * until it, and a turn runs only the timers that are due.
 *
 * Why a heap and not a hashed wheel: a wheel's tick bounds its precision and makes an idle loop
 * wake on every tick while any timer is pending; a heap lets the sleep last until the earliest
 * deadline, however far, and keeps the order of deadlines exact. Ties run in scheduling order
 * (a sequence number breaks them).
 *
 * Deadlines are System.nanoTime() values compared by subtraction, so they are right across the
 * counter's wrap as long as no deadline is more than 2^63 ns (292 years) away; delays are bounded
 * far below that.
 *
 * A timer due in a turn runs in that turn; one that a running timer schedules, even with no
 * delay, waits for the next turn, so a timer that re-arms itself cannot hold the loop.
 */

/**
 * The timers of one {@link EventLoop}: a binary min-heap of deadlines, run from the loop.
 *
 * <p>Thread safety and lifetime: loop thread only, not thread-safe; holds no native memory.
 */
public final class LoopTimer {

    /** The longest delay a timer may have: 365 days. */
    public static final long MAX_DELAY_NANOS = 365L * 24 * 3600 * 1_000_000_000L;

    private Timeout[] heap = new Timeout[16];
    private int size;
    private long nextSeq;
    /** Timers due in the current {@link #runExpired} call, taken off the heap before any runs. */
    private Timeout[] due = new Timeout[16];

    /** The loop whose thread alone may use this set; null for a set of its own (unit tests). */
    private final EventLoop loop;

    /** Creates an empty timer set with no loop (unit tests: any one thread). */
    LoopTimer() {
        this(null);
    }

    /**
     * Creates an empty timer set.
     *
     * @param loop the loop whose thread alone uses it (asserted where a caller outside this
     *     package reaches it: {@link Timeout#cancel()})
     */
    LoopTimer(EventLoop loop) {
        this.loop = loop;
    }

    /** {@return whether the caller is the owning loop's thread (always, for a set with no loop)} */
    private boolean onLoopThread() {
        return loop == null || loop.inEventLoop();
    }

    /**
     * A scheduled timer: cancel it, or ask whether it is still pending.
     *
     * <p>Thread safety: the loop thread of the loop that scheduled it only.
     */
    public static final class Timeout {
        private static final int PENDING = 0;
        private static final int CANCELLED = 1;
        private static final int EXPIRED = 2;

        private final LoopTimer owner;
        private final Runnable task;
        private final long deadline;
        private final long seq;
        /** Position in the heap while pending; -1 otherwise. */
        private int index = -1;
        private int state = PENDING;

        private Timeout(LoopTimer owner, Runnable task, long deadline, long seq) {
            this.owner = owner;
            this.task = task;
            this.deadline = deadline;
            this.seq = seq;
        }

        /**
         * Cancels the timer: its task will not run. Loop thread only (the heap is not
         * thread-safe; hand the call over with {@link EventLoop#execute} from elsewhere).
         *
         * @return whether it was pending (false when it already ran or was cancelled)
         */
        public boolean cancel() {
            assert owner.onLoopThread() : "cancel of " + this + " off its loop's thread, on "
                    + Thread.currentThread().getName();
            if (state != PENDING) {
                return false;
            }
            state = CANCELLED;
            if (index >= 0) {
                owner.removeAt(index);
            }
            return true;
        }

        /** {@return whether the timer has neither run nor been cancelled} */
        public boolean isPending() {
            return state == PENDING;
        }

        /** {@return the deadline, a {@link System#nanoTime()} value} */
        public long deadlineNanos() {
            return deadline;
        }

        @Override
        public String toString() {
            return "timer " + task + " (" + (state == PENDING ? "pending" : state == CANCELLED ? "cancelled" : "expired")
                    + ")";
        }
    }

    /**
     * Schedules {@code task} to run on the loop once {@code delayNanos} have passed since {@code now}.
     *
     * @param now the current {@link System#nanoTime()}
     * @param delayNanos the delay, in [0, {@link #MAX_DELAY_NANOS}]
     * @param task what to run
     * @return the timer's handle
     * @throws IllegalArgumentException when the delay is negative or above {@link #MAX_DELAY_NANOS}
     */
    Timeout schedule(long now, long delayNanos, Runnable task) {
        Objects.requireNonNull(task, "task");
        if (delayNanos < 0 || delayNanos > MAX_DELAY_NANOS) {
            throw new IllegalArgumentException("timer delay " + delayNanos + " ns is outside [0, " + MAX_DELAY_NANOS
                    + "] ns");
        }
        Timeout t = new Timeout(this, task, now + delayNanos, nextSeq++);
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        heap[size] = t;
        t.index = size;
        size++;
        siftUp(t.index);
        return t;
    }

    /** {@return the timers pending} */
    int size() {
        return size;
    }

    /** {@return whether no timer is pending} */
    boolean isEmpty() {
        return size == 0;
    }

    /**
     * {@return the earliest pending deadline} Only when {@link #isEmpty()} is false.
     */
    long nextDeadline() {
        assert size > 0;
        return heap[0].deadline;
    }

    /**
     * Nanoseconds until the earliest deadline, for the loop's sleep.
     *
     * @param now the current {@link System#nanoTime()}
     * @return 0 when a timer is due, -1 when none is pending, else the wait
     */
    long nanosUntilNext(long now) {
        if (size == 0) {
            return -1;
        }
        long d = heap[0].deadline - now;
        return d < 0 ? 0 : d;
    }

    /**
     * Runs the timers whose deadline is at or before {@code now}, earliest first (ties in
     * scheduling order); timers they schedule wait for the next call.
     *
     * @param now the current {@link System#nanoTime()}
     * @param runner runs one task (the loop's guard: logs what it throws)
     * @return the timers run
     */
    int runExpired(long now, Consumer<Runnable> runner) {
        int n = 0;
        while (size > 0 && heap[0].deadline - now <= 0) {
            Timeout t = heap[0];
            removeAt(0);
            if (n == due.length) {
                due = Arrays.copyOf(due, n * 2);
            }
            due[n++] = t;
        }
        int ran = 0;
        try {
            for (int i = 0; i < n; i++) {
                Timeout t = due[i];
                due[i] = null;
                if (t.state == Timeout.PENDING) { // an earlier task of this batch may have cancelled it
                    t.state = Timeout.EXPIRED;
                    ran++;
                    runner.accept(t.task);
                }
            }
        } finally {
            Arrays.fill(due, 0, n, null);
        }
        return ran;
    }

    /** Cancels every pending timer (the loop's end): none of their tasks runs. */
    void cancelAll() {
        for (int i = 0; i < size; i++) {
            heap[i].state = Timeout.CANCELLED;
            heap[i].index = -1;
            heap[i] = null;
        }
        size = 0;
    }

    private void removeAt(int i) {
        Timeout removed = heap[i];
        removed.index = -1;
        size--;
        if (i == size) {
            heap[size] = null;
            return;
        }
        Timeout last = heap[size];
        heap[size] = null;
        heap[i] = last;
        last.index = i;
        siftDown(i);
        if (heap[i] == last) {
            siftUp(i);
        }
    }

    private static boolean before(Timeout a, Timeout b) {
        long d = a.deadline - b.deadline;
        return d < 0 || (d == 0 && a.seq < b.seq);
    }

    private void siftUp(int i) {
        Timeout t = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Timeout p = heap[parent];
            if (!before(t, p)) {
                break;
            }
            heap[i] = p;
            p.index = i;
            i = parent;
        }
        heap[i] = t;
        t.index = i;
    }

    private void siftDown(int i) {
        Timeout t = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(heap[right], heap[child])) {
                child = right;
            }
            if (!before(heap[child], t)) {
                break;
            }
            heap[i] = heap[child];
            heap[i].index = i;
            i = child;
        }
        heap[i] = t;
        t.index = i;
    }
}
