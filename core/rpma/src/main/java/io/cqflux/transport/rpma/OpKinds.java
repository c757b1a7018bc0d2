package io.cqflux.transport.rpma;

import io.cqflux.core.Opcode;

/**
 * Remembers, per connection, what was posted for the signaled operations whose completion
 * opcode does not say it: a flush that librpma emulates completes as {@code IBV_WC_RDMA_READ}
 * (see {@code rpma_flush(3)}), librpma's atomic write is an inline fenced RDMA write and completes
 * as {@code IBV_WC_RDMA_WRITE}, and the send side of a send/write with immediate completes as
 * {@code IBV_WC_SEND} / {@code IBV_WC_RDMA_WRITE}.
 *
 * <p>An open-addressing table of {@code long} keys allocated once per connection (no allocation
 * per operation). Only signaled operations are recorded: they always produce a completion
 * (success, error or flush error), which removes the entry; an unsignaled operation completes
 * only on error, when the opcode is undefined anyway. Loop-confined.
 */
final class OpKinds {

    private static final Opcode[] KINDS = Opcode.values();

    private final long[] keys;
    private final byte[] kinds; // 0 = empty, else ordinal + 1
    private final int mask;
    private int size;

    OpKinds(int sendQueueSize) {
        int cap = Integer.highestOneBit(Math.max(4, sendQueueSize * 2 - 1)) << 1;
        keys = new long[cap];
        kinds = new byte[cap];
        mask = cap - 1;
    }

    private static int hash(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** Records {@code context → kind}; throws before posting if more are in flight than the send queue allows. */
    void put(long context, Opcode kind) {
        int i = hash(context) & mask;
        while (kinds[i] != 0) {
            if (keys[i] == context) {
                kinds[i] = (byte) (kind.ordinal() + 1);
                return;
            }
            i = (i + 1) & mask;
        }
        if (size + 1 > keys.length / 2) {
            throw new IllegalStateException("more than " + keys.length / 2
                    + " signaled flush/atomic/immediate operations in flight: the send queue is overcommitted");
        }
        keys[i] = context;
        kinds[i] = (byte) (kind.ordinal() + 1);
        size++;
    }

    /** {@return the recorded kind for {@code context} and forgets it, or {@code null}} */
    Opcode take(long context) {
        if (size == 0) {
            return null;
        }
        int i = hash(context) & mask;
        while (kinds[i] != 0) {
            if (keys[i] == context) {
                Opcode k = KINDS[kinds[i] - 1];
                remove(i);
                return k;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** Forgets {@code context} (the post failed). */
    void forget(long context) {
        take(context);
    }

    int size() {
        return size;
    }

    private void remove(int i) {
        kinds[i] = 0;
        size--;
        // backward-shift deletion keeps probe chains intact without tombstones
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            if (kinds[j] == 0) {
                return;
            }
            int home = hash(keys[j]) & mask;
            boolean between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
            if (!between) {
                keys[i] = keys[j];
                kinds[i] = kinds[j];
                kinds[j] = 0;
                i = j;
            }
        }
    }
}
