package io.cqflux.reactor;

import io.cqflux.core.Opcode;
import java.util.Objects;

/**
 * An immutable copy of a received message or write-with-immediate notification.
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
     * Rejects null references, as {@link WriteRequest} does.
     *
     * @throws NullPointerException when {@code opcode} or {@code data} is null; its message is the
     *     argument's name
     */
    public Message {
        Objects.requireNonNull(opcode, "opcode");
        Objects.requireNonNull(data, "data");
    }
}
