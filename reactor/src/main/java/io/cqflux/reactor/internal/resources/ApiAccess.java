package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Registrar;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.AcceptDecision;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.InboundMessage;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.connection.Limits;
import io.cqflux.reactor.internal.pool.PoolCore;
import io.cqflux.reactor.internal.server.ServerCore;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.util.Logger;

/**
 * What the internal packages may do to the public API's objects beyond their public methods: make
 * them, reach the native object they wrap or the instance's parts, and move their reference
 * counts. The public package implements it in one package-private class and
 * {@link #install installs} it from that class's static initializer, so the public types gain no
 * public member. On the module path nothing
 * outside the project's modules reaches this interface (its package is exported to them only);
 * on the class path any code can call it, so it guards itself: the first use installs the
 * library's implementation before anything else can, and {@link #install} refuses every
 * installation after that one.
 *
 * <p>Every method is as thread-safe as the member it forwards to; their javadoc in the public
 * package states the rules (loop thread, at most once).
 */
public interface ApiAccess {

    /** {@return the one implementation, installed by the public package's access class} */
    static ApiAccess get() {
        return Holder.ACCESS;
    }

    /**
     * Installs the implementation; the public package's access class calls it once, from its
     * static initializer.
     *
     * <p>Reading {@code Holder.installed} initializes the holder first, which installs the
     * library's implementation: any other caller, first or not, finds one installed and is
     * refused.
     *
     * @param access the implementation
     * @throws IllegalStateException when one is installed already
     * @throws NullPointerException when {@code access} is null
     */
    static void install(ApiAccess access) {
        java.util.Objects.requireNonNull(access, "access");
        synchronized (Holder.class) {
            if (Holder.installed != null) {
                throw new IllegalStateException("ApiAccess is installed already (by " + Holder.installed.getClass().getName()
                        + "); a second installation (" + access.getClass().getName() + ") is refused");
            }
            Holder.installed = access;
        }
    }

    // ---------------------------------------------------------------- connections

    /** {@return the public face of a new connection} @param core the connection's state */
    RdmaConnection newConnection(ConnectionCore core);

    /** {@return the state behind a connection} @param connection the connection */
    ConnectionCore core(RdmaConnection connection);

    // ---------------------------------------------------------------- regions

    /**
     * {@return the public face of a peer's region}
     *
     * @param region the transport's descriptor
     * @param index its index in the peer's hello
     */
    PeerRegion newPeerRegion(RemoteRegion region, int index);

    /** {@return the transport's descriptor of a peer's region} @param region the region */
    RemoteRegion nativeRegion(PeerRegion region);

    /** {@return the transport's registration of a local region} @param region the region */
    LocalRegion nativeRegion(Region region);

    /**
     * Checks that a local region belongs to the transport an operation posts on.
     *
     * @param region the region
     * @param transport the connection's transport
     * @param role the operand's role, for the message
     */
    void checkRegisteredWith(Region region, Transport transport, String role);

    /**
     * Marks one more operation as using a region.
     *
     * @param region the region
     * @param role the operand's role, for the message
     * @throws ResourceClosedException when the region is closed
     */
    void acquire(Region region, String role);

    /** Ends one operation's use of a region. @param region the region */
    void release(Region region);

    // ---------------------------------------------------------------- pooled buffers

    /** {@return the pool's region as described to peers, registered or not} @param pool the pool */
    Region describedRegion(BufferPool pool);

    /** {@return the error a closed pool fails its takers with} @param pool the pool */
    ResourceClosedException closedError(BufferPool pool);

    /**
     * Queues a taker for the next free lease (or serves it at once).
     *
     * @param pool the pool
     * @param taker the taker
     */
    void request(BufferPool pool, LeaseTaker taker);

    /**
     * Withdraws a queued taker.
     *
     * @param pool the pool
     * @param taker the taker
     * @return whether it was still queued
     */
    boolean withdraw(BufferPool pool, LeaseTaker taker);

    /** {@return the lease's region (the pool's)} @param lease the lease */
    Region region(BufferLease lease);

    /** {@return the lease's offset in its region} @param lease the lease */
    long offset(BufferLease lease);

    /** {@return the pool a lease is of} @param lease the lease */
    BufferPool pool(BufferLease lease);

    /**
     * Makes an operation the owner of a lease.
     *
     * @param lease the lease
     * @throws IllegalStateException when the lease is released or owned by an operation already
     */
    void handOver(BufferLease lease);

    /** Gives a lease back from the operation that owns it; once. @param lease the lease */
    void releaseFromOperation(BufferLease lease);

    // ---------------------------------------------------------------- received messages

    /** {@return a new, empty received-message view} */
    InboundMessage newInboundMessage();

    /**
     * Points a received-message view at a receive buffer.
     *
     * @param message the view
     * @param buffer the receive buffer
     * @param length the bytes received
     * @param opcode the receive's opcode
     * @param hasImmediate whether immediate data came with it
     * @param immediate the immediate data
     */
    void set(InboundMessage message, MemorySegment buffer, long length, Opcode opcode, boolean hasImmediate,
             int immediate);

    /** Ends a received-message view's validity. @param message the view */
    void invalidate(InboundMessage message);

    // ---------------------------------------------------------------- the server (internal.server)

    /**
     * {@return a server over a bound listener, which it owns from now on; it watches nothing yet}
     *
     * @param owner the instance that binds it
     * @param loop the loop the listener is watched on
     * @param listener the listener
     * @param exposed the regions each accepted connection is given registrations of
     * @param handler where every connection goes, or null: to {@link RdmaServer#connections()}
     * @param rawAccept the accept function of a raw private data server, or null: a hello server
     * @param options the bind's options, or null: the defaults
     */
    RdmaServer newServer(Cqflux owner, EventLoop loop, Listener listener, List<Region> exposed,
                         Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
                         Function<byte[], AcceptDecision> rawAccept, AcceptOptions options);

    /** {@return what a server is behind its public methods} @param server the server */
    ServerCore core(RdmaServer server);

    /**
     * {@return the private data a raw accept function's decision answers with, not copied (the
     * decision keeps its own copy); null for a rejection}
     *
     * @param decision the decision
     */
    byte[] data(AcceptDecision decision);

    /**
     * {@return whether the instance keeps the server, to close it in its shutdown; false when the
     * shutdown began}
     *
     * @param owner the instance
     * @param server the server
     */
    boolean keep(Cqflux owner, RdmaServer server);

    /**
     * Refuses what a disposed instance cannot do.
     *
     * @param owner the instance
     * @throws ResourceClosedException when it is disposed
     */
    void checkOpen(Cqflux owner);

    /** {@return how the instance makes, adopts and counts connections} @param owner the instance */
    ConnectionFactory factory(Cqflux owner);

    /** {@return the instance's transport} @param owner the instance */
    Transport transport(Cqflux owner);

    /** {@return the instance's connection configuration} @param owner the instance */
    ConnectionConfig config(Cqflux owner);

    /** {@return the instance's per-connection limits} @param owner the instance */
    Limits limits(Cqflux owner);

    /** {@return the instance's first loop, where its servers listen} @param owner the instance */
    EventLoop firstLoop(Cqflux owner);

    /**
     * {@return a registration of its own of a region, for one accepted connection, revoked with
     * the region at the latest}
     *
     * @param region the region
     * @param into where to register (the connection's key scope), or null: the region's transport
     * @param onRevoke run once when the registration is revoked, by whichever revokes it
     * @throws ResourceClosedException when the region is closed
     */
    LocalRegion expose(Region region, Registrar into, Runnable onRevoke);

    /**
     * Revokes one registration of {@link #expose}; idempotent.
     *
     * @param region the region
     * @param registration the registration
     */
    void unexpose(Region region, LocalRegion registration);

    // ---------------------------------------------------------------- the peer pool (internal.pool)

    /** {@return the public face of a new peer pool} @param core the pool's state */
    PeerPool newPeerPool(PoolCore core);

    /**
     * {@return a pool's event}
     *
     * @param kind what happened
     * @param address the peer's address
     * @param slot which of the pool's connections, -1 for the whole pool
     * @param attempt the connect attempt, 0 when none
     * @param delay the wait before the next attempt, or null
     * @param cause why, or null
     * @param connection the connection's description, or null
     */
    PeerPoolEvent newPeerPoolEvent(PeerPoolEvent.Kind kind, InetSocketAddress address, int slot, int attempt,
                                   Duration delay, Throwable cause, String connection);

    /** {@return the pool's logger as it is now (a test may replace it)} */
    Logger peerPoolLog();

    /**
     * {@return the backoff delay before a reconnect attempt, without jitter}
     *
     * @param options the pool's options
     * @param attempt the attempt's number, from 1
     */
    Duration nominalBackoff(PeerPoolOptions options, int attempt);

    /**
     * {@return the longest time between the starts of two attempts of a reconnect}
     *
     * @param options the pool's options
     * @param connectTimeout the instance's connect timeout
     */
    Duration longestAttemptGap(PeerPoolOptions options, Duration connectTimeout);

    /** Where the installed implementation is kept; loads the public package's class on first use. */
    final class Holder {
        private static ApiAccess installed;
        private static final ApiAccess ACCESS = load();

        private Holder() {
        }

        private static ApiAccess load() {
            try {
                // Initializing the access class runs its static initializer, which installs it.
                Class.forName("io.cqflux.reactor.InternalAccess", true, ApiAccess.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new ExceptionInInitializerError(e);
            }
            synchronized (Holder.class) {
                if (installed == null) {
                    throw new IllegalStateException("io.cqflux.reactor.InternalAccess installed no ApiAccess");
                }
                return installed;
            }
        }
    }
}
