package io.cqflux.reactor.internal.op;

import io.cqflux.core.Opcode;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.InFlightTable;
import io.cqflux.reactor.internal.connection.PeerControl;

/**
 * The operations the reactive layer posts: for each, in one place, what it is (the opcode of its
 * signaled work request, the send-queue credits it holds while in flight, the role of its local
 * region, whether it consumes one of the peer's posted receives), its argument check (the one
 * {@link Checks} method every layer uses) and its post (the one SPI call). Adding a kind means a
 * constant here, a public method on {@link RdmaConnection}, a {@link Checks} method, an SPI
 * {@link Connection} method and its line in each transport: see docs/architecture.md.
 */
public enum OpKind {
    READ(Opcode.READ, 1, "local destination", Receive.NO) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.read(t, o.nativeLocal(), o.localOffset, o.nativeRemote(), o.remoteOffset, o.length);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.read(o.nativeLocal(), o.localOffset, o.nativeRemote(), o.remoteOffset, o.length, ctx, true);
        }
    },
    WRITE(Opcode.WRITE, 1, "local source", Receive.NO) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.write(t, o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.write(o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length, ctx, true);
        }
    },
    WRITE_WITH_IMMEDIATE(Opcode.WRITE_WITH_IMMEDIATE, 1, "local source", Receive.WHERE_THE_TRANSPORT_SAYS) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.writeWithImmediate(t, o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.writeWithImmediate(o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length,
                    (int) o.value, ctx, true);
        }
    },
    ATOMIC_WRITE(Opcode.ATOMIC_WRITE, 1, "local source", Receive.NO) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.atomicWrite(t, o.nativeRemote(), o.remoteOffset);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.atomicWrite(o.nativeRemote(), o.remoteOffset, o.value, ctx, true);
        }
    },
    FLUSH(Opcode.FLUSH, 1, "local source", Receive.NO) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.flush(t, o.nativeRemote(), o.remoteOffset, o.length, o.flushType());
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.flush(o.nativeRemote(), o.remoteOffset, o.length, o.flushType(), ctx, true);
        }
    },
    SEND(Opcode.SEND, 1, "send source", Receive.YES) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.send(t, o.nativeLocal(), o.localOffset, o.length, false);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.send(o.nativeLocal(), o.localOffset, o.length, ctx, true);
        }
    },
    SEND_WITH_IMMEDIATE(Opcode.SEND_WITH_IMMEDIATE, 1, "send source", Receive.YES) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.send(t, o.nativeLocal(), o.localOffset, o.length, true);
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.sendWithImmediate(o.nativeLocal(), o.localOffset, o.length, (int) o.value, ctx, true);
        }
    },
    /**
     * A write posted unsignaled followed by a signaled flush of the same range. The unsignaled
     * write keeps its send-queue slot until the flush's completion retires it in order (an
     * unsignaled work request's slot is freed by the next signaled completion), so the pair holds
     * two credits; the write reports only an error, under the part context (InFlightTable), so
     * that the error fails the operation without freeing the slot the flush still uses.
     */
    DURABLE_WRITE(Opcode.FLUSH, 2, "local source", Receive.NO) {
        @Override
        public void check(Transport t, OpRequest o) {
            Checks.durableWrite(t, o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length,
                    o.flushType());
        }

        @Override
        public boolean post(Connection c, OpRequest o, long ctx) {
            return c.write(o.nativeRemote(), o.remoteOffset, o.nativeLocal(), o.localOffset, o.length,
                    InFlightTable.part(ctx), false);
        }

        @Override
        public Opcode partOpcode() {
            return Opcode.WRITE;
        }

        @Override
        public boolean postSecond(Connection c, OpRequest o, long ctx) {
            return c.flush(o.nativeRemote(), o.remoteOffset, o.length, o.flushType(), ctx, true);
        }
    };

    /** Whether an operation consumes one of the peer's posted receives (PeerControl's credits). */
    public enum Receive { NO, YES, WHERE_THE_TRANSPORT_SAYS }

    /** The opcode of the signaled (final) work request. */
    public final Opcode opcode;
    /** Send-queue slots held in flight. */
    public final int credits;
    /** The local region's role, for messages about it. */
    public final String localRole;
    private final Receive message;
    /** The public name of the kind (the names match; a kind without a public one fails here, loudly). */
    private final OperationKind publicKind;

    OpKind(Opcode opcode, int credits, String localRole, Receive message) {
        this.opcode = opcode;
        this.credits = credits;
        this.localRole = localRole;
        this.publicKind = OperationKind.valueOf(name());
        this.message = message;
    }

    /**
     * Checks the operation's arguments, with the same {@link Checks} method the transport runs
     * before its native call; throws what the Mono signals.
     *
     * @param t the transport
     * @param o the operation
     */
    public abstract void check(Transport t, OpRequest o);

    /**
     * Posts the first (or only) work request. Loop thread.
     *
     * @param c the native connection
     * @param o the operation
     * @param ctx the in-flight table context
     * @return whether it was posted (false: the transport's queue is momentarily full)
     */
    public abstract boolean post(Connection c, OpRequest o, long ctx);

    /**
     * Posts the second work request of a two-part operation. Loop thread.
     *
     * @param c the native connection
     * @param o the operation
     * @param ctx the in-flight table context
     * @return whether it was posted
     */
    public boolean postSecond(Connection c, OpRequest o, long ctx) {
        throw new IllegalStateException(this + " has no second part");
    }

    /** {@return the opcode of the unsignaled first part of a two-part operation} */
    public Opcode partOpcode() {
        return opcode;
    }

    public boolean twoPart() {
        return credits == 2;
    }

    /** {@return whether its data lands in the peer's receive buffer (a send; not a write with immediate, whose data goes to the written region)} */
    public boolean carriesDataToReceiveBuffer() {
        return message == Receive.YES;
    }

    /**
     * @param t the transport
     * @return whether the operation consumes one of the peer's posted receives
     */
    public boolean isMessage(Transport t) {
        return message == Receive.YES
                || message == Receive.WHERE_THE_TRANSPORT_SAYS && t.writeWithImmediateConsumesReceive();
    }

    /** {@return the kind under its public name, for metrics, listeners and {@code Scannable}} */
    public OperationKind publicKind() {
        return publicKind;
    }
}
