package io.cqflux.reactor.internal.server;

import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Registrar;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The registrations one accepted connection's peer was given: one per exposed {@link Region},
 * each with a key of its own ({@code Region.expose}). Owned by the connection's server until
 * the connection's native side is gone, then {@link #close() closed}, so that a key dies with its
 * connection: a peer that kept it, or handed it on, reaches nothing with it afterwards.
 *
 * <p>Why per connection: on libfabric a key is valid on every endpoint of its domain, and neither
 * tcp nor verbs can bind a registration to one endpoint ({@code fi_mr_bind(3)} returns
 * {@code -FI_ENOSYS}; {@code FI_MR_ENDPOINT} is not offered), so a shared registration would let
 * any peer that learned the key reach the region from any connection, for the region's life.
 *
 * <p>Not thread-safe in building; {@link #close()} is idempotent and may race a region's own close
 * (each registration is revoked once, {@code Region.unexpose}).
 */
final class ExposureSet implements AutoCloseable {
    private static final ApiAccess API = ApiAccess.get();

    private final List<Region> regions = new ArrayList<>();
    private final List<LocalRegion> registrations = new ArrayList<>();
    private volatile boolean closed;

    /**
     * Registers each region again for one connection, in order, in {@code into}: the instance's
     * transport, or the connection's own key scope (AcceptOptions#withKeysScopedToConnection).
     *
     * @param exposed the server's regions
     * @param live counts the live registrations: incremented for each, decremented when it is
     *     revoked (by this set's close or by its region's)
     * @param into where to register; {@code null}: each region's own transport
     * @return the set, whose {@link #descriptors()} go into that connection's hello
     * @throws RuntimeException when a region is closed or a registration fails (what was
     *     registered before it is closed again)
     */
    static ExposureSet register(List<Region> exposed, AtomicInteger live, Registrar into) {
        ExposureSet set = new ExposureSet();
        try {
            for (Region r : exposed) {
                // Counted first, since a revocation may come at once; uncounted once, whoever
                // revokes it (or the failed expose).
                AtomicBoolean uncounted = new AtomicBoolean();
                Runnable revoked = () -> {
                    if (uncounted.compareAndSet(false, true)) {
                        live.decrementAndGet();
                    }
                };
                live.incrementAndGet();
                LocalRegion reg;
                try {
                    reg = API.expose(r, into, revoked);
                } catch (RuntimeException | Error e) {
                    revoked.run();
                    throw e;
                }
                set.regions.add(r);
                set.registrations.add(reg);
            }
        } catch (RuntimeException | Error e) {
            set.close();
            throw e;
        }
        return set;
    }

    /** {@return the descriptors of this connection's registrations, in the regions' order} */
    List<byte[]> descriptors() {
        List<byte[]> out = new ArrayList<>(registrations.size());
        for (LocalRegion r : registrations) {
            out.add(r.descriptor());
        }
        return out;
    }

    /** {@return the number of registrations} */
    int size() {
        return registrations.size();
    }

    /** Revokes every registration of the set; idempotent, and once when two threads close it. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (int i = 0; i < registrations.size(); i++) {
            try {
                API.unexpose(regions.get(i), registrations.get(i));
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
