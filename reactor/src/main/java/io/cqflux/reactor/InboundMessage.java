package io.cqflux.reactor;

import io.cqflux.core.Opcode;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A received message as a view of the receive buffer it landed in. <b>Valid only during the
 * decoder call</b> of {@link RdmaConnection#receive(java.util.function.Function)}: right after it
 * returns, the buffer goes back to the pool and is posted again. Copy what you need
 * ({@link #toArray()}) or decode it in place. Not thread-safe.
 */
public final class InboundMessage {
    private MemorySegment buffer = MemorySegment.NULL;
    private long length;
    private Opcode opcode = Opcode.RECEIVE;
    private boolean hasImmediate;
    private int immediate;
    private boolean valid;

    InboundMessage() {
    }

    void set(MemorySegment buffer, long length, Opcode opcode, boolean hasImmediate, int immediate) {
        this.buffer = buffer;
        this.length = length;
        this.opcode = opcode;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
        this.valid = true;
    }

    void invalidate() {
        valid = false;
        buffer = MemorySegment.NULL;
    }

    private void check() {
        if (!valid) {
            throw new IllegalStateException("an InboundMessage is valid only during the decoder call;"
                    + " copy it with toArray() there");
        }
    }

    /**
     * {@return {@link Opcode#RECEIVE} for a message sent with {@code send}, or
     * {@link Opcode#RECEIVE_WRITE_WITH_IMMEDIATE} for the notification of a peer's write with
     * immediate (its data went to the written region, not into this buffer)}
     */
    public Opcode opcode() {
        check();
        return opcode;
    }

    /**
     * {@return the bytes received; for a write-with-immediate notification the bytes written, or
     * -1 where the transport does not report them (libfabric's tcp provider)}
     */
    public long length() {
        check();
        return length;
    }

    /** {@return whether it carries 32-bit immediate data} */
    public boolean hasImmediate() {
        check();
        return hasImmediate;
    }

    /**
     * {@return the immediate data in host byte order}
     *
     * @throws IllegalStateException when there is none
     */
    public int immediate() {
        check();
        if (!hasImmediate) {
            throw new IllegalStateException("the message carries no immediate data");
        }
        return immediate;
    }

    /** {@return the received bytes, a read-only view of the receive buffer (empty for a write-with-immediate)} */
    public MemorySegment data() {
        check();
        return opcode == Opcode.RECEIVE ? buffer.asSlice(0, length).asReadOnly() : MemorySegment.NULL;
    }

    /** {@return a copy of the received bytes} */
    public byte[] toArray() {
        check();
        return opcode == Opcode.RECEIVE ? buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE) : new byte[0];
    }

    /** {@return an immutable copy} */
    public Message copy() {
        check();
        return new Message(opcode, toArray(), hasImmediate, immediate, length);
    }
}
