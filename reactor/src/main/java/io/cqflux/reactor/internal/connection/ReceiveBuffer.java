package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Opcode;
import io.cqflux.core.spi.LocalRegion;

/**
 * One registered receive buffer: where it lies (a connection's own {@link ReceivePool} or a
 * server's {@link SharedReceivePool}) and, while it waits in its {@link Receiver}'s backlog, what
 * it holds. The posted receive's context in the in-flight table. Confined as the receiver that
 * took it is.
 */
final class ReceiveBuffer {
    /** Its slot in its pool. */
    final int index;
    /** Where it is registered: its receiver's own pool, or a server's shared pool. */
    final LocalRegion region;
    /** Its offset in {@link #region}. */
    final long offset;
    long length;
    Opcode opcode;
    boolean hasImmediate;
    int immediate;

    ReceiveBuffer(int index, LocalRegion region, long offset) {
        this.index = index;
        this.region = region;
        this.offset = offset;
    }

    /** Notes what landed in it, kept for a later subscriber. */
    void hold(long length, Opcode opcode, boolean hasImmediate, int immediate) {
        this.length = length;
        this.opcode = opcode;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
    }
}
