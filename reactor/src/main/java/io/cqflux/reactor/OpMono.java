package io.cqflux.reactor;

import io.cqflux.core.FlushType;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

/**
 * A cold operation: an immutable description of what to post. Each subscription checks the
 * arguments (errors are signalled, never thrown), takes references on the local regions, and hands
 * an {@link Op} to the connection's loop, which posts it when a credit is free. One that carries a
 * {@link BufferLease} is for one subscription: the lease goes with it.
 *
 * <p>{@link Scannable}: its {@link Attr#NAME} is its kind's {@link OperationKind#sequenceName()}
 * ({@code cqflux.write}, ...), which {@code tap(Micrometer.metrics(...))}, {@code checkpoint} and
 * {@code Scannable.from(mono).name()} show; the public methods create it through
 * {@link #assemble} ({@code Mono.onAssembly}), so Reactor's assembly hooks see it.
 */
final class OpMono extends Mono<Void> implements Scannable {
    final ConnectionCore core;
    final OpKind kind;
    final PeerRegion remote;
    final long remoteOffset;
    final Region local;
    final long localOffset;
    final long length;
    /** Immediate data, or the value of an atomic write. */
    final long value;
    final FlushType flushType;
    /**
     * A pooled buffer this operation owns from its subscription on (its memory is {@link #local}
     * at {@link #localOffset}), given back in {@link #releaseRegions}; or null. One subscription
     * only: a second fails.
     */
    final BufferLease lease;
    /** A staged read, whose data is copied out in {@link #releaseRegions}; or null. */
    final StagedMono.Staged<?> readBack;
    /**
     * The staged subscription ({@link StagedMono}) this operation runs for, or null: its
     * subscription time, not this one's, starts the time the listener hears of (the wait for a
     * buffer counts), and it may have reported the outcome itself.
     */
    final StagedMono.Staged<?> stagedBy;

    OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType) {
        this(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType, null, null);
    }

    OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType, BufferLease lease, StagedMono.Staged<?> readBack) {
        this(core, kind, remote, remoteOffset, local, localOffset, length, value, flushType, lease, readBack, null);
    }

    OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType, BufferLease lease, StagedMono.Staged<?> readBack,
           StagedMono.Staged<?> stagedBy) {
        this.stagedBy = stagedBy;
        this.lease = lease;
        this.readBack = readBack;
        this.core = core;
        this.kind = kind;
        this.remote = remote;
        this.remoteOffset = remoteOffset;
        this.local = local;
        this.localOffset = localOffset;
        this.length = length;
        this.value = value;
        this.flushType = flushType;
    }

    /**
     * Hands a new operation Mono to Reactor's assembly hooks ({@code Hooks.onEachOperator},
     * {@code Hooks.onOperatorDebug}, ...), as Reactor's own operators do.
     *
     * @param m the operation
     * @return what the hooks made of it ({@code m} itself when none is installed)
     */
    static Mono<Void> assemble(OpMono m) {
        return onAssembly(m);
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        return scanOperation(kind, key);
    }

    /**
     * What an operation Mono of {@code kind} answers to {@link Scannable#scanUnsafe}: its name and
     * run style; the one answer for this class and {@link StagedMono}.
     */
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    static Object scanOperation(OpKind kind, Attr key) {
        if (key == Attr.NAME) {
            return OperationKind.of(kind).sequenceName();
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }

    @Override
    public String toString() {
        return OperationKind.of(kind).sequenceName() + "[" + core.description + "]";
    }

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Op op = stagedBy == null ? new Op(this, actual)
                : new Op(this, actual, stagedBy.listenerForOperation(), stagedBy.subscribedAt);
        actual.onSubscribe(op);
        boolean owned = false;
        try {
            if (lease != null) {
                lease.handOver();
                owned = true;
            }
            validate();
            if (local != null) {
                local.acquire(kind.localRole);
            }
        } catch (RuntimeException e) {
            op.released = true;
            if (owned) {
                // nothing was posted: the buffer goes back now
                lease.releaseFromOperation();
            }
            op.fail(e);
            return;
        }
        core.enqueue(op);
    }

    /**
     * Checks everything that can be checked before posting, with the same check the transport
     * runs before its native call ({@link OpKind#check}); throws what the Mono signals.
     */
    void validate() {
        core.checkOpen();
        if (remote != null) {
            core.checkOwns(remote);
        }
        kind.check(core.transport, this);
    }

    LocalRegion nativeLocal() {
        return local == null ? null : local.nativeRegion();
    }

    RemoteRegion nativeRemote() {
        return remote == null ? null : remote.nativeRegion();
    }

    /** Posts the first (or only) work request. Loop thread. */
    boolean postFirst(Connection c, long ctx) {
        return kind.post(c, this, ctx);
    }

    /** Posts the second work request of a two-part operation. Loop thread. */
    boolean postSecond(Connection c, long ctx) {
        return kind.postSecond(c, this, ctx);
    }

    /**
     * Releases what the operation held for the NIC, once it is terminal at the NIC (its completion
     * arrived, or the queue pair was destroyed, or it was never posted): the one place for it
     * ({@link Op#releaseRegions}). A staged read's data is copied out first, then the pooled
     * buffer goes back, then the region reference (which may deregister a closed region and so
     * free the buffer's memory).
     */
    void releaseRegions() {
        try {
            if (readBack != null) {
                readBack.copyOut(lease.segment());
            }
        } finally {
            try {
                if (lease != null) {
                    lease.releaseFromOperation();
                }
            } finally {
                if (local != null) {
                    local.release();
                }
            }
        }
    }
}
