package io.cqflux.reactor;

/**
 * The pending table of one connection: maps the 64-bit {@code wr_id} of a posted operation back
 * to its owner. Loop-confined; no allocation after construction.
 *
 * <p>Layout of a context: bits 0–19 the slot index, bit 20 the "part" flag (the unsignaled first
 * half of a two-part operation such as a durable write, whose completion only ever arrives as an
 * error), bits 21–62 a per-slot generation counter, bit 63 reserved for receive contexts
 * ({@link #RECEIVE_TAG}). The generation makes a stale or late completion for a slot that has since
 * been reused miss: {@link #lookup} returns {@code null} instead of the new owner.
 */
final class PendingTable {

    /** Bits of the slot index. */
    static final int INDEX_BITS = 20;
    /** Largest capacity. */
    static final int MAX_CAPACITY = 1 << INDEX_BITS;
    /** Set on the context of the unsignaled part of a two-part operation. */
    static final long PART_BIT = 1L << INDEX_BITS;
    /** Set on receive contexts, which live outside this table. */
    static final long RECEIVE_TAG = 1L << 63;
    private static final int GEN_SHIFT = INDEX_BITS + 1;
    private static final long GEN_MASK = (1L << (63 - GEN_SHIFT)) - 1;
    private static final long INDEX_MASK = MAX_CAPACITY - 1;

    private final Object[] owners;
    private final long[] generations;
    private final int[] free;
    private int freeTop;

    /** @param capacity the number of slots, 1..{@link #MAX_CAPACITY} */
    PendingTable(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("pending table capacity " + capacity + " is outside [1, "
                    + MAX_CAPACITY + "]");
        }
        owners = new Object[capacity];
        generations = new long[capacity];
        free = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            free[i] = capacity - 1 - i;
        }
        freeTop = capacity;
    }

    /** {@return the number of slots} */
    int capacity() {
        return owners.length;
    }

    /** {@return the number of slots in use} */
    int used() {
        return owners.length - freeTop;
    }

    /** {@return whether a slot is free} */
    boolean hasFree() {
        return freeTop > 0;
    }

    /**
     * Takes a slot.
     *
     * @param owner the operation
     * @return its context ({@code wr_id}), never negative
     * @throws IllegalStateException when the table is full (callers check {@link #hasFree()})
     */
    long acquire(Object owner) {
        if (freeTop == 0) {
            throw new IllegalStateException("pending table full (" + owners.length + " slots)");
        }
        int index = free[--freeTop];
        long gen = (generations[index] + 1) & GEN_MASK;
        generations[index] = gen;
        owners[index] = owner;
        return (gen << GEN_SHIFT) | index;
    }

    /**
     * Finds the owner of a context.
     *
     * @param context a completion's context, with or without {@link #PART_BIT}
     * @return the owner, or {@code null} when the context is stale, foreign or malformed
     */
    Object lookup(long context) {
        if (context < 0) {
            return null;
        }
        int index = (int) (context & INDEX_MASK);
        if (index >= owners.length) {
            return null;
        }
        long gen = (context >>> GEN_SHIFT) & GEN_MASK;
        return generations[index] == gen ? owners[index] : null;
    }

    /**
     * Frees the slot of a context; a stale context is ignored.
     *
     * @param context the context returned by {@link #acquire}
     * @return whether a slot was freed
     */
    boolean release(long context) {
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
    void forEach(Visitor visitor) {
        for (int i = 0; i < owners.length; i++) {
            Object o = owners[i];
            if (o != null) {
                visitor.visit((generations[i] << GEN_SHIFT) | i, o);
            }
        }
    }

    /** Receives the entries of {@link #forEach}. */
    @FunctionalInterface
    interface Visitor {
        /**
         * @param context the slot's current context
         * @param owner its owner
         */
        void visit(long context, Object owner);
    }
}
