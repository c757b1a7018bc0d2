package io.cqflux.reactor;

import io.cqflux.core.FlushType;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * A cold operation: an immutable description of what to post. Each subscription checks the
 * arguments (errors are signalled, never thrown), takes references on the local regions, and hands
 * an {@link Op} to the connection's loop, which posts it when a credit is free.
 */
final class OpMono extends Mono<Void> {
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

    OpMono(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
           long length, long value, FlushType flushType) {
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

    @Override
    public void subscribe(CoreSubscriber<? super Void> actual) {
        Op op = new Op(this, actual);
        actual.onSubscribe(op);
        try {
            validate();
            if (local != null) {
                local.acquire(localRole());
            }
        } catch (RuntimeException e) {
            op.released = true;
            op.fail(e);
            return;
        }
        core.enqueue(op);
    }

    private String localRole() {
        return switch (kind) {
            case READ -> "local destination";
            case SEND, SEND_WITH_IMMEDIATE -> "send source";
            default -> "local source";
        };
    }

    /**
     * Checks everything that can be checked before posting, with the same check the transport
     * runs before its native call ({@link Checks}); throws what the Mono signals.
     */
    private void validate() {
        core.checkOpen();
        if (remote != null) {
            core.checkOwns(remote);
        }
        Transport t = core.transport;
        switch (kind) {
            case READ -> Checks.read(t, nativeLocal(), localOffset, nativeRemote(), remoteOffset, length);
            case WRITE -> Checks.write(t, nativeRemote(), remoteOffset, nativeLocal(), localOffset, length);
            case WRITE_WITH_IMMEDIATE ->
                    Checks.writeWithImmediate(t, nativeRemote(), remoteOffset, nativeLocal(), localOffset, length);
            case DURABLE_WRITE ->
                    Checks.durableWrite(t, nativeRemote(), remoteOffset, nativeLocal(), localOffset, length, flushType);
            case ATOMIC_WRITE -> Checks.atomicWrite(t, nativeRemote(), remoteOffset);
            case FLUSH -> Checks.flush(t, nativeRemote(), remoteOffset, length, flushType);
            case SEND -> Checks.send(t, nativeLocal(), localOffset, length, false);
            case SEND_WITH_IMMEDIATE -> Checks.send(t, nativeLocal(), localOffset, length, true);
        }
    }

    private LocalRegion nativeLocal() {
        return local == null ? null : local.nativeRegion();
    }

    private RemoteRegion nativeRemote() {
        return remote == null ? null : remote.nativeRegion();
    }

    /**
     * Posts the first (or only) work request. Loop thread.
     *
     * @param c the native connection
     * @param ctx the pending-table context
     * @return whether it was posted (false: the transport's queue is momentarily full)
     */
    boolean postFirst(Connection c, long ctx) {
        return switch (kind) {
            case READ -> c.read(local.nativeRegion(), localOffset, remote.nativeRegion(), remoteOffset, length, ctx, true);
            case WRITE -> c.write(remote.nativeRegion(), remoteOffset, local.nativeRegion(), localOffset, length, ctx, true);
            case WRITE_WITH_IMMEDIATE -> c.writeWithImmediate(remote.nativeRegion(), remoteOffset, local.nativeRegion(),
                    localOffset, length, (int) value, ctx, true);
            case ATOMIC_WRITE -> c.atomicWrite(remote.nativeRegion(), remoteOffset, value, ctx, true);
            case FLUSH -> c.flush(remote.nativeRegion(), remoteOffset, length, flushType, ctx, true);
            case SEND -> c.send(local.nativeRegion(), localOffset, length, ctx, true);
            case SEND_WITH_IMMEDIATE -> c.sendWithImmediate(local.nativeRegion(), localOffset, length, (int) value, ctx, true);
            // Unsignaled: it reports only an error, under the part context so that the error
            // fails the operation without freeing the slot the flush still uses.
            case DURABLE_WRITE -> c.write(remote.nativeRegion(), remoteOffset, local.nativeRegion(), localOffset, length,
                    InFlightTable.part(ctx), false);
        };
    }

    /**
     * Posts the second work request of a two-part operation: the signaled flush whose completion
     * resolves a durable write and retires the unsignaled write before it. Loop thread.
     *
     * @param c the native connection
     * @param ctx the pending-table context
     * @return whether it was posted
     */
    boolean postSecond(Connection c, long ctx) {
        return c.flush(remote.nativeRegion(), remoteOffset, length, flushType, ctx, true);
    }

    void releaseRegions() {
        if (local != null) {
            local.release();
        }
    }
}
