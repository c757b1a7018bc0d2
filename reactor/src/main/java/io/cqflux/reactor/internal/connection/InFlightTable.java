package io.cqflux.reactor.internal.connection;

import io.cqflux.core.spi.Connection;
import io.cqflux.reactor.internal.op.OpKind;
import io.cqflux.reactor.internal.op.OpMono;

/*
 * Design: the one owner of what was posted on a connection.
 *
 * Every work request cqflux posts carries a 64-bit context (librpma's op_context, which becomes
 * ibv_wc.wr_id; libfabric's op_context). This class assigns it, keeps the only table from it back
 * to the posted thing, and is the only code that knows its bit layout. Transports hand the
 * context back with what the provider reported, nothing more.
 *
 *   bits  0..19  slot index (capacity <= 2^20)
 *   bit   20     PART: set on the unsignaled first half of a two-part operation (a durable
 *                write's write). That work request completes only on error (it is posted with
 *                "completion on error", rpma_write(3) RPMA_F_COMPLETION_ON_ERROR; libfabric
 *                FI_SELECTIVE_COMPLETION without FI_COMPLETION), and such an error never frees
 *                the slot: the signaled second half still owns it.
 *   bits 21..46  the slot's generation, incremented on every acquire and never 0 (26 bits: it
 *                repeats after 2^26 - 1 reuses of one slot). A late or stale completion for a
 *                slot that has been reused misses instead of completing the new owner; and no
 *                context is ever 0, which libfabric's tcp provider reports for a peer's
 *                write-with-immediate that consumed no posted receive.
 *   bits 47..62  TRANSPORT: always 0 here. They belong to the transport: the SPI defines them
 *                as Connection.TRANSPORT_CONTEXT_SHIFT and TRANSPORT_CONTEXT_BITS (the code
 *                uses those names; this table is the one place that spells them out). The fabric
 *                transport's completion-queue groups put the connection's member index there,
 *                so that an entry of a CQ that several connections share, which names no
 *                endpoint, reaches its connection; the transport clears them again before the
 *                completion comes back here.
 *   bit  63      0: contexts are never negative.
 *
 * Sends and receives share the table: a slot's owner is an OpMono (send side: read, write, flush,
 * atomic write, send, durable write) or a ReceiveBuffer (a posted receive).
 *
 * Credits (send side only). A connection may have at most `creditLimit` send-queue slots in
 * use: the send queue's depth, and no more than the part of the main completion queue that
 * receives cannot use (so that neither the SQ nor the CQ can overrun; libfabric's tcp provider
 * ignores queue sizes and never refuses a post, so these credits are the only bound). One
 * operation takes `OpKind.credits` credits: 1, or 2 for a durable write, whose unsignaled write
 * keeps its SQ slot until the following signaled flush retires it in order (ibv_post_send(3):
 * an unsignaled WR's slot is freed by the next signaled completion). Credits come back when the
 * signaled completion arrives, or when the connection's native objects are destroyed. Receives
 * take a slot but no credit: the receive queue's depth bounds them.
 *
 * Storage grows with use: the arrays start at INITIAL_SLOTS (or the capacity, if smaller) and
 * double when every slot is taken, up to the capacity, so that an idle connection of a server with
 * thousands holds a few hundred bytes here rather than its whole queue depth. A busy connection
 * reaches its working size within its first round of posts and allocates nothing after that.
 * Growth keeps every index and generation: a context handed out before stays valid, and the
 * indices a fresh table hands out first (freshContext) are the same.
 *
 * Loop-confined.
 */

/**
 * The in-flight table of one connection: context layout, slots and send credits (see the design
 * comment at the top of this file). Loop-confined.
 */
public final class InFlightTable {

    /** Bits of the slot index. */
    public static final int INDEX_BITS = 20;
    /** Largest capacity (send credits plus receive slots). */
    public static final int MAX_CAPACITY = 1 << INDEX_BITS;
    private static final long PART_BIT = 1L << INDEX_BITS;
    private static final int GEN_SHIFT = INDEX_BITS + 1;
    private static final long GEN_MASK = (1L << (Connection.TRANSPORT_CONTEXT_SHIFT - GEN_SHIFT)) - 1;
    private static final long INDEX_MASK = MAX_CAPACITY - 1;

    /** Slots a new table holds before it first grows. */
    static final int INITIAL_SLOTS = 16;

    /** Slots the table may grow to: send credits plus receive slots. */
    private final int capacity;
    private Object[] owners;
    private long[] generations;
    private int[] free;
    private int freeTop;
    private final int creditLimit;
    private int credits;

    /**
     * @param creditLimit send-queue credits, at least 1
     * @param receiveSlots slots for posted receives, at least 0
     */
    public InFlightTable(int creditLimit, int receiveSlots) {
        long capacity = (long) creditLimit + receiveSlots;
        if (creditLimit < 1 || receiveSlots < 0 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("in-flight table of " + creditLimit + " send credits and "
                    + receiveSlots + " receive slots is outside [1, " + MAX_CAPACITY + "] slots");
        }
        this.creditLimit = creditLimit;
        this.credits = creditLimit;
        this.capacity = (int) capacity;
        int n = Math.min(this.capacity, INITIAL_SLOTS);
        owners = new Object[n];
        generations = new long[n];
        free = new int[n];
        pushFree(0, n);
    }

    /** Pushes slots {@code from..to-1} on the free stack so that {@code from} is taken first. */
    private void pushFree(int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            free[freeTop++] = i;
        }
    }

    /** Doubles the arrays (at most to the capacity); every slot in use is still in use. */
    private void grow() {
        int n = owners.length;
        int m = (int) Math.min(capacity, 2L * n);
        owners = java.util.Arrays.copyOf(owners, m);
        generations = java.util.Arrays.copyOf(generations, m);
        free = java.util.Arrays.copyOf(free, m);
        pushFree(n, m);
    }

    // ---------------------------------------------------------------- slots and contexts

    /** {@return the number of slots the table may hold: send credits plus receive slots} */
    public int capacity() {
        return capacity;
    }

    /** {@return the number of slots it holds now (grown with use, at most the capacity)} */
    int allocated() {
        return owners.length;
    }

    /** {@return the number of slots in use} */
    public int used() {
        return owners.length - freeTop;
    }

    /**
     * Takes a slot.
     *
     * @param owner the operation or receive buffer
     * @return its context, never 0 and never negative
     * @throws IllegalStateException when the table is full (callers hold credits or a receive
     *     slot first, so this means a bookkeeping bug)
     */
    public long acquire(Object owner) {
        if (freeTop == 0) {
            if (owners.length == capacity) {
                throw new IllegalStateException("in-flight table full (" + capacity + " slots)");
            }
            grow();
        }
        int index = free[--freeTop];
        long gen = (generations[index] + 1) & GEN_MASK;
        if (gen == 0) {
            gen = 1;
        }
        generations[index] = gen;
        owners[index] = owner;
        return (gen << GEN_SHIFT) | index;
    }

    /**
     * {@return the context that the {@code i}-th {@link #acquire} of a new table returns} For
     * receives posted before the table exists (before a server accepts: the connection, and its
     * table, come with the accept); the table then acquires them first, in order, and gets these.
     *
     * @param i 0 for the first acquire
     */
    static long freshContext(int i) {
        return (1L << GEN_SHIFT) | i;
    }

    /**
     * Finds the owner of a context.
     *
     * @param context a completion's context, with or without the part bit
     * @return the owner, or {@code null} when the context is stale, foreign, 0 or malformed
     */
    public Object lookup(long context) {
        if (context <= 0 || (context & Connection.TRANSPORT_CONTEXT_MASK) != 0) {
            return null; // the transport's bits left set: not a context this table handed out
        }
        int index = (int) (context & INDEX_MASK);
        if (index >= owners.length) {
            return null;
        }
        long gen = (context >>> GEN_SHIFT) & GEN_MASK;
        return generations[index] == gen ? owners[index] : null;
    }

    /**
     * @param context a context from {@link #acquire}
     * @return the context of the unsignaled first half of the same two-part operation
     */
    public static long part(long context) {
        return context | PART_BIT;
    }

    /**
     * @param context a completion's context
     * @return whether it is the first half of a two-part operation ({@link #part})
     */
    public static boolean isPart(long context) {
        return (context & PART_BIT) != 0;
    }

    /**
     * Frees the slot of a context; a stale context is ignored.
     *
     * @param context the context returned by {@link #acquire}
     * @return whether a slot was freed
     */
    public boolean release(long context) {
        if (lookup(context) == null) {
            return false;
        }
        int index = (int) (context & INDEX_MASK);
        owners[index] = null;
        free[freeTop++] = index;
        return true;
    }

    /**
     * Visits every owner in use.
     *
     * @param visitor receives the context and the owner
     */
    public void forEach(Visitor visitor) {
        for (int i = 0; i < owners.length; i++) {
            Object o = owners[i];
            if (o != null) {
                visitor.visit((generations[i] << GEN_SHIFT) | i, o);
            }
        }
    }

    /** Receives the entries of {@link #forEach}. */
    @FunctionalInterface
    public interface Visitor {
        /**
         * @param context the slot's current context
         * @param owner its owner
         */
        void visit(long context, Object owner);
    }

    // ---------------------------------------------------------------- send credits

    /** {@return the send-queue credits of the connection} */
    public int creditLimit() {
        return creditLimit;
    }

    /** {@return the credits free right now} */
    public int credits() {
        return credits;
    }

    /** {@return the credits held by operations in flight} */
    public int creditsInUse() {
        return creditLimit - credits;
    }

    /**
     * Takes credits if that many are free.
     *
     * @param n the operation's credits
     * @return whether they were taken
     */
    public boolean tryTakeCredits(int n) {
        if (credits < n) {
            return false;
        }
        credits -= n;
        return true;
    }

    /**
     * Gives credits back.
     *
     * @param n credits an operation held
     */
    public void returnCredits(int n) {
        credits += n;
        assert credits <= creditLimit : "credits " + credits + " above the limit " + creditLimit;
    }
}
