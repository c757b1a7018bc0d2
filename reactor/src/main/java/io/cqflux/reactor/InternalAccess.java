package io.cqflux.reactor;

import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.LeaseTaker;
import java.lang.foreign.MemorySegment;

/**
 * The internal packages' way to the package-private members of this package's types
 * ({@link ApiAccess}): each method forwards to one member. Installed once, when
 * {@link ApiAccess#get()} first loads it.
 */
final class InternalAccess implements ApiAccess {

    static {
        ApiAccess.install(new InternalAccess());
    }

    private InternalAccess() {
    }

    @Override
    public RdmaConnection newConnection(ConnectionCore core) {
        return new RdmaConnection(core);
    }

    @Override
    public ConnectionCore core(RdmaConnection connection) {
        return connection.core();
    }

    @Override
    public PeerRegion newPeerRegion(RemoteRegion region, int index) {
        return new PeerRegion(region, index);
    }

    @Override
    public RemoteRegion nativeRegion(PeerRegion region) {
        return region.nativeRegion();
    }

    @Override
    public LocalRegion nativeRegion(Region region) {
        return region.nativeRegion();
    }

    @Override
    public void checkRegisteredWith(Region region, Transport transport, String role) {
        region.checkRegisteredWith(transport, role);
    }

    @Override
    public void acquire(Region region, String role) {
        region.acquire(role);
    }

    @Override
    public void release(Region region) {
        region.release();
    }

    @Override
    public Region describedRegion(BufferPool pool) {
        return pool.describedRegion();
    }

    @Override
    public ResourceClosedException closedError(BufferPool pool) {
        return pool.closedError();
    }

    @Override
    public void request(BufferPool pool, LeaseTaker taker) {
        pool.request(taker);
    }

    @Override
    public boolean withdraw(BufferPool pool, LeaseTaker taker) {
        return pool.withdraw(taker);
    }

    @Override
    public Region region(BufferLease lease) {
        return lease.region();
    }

    @Override
    public long offset(BufferLease lease) {
        return lease.offset();
    }

    @Override
    public void handOver(BufferLease lease) {
        lease.handOver();
    }

    @Override
    public void releaseFromOperation(BufferLease lease) {
        lease.releaseFromOperation();
    }

    @Override
    public InboundMessage newInboundMessage() {
        return new InboundMessage();
    }

    @Override
    public void set(InboundMessage message, MemorySegment buffer, long length, Opcode opcode, boolean hasImmediate,
                    int immediate) {
        message.set(buffer, length, opcode, hasImmediate, immediate);
    }

    @Override
    public void invalidate(InboundMessage message) {
        message.invalidate();
    }

    // the facade (Cqflux)

    @Override
    public BufferPool pool(BufferLease lease) {
        return lease.pool();
    }
}
