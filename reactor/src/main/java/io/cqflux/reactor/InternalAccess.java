package io.cqflux.reactor;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Registrar;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Limits;
import io.cqflux.reactor.internal.pool.PoolCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import io.cqflux.reactor.internal.resources.ConnectionFactory;
import io.cqflux.reactor.internal.resources.LeaseTaker;
import io.cqflux.reactor.internal.server.ServerCore;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.util.Logger;

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
    public BufferPool pool(BufferLease lease) {
        return lease.pool();
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

    // the server (internal.server)

    @Override
    public RdmaServer newServer(Cqflux owner, EventLoop loop, Listener listener, List<Region> exposed,
                                Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
                                Function<byte[], AcceptDecision> rawAccept, AcceptOptions options) {
        return new RdmaServer(owner, loop, listener, exposed, handler, rawAccept, options);
    }

    @Override
    public ServerCore core(RdmaServer server) {
        return server.core();
    }

    @Override
    public byte[] data(AcceptDecision decision) {
        return decision.data();
    }

    @Override
    public boolean keep(Cqflux owner, RdmaServer server) {
        return owner.keep(server);
    }

    @Override
    public void checkOpen(Cqflux owner) {
        owner.checkOpen();
    }

    @Override
    public ConnectionFactory factory(Cqflux owner) {
        return owner.factory;
    }

    @Override
    public Transport transport(Cqflux owner) {
        return owner.transport();
    }

    @Override
    public ConnectionConfig config(Cqflux owner) {
        return owner.config;
    }

    @Override
    public Limits limits(Cqflux owner) {
        return owner.limits();
    }

    @Override
    public EventLoop firstLoop(Cqflux owner) {
        return owner.firstLoop();
    }

    @Override
    public LocalRegion expose(Region region, Registrar into, Runnable onRevoke) {
        return region.expose(into, onRevoke);
    }

    @Override
    public void unexpose(Region region, LocalRegion registration) {
        region.unexpose(registration);
    }

    // the peer pool (internal.pool)

    @Override
    public PeerPool newPeerPool(PoolCore core) {
        return new PeerPool(core);
    }

    @Override
    public PeerPoolEvent newPeerPoolEvent(PeerPoolEvent.Kind kind, InetSocketAddress address, int slot, int attempt,
                                          Duration delay, Throwable cause, String connection) {
        return new PeerPoolEvent(kind, address, slot, attempt, delay, cause, connection);
    }

    @Override
    public Logger peerPoolLog() {
        return PeerPool.log;
    }

    @Override
    public Duration nominalBackoff(PeerPoolOptions options, int attempt) {
        return options.nominalBackoff(attempt);
    }

    @Override
    public Duration longestAttemptGap(PeerPoolOptions options, Duration connectTimeout) {
        return options.longestAttemptGap(connectTimeout);
    }
}
