package io.cqflux.epoll.loop;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The loop's task queue: a closeable multi-producer single-consumer linked queue (after Vyukov's
 * intrusive MPSC queue, with a compare-and-set tail instead of an exchange so that it can be closed).
 *
 * <p>Producers: any thread, lock-free. Consumer: the loop thread only. {@link #close()} swaps a
 * sentinel into the tail, so every {@link #offer} either happened before it (and its task is still
 * polled, run or dropped) or fails: a task is never stranded in a queue nobody will read.
 *
 * <p>Between a producer's tail swap and its link store the consumer sees a gap: {@link #poll()} may
 * then return {@code null} while {@link #isEmpty()} is already {@code false}. The loop treats
 * "not empty" as "do not sleep", so the gap costs a spin, never a lost task.
 */
final class TaskQueue {

    private static final class Node {
        Node next;
        Runnable task;
        /** {@code System.nanoTime()} at the offer for a sampled task, else 0 (loop lag). */
        long submittedAt;

        Node(Runnable task) {
            this.task = task;
        }
    }

    private static final VarHandle TAIL;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            TAIL = l.findVarHandle(TaskQueue.class, "tail", Node.class);
            NEXT = l.findVarHandle(Node.class, "next", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final Node CLOSED = new Node(null);

    /** Consumer-owned: the last node taken (a stub whose task is already cleared). */
    private Node head;
    /** Producers' end; {@link #CLOSED} once closed. Accessed through {@link #TAIL}. */
    @SuppressWarnings("unused")
    private volatile Node tail;
    /** The tail as it was when closed: the consumer is done when {@link #head} reaches it. */
    private Node last;
    /**
     * Producers' sampling tick for the loop lag: every {@link #LAG_SAMPLE_EVERY}th offer is
     * stamped with {@code System.nanoTime()}. A plain field on purpose: producers race on it, which
     * only makes the sampling irregular, never wrong, and costs no atomic per offer.
     */
    private int lagTick;
    /** The stamp of the node {@link #poll()} took last (0: not sampled); consumer only. */
    long polledSubmittedAt;

    /** Offers stamped for the loop-lag sample: one in this many (a power of two). */
    static final int LAG_SAMPLE_EVERY = 8;

    TaskQueue() {
        Node stub = new Node(null);
        head = stub;
        tail = stub;
    }

    /**
     * Appends a task; any thread.
     *
     * @param task the task
     * @return {@code false} when the queue is closed
     */
    boolean offer(Runnable task) {
        Node n = new Node(task);
        if ((++lagTick & (LAG_SAMPLE_EVERY - 1)) == 0) {
            n.submittedAt = System.nanoTime();
        }
        for (;;) {
            Node t = (Node) TAIL.getVolatile(this);
            if (t == CLOSED) {
                return false;
            }
            if (TAIL.compareAndSet(this, t, n)) {
                NEXT.setRelease(t, n);
                return true;
            }
            SpinWait.pause();
        }
    }

    /** {@return the next task, or {@code null} when none is linked yet; consumer only} */
    Runnable poll() {
        Node next = (Node) NEXT.getAcquire(head);
        if (next == null) {
            return null;
        }
        head = next;
        Runnable r = next.task;
        next.task = null;
        polledSubmittedAt = next.submittedAt;
        return r;
    }

    /**
     * {@return whether no task was offered that the consumer has not taken; consumer only. A
     * volatile read of the tail, so that it orders against the loop's "going to sleep" store}
     */
    boolean isEmpty() {
        Node t = (Node) TAIL.getVolatile(this);
        return t == CLOSED ? head == last : head == t;
    }

    /**
     * Closes the queue: later offers fail. Consumer only; idempotent.
     */
    void close() {
        if (last == null) {
            Node t = (Node) TAIL.getAndSet(this, CLOSED);
            last = t == CLOSED ? head : t;
        }
    }

    /**
     * After {@link #close()}: takes the next task, waiting out a producer that has swapped the tail
     * but not yet linked its node (a few instructions on another thread).
     *
     * @return the next task, or {@code null} when every accepted task was taken
     */
    Runnable pollClosed() {
        for (;;) {
            if (head == last) {
                return null;
            }
            Runnable r = poll();
            if (r != null) {
                return r;
            }
            SpinWait.pause();
        }
    }
}
