package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Opcode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

/**
 * The end of a connection's receive side: whether and why it ended, whether anything can still
 * arrive, and what had arrived and was not yet delivered, copied out of the receive pool (which
 * is freed with the connection), in arrival order. {@link #serve} delivers that before the
 * stream's terminal signal, to the subscriber of the moment or the next one, and ends the stream
 * only once nothing can arrive any more. Bounded by the receive queue's depth plus the
 * notification backlog. Confined as its {@link Receiver} is.
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
    private boolean ended;
    /** What subscribers get once the leftovers are delivered. */
    private Throwable endCause;
    /** The native connection is gone: nothing more can arrive. */
    private boolean finished;

    /** The connection ended: subscribers get {@code cause} once the leftovers are delivered. */
    void end(Throwable cause) {
        ended = true;
        endCause = cause;
    }

    /** {@return whether the connection ended} */
    boolean ended() {
        return ended;
    }

    /** {@return what subscribers get after the leftovers, null before the end} */
    Throwable endCause() {
        return endCause;
    }

    /** Nothing can arrive any more: the stream ends once the leftovers are delivered. */
    void finish() {
        finished = true;
    }

    /**
     * {@return whether a subscriber that comes after the end still has something to wait for:
     * leftovers, or a native connection not gone yet (something may still arrive)}
     */
    boolean awaitSubscriber() {
        return ended && (!kept.isEmpty() || !finished);
    }

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

    /**
     * Delivers what was kept, as far as the subscriber's demand allows, and ends the subscriber
     * once everything is delivered and nothing more can arrive.
     */
    void serve(ReceiveSubscriber subscriber) {
        while (!kept.isEmpty() && subscriber.wanted()) {
            Kept k = kept.poll();
            subscriber.deliver(k.length(), k.opcode(), k.hasImmediate(), k.immediate(), k.segment());
        }
        // Not from inside a hand-over (a request(n) made in onNext runs this inline): the serve
        // that made it ends the stream once the onNext returned, so the end never overlaps it.
        if (kept.isEmpty() && finished && !subscriber.delivering()) {
            subscriber.end(endCause);
        }
    }
}
