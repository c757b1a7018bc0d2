package io.cqflux.reactor;

import io.cqflux.core.Opcode;

/** The operations the reactive layer posts, with the send-queue credits each one holds while in flight. */
enum OpKind {
    READ(Opcode.READ, 1),
    WRITE(Opcode.WRITE, 1),
    WRITE_WITH_IMMEDIATE(Opcode.WRITE_WITH_IMMEDIATE, 1),
    ATOMIC_WRITE(Opcode.ATOMIC_WRITE, 1),
    FLUSH(Opcode.FLUSH, 1),
    SEND(Opcode.SEND, 1),
    SEND_WITH_IMMEDIATE(Opcode.SEND_WITH_IMMEDIATE, 1),
    /**
     * A write posted unsignaled followed by a signaled flush. The unsignaled write keeps its
     * send-queue slot until the flush's completion retires it in order (ARCHITECTURE.md, "How a
     * completion flows" step 7), so the pair holds two credits.
     */
    DURABLE_WRITE(Opcode.FLUSH, 2);

    /** The opcode of the signaled (final) work request. */
    final Opcode opcode;
    /** Send-queue slots held in flight. */
    final int credits;

    OpKind(Opcode opcode, int credits) {
        this.opcode = opcode;
        this.credits = credits;
    }

    /** {@return the opcode of the unsignaled first part of a two-part operation} */
    Opcode partOpcode() {
        return this == DURABLE_WRITE ? Opcode.WRITE : opcode;
    }

    boolean twoPart() {
        return credits == 2;
    }
}
