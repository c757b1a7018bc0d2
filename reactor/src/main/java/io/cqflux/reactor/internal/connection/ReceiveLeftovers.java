package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Opcode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

/**
 * What had arrived on a connection and was not yet delivered when it ended, copied out of the
 * receive pool (which is freed with the connection), in arrival order: its {@link Receiver}
 * delivers it before the stream's terminal signal, to the subscriber of the moment or the next
 * one. Bounded by the receive queue's depth plus the notification backlog. Confined as its
 * receiver is.
 */
final class ReceiveLeftovers {
    /** A message or notification kept past the end of its connection. */
    record Kept(long length, Opcode opcode, boolean hasImmediate, int immediate, byte[] data) {
        /** {@return the message's bytes, or {@link MemorySegment#NULL} for a notification} */
        MemorySegment segment() {
            return data == null ? MemorySegment.NULL : MemorySegment.ofArray(data);
        }
    }

    // Sized for an idle connection (one per connection, thousands per server); it grows on use.
    private final ArrayDeque<Kept> kept = new ArrayDeque<>(4);

    /**
     * Copies a message (or, with no buffer, a notification) in: a receive's bytes up to its
     * length, at most the buffer's size; nothing of a write-with-immediate's buffer.
     *
     * @param buffer the receive buffer it landed in (its whole slice of the pool), or null
     */
    void keep(long length, Opcode opcode, boolean imm, int immediate, MemorySegment buffer) {
        byte[] data = null;
        if (buffer != null) {
            long n = opcode == Opcode.RECEIVE ? Math.max(0, Math.min(length, buffer.byteSize())) : 0;
            data = buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
        }
        kept.add(new Kept(length, opcode, imm, immediate, data));
    }

    boolean isEmpty() {
        return kept.isEmpty();
    }

    /** {@return the oldest kept message, taken out, or null} */
    Kept poll() {
        return kept.poll();
    }
}
