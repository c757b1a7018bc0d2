package io.cqflux.reactor.internal.resources;

import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.BufferPool;
import io.cqflux.reactor.InboundMessage;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.lang.foreign.MemorySegment;

/**
 * What the internal packages may do to the public API's objects beyond their public methods: make
 * them, reach the native object they wrap, and move their reference counts. The public package
 * implements it in one package-private class and {@link #install installs} it from that class's
 * static initializer, so the public types gain no public member. On the module path nothing
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

    // the facade (Cqflux)

    /** {@return the pool a lease is of} @param lease the lease */
    BufferPool pool(BufferLease lease);

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
