package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.op.OpKind;
import io.cqflux.reactor.internal.op.StagedMono;
import io.cqflux.reactor.internal.op.StagedSubscription;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What an operation of one connection must pass before it is queued, all on the caller's thread:
 * the connection is open (or the refusal names why not: a close by this side, or the end's
 * verdict), its peer region is one of this connection's, a message fits the peer's receive
 * buffer. It also keeps what belongs to the peer (the regions of its hello, and those made from
 * raw descriptors, closed with the connection) and the staged operations that wait for a pooled
 * buffer outside the send queue, which the end fails. Any thread unless a method says otherwise.
 */
public final class Admission {
    private static final ApiAccess API = ApiAccess.get();

    private final ConnectionCore core;
    private volatile List<PeerRegion> peerRegions = List.of();
    /**
     * The peer's receive buffer size from its hello (PeerHello), 0 where it did not tell it (an
     * older cqflux, a hello with no room left, raw private data): a message longer than it would
     * fail the peer's receive and end the connection, so it is refused before posting.
     */
    private volatile int peerReceiveBufferSize;
    /**
     * Peer regions made from raw descriptors ({@link RdmaConnection#remoteRegion(byte[], RegionAccess...)});
     * guarded by itself. A set (PeerRegion has identity equality): every operation on such a region
     * checks it is here, and an application may make many.
     */
    private final java.util.Set<PeerRegion> foreignRegions = new java.util.HashSet<>();
    /** Set under {@link #foreignRegions}' lock when the native connection is closed. */
    private boolean foreignClosed;
    /**
     * Staged operations ({@link StagedMono}: the byte[]/ByteBuffer forms) of this connection
     * waiting for a pooled buffer; any thread. The end withdraws and fails them
     * ({@link #failStaged}), the one place that does.
     */
    private final Set<StagedSubscription<?>> stagedWaiters = ConcurrentHashMap.newKeySet();

    Admission(ConnectionCore core) {
        // Made by the core's field initializer, before its constructor sets core.description:
        // the messages below read the description when they are built, never a copy taken here.
        this.core = core;
    }

    /** Any thread: throws if the connection can no longer take operations. */
    public void checkOpen() {
        if (core.closeRequested()) {
            throw closedByThisSide();
        }
        checkNotEnded();
    }

    /**
     * Any thread: the check of an operation that was admitted before ({@link #checkOpen} at the
     * subscription of the staged operation it runs for) and reaches the connection only now, its
     * pooled buffer granted: a close this side asked for since is no refusal of it. It goes to the
     * loop, which fails it with the close's verdict as it does an operation handed over before the
     * close ({@code ConnectionException(CLOSED)}), the javadoc's promise for operations pending at
     * a close; an end already reached fails it here with that end's verdict.
     */
    public void checkNotEnded() {
        if (core.state().compareTo(State.ENDED) >= 0) {
            if (core.terminal() instanceof ConnectionException ce) {
                throw new ConnectionException(ce.event(), ce.getMessage());
            }
            throw closedByThisSide();
        }
    }

    /**
     * {@return the refusal of an operation or a {@code receive()} on a connection this side
     * closed} Whether it did is {@link ConnectionCore#closeRequested()} alone: the connection's
     * {@code closedLocally} is set (by the close task, or the lost hook) only after
     * {@link ConnectionCore#closeAsync} set it.
     */
    private ResourceClosedException closedByThisSide() {
        return new ResourceClosedException("connection " + core.description + " is closed");
    }

    /**
     * Any thread: makes a peer region from the transport's own descriptor, owned by this
     * connection (closed with it).
     *
     * @throws ResourceClosedException when the connection is closed (the region is not kept)
     */
    public PeerRegion foreignRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        checkOpen();
        RemoteRegion r = core.transport.remoteRegion(rawDescriptor, access);
        PeerRegion p = API.newPeerRegion(r, -1);
        synchronized (foreignRegions) {
            if (!foreignClosed) {
                foreignRegions.add(p);
                return p;
            }
        }
        r.close();
        throw new ResourceClosedException("connection " + core.description + " is closed");
    }

    /** Refuses a message longer than the peer's receive buffer, where the peer told its size. */
    public void checkMessageLength(OpKind kind, long length) {
        int max = peerReceiveBufferSize;
        if (max > 0 && length > max && kind.carriesDataToReceiveBuffer()) {
            throw new IllegalArgumentException("a " + kind.opcode + " of " + length + " bytes exceeds the peer's"
                    + " receive buffer of " + max + " bytes (its receiveBufferSize) on connection " + core.description
                    + ": the peer's receive would fail and end the connection; split the message");
        }
    }

    /** Any thread: checks that a peer region came from this connection. */
    public void checkOwns(PeerRegion region) {
        if (peerRegions.contains(region)) {
            return;
        }
        boolean foreign;
        synchronized (foreignRegions) {
            foreign = foreignRegions.contains(region);
        }
        if (!foreign) {
            throw new IllegalArgumentException(region + " is not a region of the peer of " + core.description);
        }
    }

    /**
     * Any thread: a staged operation starts waiting for a pooled buffer; the end fails it
     * ({@link StagedSubscription#connectionEnded}).
     *
     * @return false when the connection has ended (then it is not kept and must not wait)
     */
    public boolean addStagedWaiter(StagedSubscription<?> s) {
        stagedWaiters.add(s);
        // Added before the core.state() is read, while the end writes the core.state() before it reads the
        // set (both volatile): an operation either sees the end here or is seen by it.
        if (core.state().compareTo(State.ENDED) >= 0) {
            stagedWaiters.remove(s);
            return false;
        }
        return true;
    }

    /** Any thread: a staged operation stopped waiting (leased, cancelled, refused, failed). */
    public void removeStagedWaiter(StagedSubscription<?> s) {
        stagedWaiters.remove(s);
    }

    /**
     * {@return null when {@code receive()} (or {@code writeAll}) may attach; otherwise what its subscriber gets: a
     * {@link ResourceClosedException} after a close by this side, else the connection's end}
     */
    public Throwable receiveRefusal() {
        if (core.closeRequested()) {
            return closedByThisSide();
        }
        return core.state().compareTo(State.ENDED) < 0 ? null : core.terminal();
    }

    /** {@return the regions the peer exposed in its hello} */
    public List<PeerRegion> peerRegions() {
        return peerRegions;
    }

    /** Loop thread: the peer's hello arrived (established). @param hello what it says */
    void peerHello(PeerHello.Accepted hello) {
        peerReceiveBufferSize = hello.receiveBufferSize();
        peerRegions = hello.regions();
    }

    /** The end: fails the staged operations still waiting for a pooled buffer (after the state is ENDED). */
    void failStaged(Throwable cause) {
        for (StagedSubscription<?> s : stagedWaiters) {
            ConnectionCore.safely(() -> s.connectionEnded(cause));
        }
    }

    /** The native connection is closed: closes the peer's regions; a raw one made later is refused. */
    void closeRegions() {
        for (PeerRegion p : peerRegions) {
            ConnectionCore.safely(() -> API.nativeRegion(p).close());
        }
        List<PeerRegion> foreign;
        synchronized (foreignRegions) {
            foreignClosed = true;
            foreign = List.copyOf(foreignRegions);
            foreignRegions.clear();
        }
        for (PeerRegion p : foreign) {
            ConnectionCore.safely(() -> API.nativeRegion(p).close());
        }
    }
}
