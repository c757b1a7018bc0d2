package io.cqflux.reactor;

import io.cqflux.core.Opcode;
import java.util.Arrays;
import java.util.Objects;

/**
 * An immutable copy of a received message or write-with-immediate notification.
 *
 * <p>Immutable and thread-safe: the bytes are copied in by the constructor and {@link #data()}
 * returns a copy, so neither the array given nor one returned changes the message. Two messages
 * are equal when their fields and their bytes are.
 *
 * @param opcode {@link Opcode#RECEIVE} or {@link Opcode#RECEIVE_WRITE_WITH_IMMEDIATE}
 * @param data the bytes received (empty for a write-with-immediate notification)
 * @param hasImmediate whether {@code immediate} is meaningful
 * @param immediate the immediate data in host byte order, or 0
 * @param length bytes received, or for a notification bytes written (-1 where the transport does
 *     not report them: libfabric's tcp provider)
 */
public record Message(Opcode opcode, byte[] data, boolean hasImmediate, int immediate, long length) {
    /**
     * Rejects null references, as {@link WriteRequest} does, and copies {@code data}.
     *
     * @throws NullPointerException when {@code opcode} or {@code data} is null; its message is the
     *     argument's name
     */
    public Message {
        Objects.requireNonNull(opcode, "opcode");
        data = Objects.requireNonNull(data, "data").clone();
    }

    /** {@return a copy of the bytes received (empty for a write-with-immediate notification)} */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /** {@return whether {@code o} is a message with the same fields and the same bytes} */
    @Override
    public boolean equals(Object o) {
        return o instanceof Message m && opcode == m.opcode && hasImmediate == m.hasImmediate
                && immediate == m.immediate && length == m.length && Arrays.equals(data, m.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(opcode, hasImmediate, immediate, length) * 31 + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "Message[opcode=" + opcode + ", " + data.length + " bytes, hasImmediate=" + hasImmediate
                + ", immediate=" + immediate + ", length=" + length + "]";
    }
}
