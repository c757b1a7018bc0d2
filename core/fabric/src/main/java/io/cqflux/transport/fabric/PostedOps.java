package io.cqflux.transport.fabric;

import io.cqflux.core.Opcode;

/**
 * The operations of one connection that can still produce a completion: every signaled post
 * and every posted receive, keyed by context (duplicates allowed). It tells the completion
 * queue what was posted where the completion flags cannot (a flush is a write on the wire, an
 * error entry may carry flags 0, {@code fi_cq(3)}), and lets the connection fail what the
 * provider did not flush when the connection ends. Open addressing with linear probing and
 * backward-shift deletion over preallocated arrays: no allocation per operation. It grows
 * (allocating) only if more operations are in flight than the queues were sized for.
 * Loop-confined.
 */
final class PostedOps {

    private static final byte EMPTY = 0;
    private static final byte RX = 0x40;
    private static final Opcode[] OPCODES = Opcode.values();

    private long[] keys;
    private byte[] ops;
    private int mask;
    private int size;
    private int rxSize;
    private int receives;

    PostedOps(int expected) {
        int cap = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[cap];
        ops = new byte[cap];
        mask = cap - 1;
    }

    private static int hash(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /**
     * Records a posted operation.
     *
     * @param context its context
     * @param opcode what was posted
     * @param receive whether it completes on the receive CQ
     */
    void add(long context, Opcode opcode, boolean receive) {
        if ((size + 1) * 4 > keys.length * 3) {
            grow();
        }
        int i = hash(context) & mask;
        while (ops[i] != EMPTY) {
            i = (i + 1) & mask;
        }
        keys[i] = context;
        ops[i] = (byte) ((opcode.ordinal() + 1) | (receive ? RX : 0));
        size++;
        if (receive) {
            rxSize++;
        }
        if (opcode.isReceive()) {
            receives++;
        }
    }

    /** {@return how many recorded operations are sends (anything but a receive)} */
    int sendsInFlight() {
        return size - receives;
    }

    /** {@return how many recorded operations are receives} */
    int receivesInFlight() {
        return receives;
    }

    /**
     * Removes one record of a context.
     *
     * @param context the context of a completion
     * @param receive which queue it came from
     * @return the posted opcode, or {@code null} when none was recorded
     */
    Opcode take(long context, boolean receive) {
        int i = hash(context) & mask;
        while (ops[i] != EMPTY) {
            if (keys[i] == context && ((ops[i] & RX) != 0) == receive) {
                Opcode op = OPCODES[(ops[i] & 0x3f) - 1];
                removeAt(i);
                return op;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** {@return how many records a queue still has} @param receive which queue */
    int pending(boolean receive) {
        return receive ? rxSize : size - rxSize;
    }

    /**
     * Removes and returns one record of a queue, for error synthesis.
     *
     * @param receive which queue
     * @param opcodeOut receives the opcode at index 0
     * @return the context; only valid when {@link #pending(boolean)} was non-zero
     */
    long takeAny(boolean receive, Opcode[] opcodeOut) {
        for (int i = 0; i < ops.length; i++) {
            if (ops[i] != EMPTY && ((ops[i] & RX) != 0) == receive) {
                long k = keys[i];
                opcodeOut[0] = OPCODES[(ops[i] & 0x3f) - 1];
                removeAt(i);
                return k;
            }
        }
        throw new IllegalStateException("no pending " + (receive ? "receive" : "send") + " operation");
    }

    private void removeAt(int slot) {
        if ((ops[slot] & RX) != 0) {
            rxSize--;
        }
        if (OPCODES[(ops[slot] & 0x3f) - 1].isReceive()) {
            receives--;
        }
        size--;
        int i = slot;
        int j = slot;
        while (true) {
            j = (j + 1) & mask;
            if (ops[j] == EMPTY) {
                break;
            }
            int k = hash(keys[j]) & mask;
            boolean inRange = i <= j ? (i < k && k <= j) : (i < k || k <= j);
            if (!inRange) {
                keys[i] = keys[j];
                ops[i] = ops[j];
                i = j;
            }
        }
        ops[i] = EMPTY;
    }

    private void grow() {
        long[] oldKeys = keys;
        byte[] oldOps = ops;
        keys = new long[oldKeys.length * 2];
        ops = new byte[oldOps.length * 2];
        mask = keys.length - 1;
        size = 0;
        rxSize = 0;
        receives = 0;
        for (int i = 0; i < oldOps.length; i++) {
            if (oldOps[i] != EMPTY) {
                add(oldKeys[i], OPCODES[(oldOps[i] & 0x3f) - 1], (oldOps[i] & RX) != 0);
            }
        }
    }
}
