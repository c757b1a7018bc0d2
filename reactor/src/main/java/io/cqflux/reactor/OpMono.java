package io.cqflux.reactor;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Checks;
import io.cqflux.core.spi.Connection;
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
        } catch (RuntimeException e) {
            op.released = true;
            op.fail(e);
            return;
        }
        try {
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

    /** Checks everything that can be checked before posting; throws what the Mono signals. */
    private void validate() {
        core.checkOpen();
        if (remote != null) {
            core.checkOwns(remote);
        }
        switch (kind) {
            case READ -> {
                checkLocal(RegionAccess.READ_DST);
                Checks.remote("read source", remote.nativeRegion(), RegionAccess.READ_SRC);
                Checks.range("read local destination", localOffset, length, local.size(), 1);
                Checks.range("read remote source", remoteOffset, length, remote.size(), 1);
            }
            case WRITE, WRITE_WITH_IMMEDIATE, DURABLE_WRITE -> {
                checkLocal(RegionAccess.WRITE_SRC);
                Checks.remote("write destination", remote.nativeRegion(), RegionAccess.WRITE_DST);
                Checks.range("write local source", localOffset, length, local.size(), 1);
                Checks.range("write remote destination", remoteOffset, length, remote.size(), 1);
                if (kind == OpKind.DURABLE_WRITE) {
                    Checks.flushType(flushType, remote.flushTypes());
                }
            }
            case ATOMIC_WRITE -> {
                Checks.remote("atomic write destination", remote.nativeRegion(), RegionAccess.WRITE_DST);
                Checks.atomicWrite(remoteOffset, remote.size());
            }
            case FLUSH -> {
                Checks.flushType(flushType, remote.flushTypes());
                Checks.range("flush remote range", remoteOffset, length, remote.size(), 0);
            }
            case SEND, SEND_WITH_IMMEDIATE -> {
                checkLocal(RegionAccess.SEND);
                Checks.range("send source", localOffset, length, local.size(), 0);
            }
        }
    }

    private void checkLocal(RegionAccess needed) {
        if (local == null) {
            throw new IllegalArgumentException(localRole() + " region is null");
        }
        if (!local.access().contains(needed)) {
            throw new IllegalArgumentException(localRole() + " region lacks access " + needed + " (it has "
                    + local.access() + ")");
        }
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
            // Unsignaled: it reports only an error, marked by PART_BIT so that the error fails
            // the operation without freeing the slot the flush still uses.
            case DURABLE_WRITE -> c.write(remote.nativeRegion(), remoteOffset, local.nativeRegion(), localOffset, length,
                    ctx | PendingTable.PART_BIT, false);
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
