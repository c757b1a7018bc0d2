package io.cqflux.reactor;

import io.cqflux.core.FlushType;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
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
                local.acquire(kind.localRole);
            }
        } catch (RuntimeException e) {
            op.released = true;
            op.fail(e);
            return;
        }
        core.enqueue(op);
    }

    /**
     * Checks everything that can be checked before posting, with the same check the transport
     * runs before its native call ({@link OpKind#check}); throws what the Mono signals.
     */
    private void validate() {
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

    void releaseRegions() {
        if (local != null) {
            local.release();
        }
    }
}
