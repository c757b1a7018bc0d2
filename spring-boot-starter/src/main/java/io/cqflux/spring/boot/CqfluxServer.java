package io.cqflux.spring.boot;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import java.util.Set;
import org.springframework.context.SmartLifecycle;

/**
 * The server side of the application ({@code cqflux.server.*}): at start it allocates or maps each
 * region, registers it with the instance, and listens, exposing the regions to every client in the
 * order declared (a client's {@code remoteRegion(0)} is the first); each connection is kept until
 * its peer closes it. At stop it closes the server and the regions, writes a mapped file's pages
 * back ({@link MemorySegment#force()}) and unmaps the memory.
 *
 * <p><b>Order.</b> Its phase is just below {@link CqfluxLifecycle#PHASE}: it listens before the
 * named peers connect (an application may be its own peer), and stops after the lifecycle has
 * drained and disposed the instance, which has closed the server and deregistered the regions, so
 * that the memory is unmapped only once no NIC can reach it.
 *
 * <p>Thread-safe: start and stop are called by the context, the getters from anywhere.
 */
public final class CqfluxServer implements SmartLifecycle {
    /** Just below the lifecycle's: started before it, stopped after it. */
    public static final int PHASE = CqfluxLifecycle.PHASE - 1;

    /**
     * One region to expose.
     *
     * @param name its name under {@code cqflux.server.regions}
     * @param size its size in bytes; for a file, 0 keeps the file's own size
     * @param file the file to map, or null for anonymous memory
     * @param access what peers may do with it
     */
    public record Spec(String name, long size, Path file, Set<RegionAccess> access) {
        /** Checks each part, naming the property. */
        public Spec {
            Objects.requireNonNull(name, "name");
            String at = "cqflux.server.regions." + name;
            if (access == null || access.isEmpty()) {
                throw new CqfluxPropertyException(at + ".access", access,
                        new IllegalArgumentException("a region needs at least one access right"));
            }
            if (file == null && size <= 0) {
                throw new CqfluxPropertyException(at + ".size", size + " bytes",
                        new IllegalArgumentException("a region of anonymous memory needs a size above 0"
                                + " (or set " + at + ".file)"));
            }
            if (size < 0) {
                throw new CqfluxPropertyException(at + ".size", size + " bytes",
                        new IllegalArgumentException("the size is negative"));
            }
            access = Set.copyOf(access);
        }
    }

    private final Cqflux cqflux;
    private final InetSocketAddress address;
    private final List<Spec> specs;
    private final Duration timeout;
    /** Completes the accept options (authenticator, limits) of the exposed regions. */
    private final UnaryOperator<AcceptOptions> acceptOptions;

    /**
     * The property the listen address came from, for an error that names it: {@code null} when
     * none was set (the loopback default).
     */
    private String addressProperty = "cqflux.server.address";

    private Arena arena;
    private final Map<String, Region> regions = new LinkedHashMap<>();
    private final List<MemorySegment> mapped = new ArrayList<>();
    private volatile RdmaServer server;

    /**
     * @param cqflux the instance that listens
     * @param address where to listen (port 0: a free one, on fabric; rpma binds only the port given)
     * @param specs the regions, in the order they are exposed
     * @param timeout the bind's and the stop's budget
     */
    public CqfluxServer(Cqflux cqflux, InetSocketAddress address, List<Spec> specs, Duration timeout) {
        this(cqflux, address, specs, timeout, UnaryOperator.identity());
    }

    /**
     * @param cqflux the instance that listens
     * @param address where to listen (port 0: a free one, on fabric; rpma binds only the port given)
     * @param specs the regions, in the order they are exposed
     * @param timeout the bind's and the stop's budget
     * @param acceptOptions completes {@code AcceptOptions.exposing(regions)}: an authenticator, limits
     */
    public CqfluxServer(Cqflux cqflux, InetSocketAddress address, List<Spec> specs, Duration timeout,
                        UnaryOperator<AcceptOptions> acceptOptions) {
        this.cqflux = Objects.requireNonNull(cqflux, "cqflux");
        this.address = Objects.requireNonNull(address, "address");
        this.specs = List.copyOf(specs);
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.acceptOptions = Objects.requireNonNull(acceptOptions, "acceptOptions");
    }

    @Override
    public synchronized void start() {
        if (server != null) {
            return;
        }
        arena = Arena.ofShared();
        try {
            for (Spec s : specs) {
                try {
                    regions.put(s.name(), cqflux.register(memory(s), s.access().toArray(RegionAccess[]::new)));
                } catch (UnsupportedCapabilityException e) {
                    throw new CqfluxPropertyException("cqflux.server.regions." + s.name() + ".access", s.access(), e);
                }
            }
            AcceptOptions options = acceptOptions.apply(AcceptOptions.exposing(regions.values().toArray(Region[]::new)));
            try {
                server = cqflux.bind(address, options, c -> c.onDispose()).block(timeout);
            } catch (UnsupportedCapabilityException e) {
                if (options.keysScopedToConnection()) {
                    // The only capability a bind requires (RdmaServer#keysScopedToConnection):
                    // refused on rpma and fabric on providers other than tcp and verbs, named by its property.
                    throw new CqfluxPropertyException("cqflux.server.keys-scoped-to-connection", true, e);
                }
                throw e;
            } catch (io.cqflux.core.NativeCallException e) {
                if (errno(e, "EADDRINUSE")) {
                    // Another listener holds the port: the start fails naming the property to
                    // change, as Spring Boot's own web server does for its port.
                    throw new CqfluxPropertyException("cqflux.server.port", address.getPort(), e);
                }
                if (errno(e, "EADDRNOTAVAIL")) {
                    // The kernel decides whether this host may listen there (a virtual address
                    // with ip_nonlocal_bind may), so the address is not checked before: its
                    // refusal names the property.
                    throw addressRefused(e);
                }
                throw e;
            } catch (IllegalArgumentException e) {
                // Only refusals the properties explain are blamed on one: the regions'
                // descriptors over the transport's accept data (too many regions), a port 0 on
                // rpma, which librpma cannot bind, or an address the provider cannot listen on.
                // Anything else (options the application added) stays as it was thrown.
                String m = String.valueOf(e.getMessage());
                if (address.getPort() == 0 && m.contains("port 0")) {
                    throw new CqfluxPropertyException("cqflux.server.port", 0, e);
                }
                if (m.contains("exposed regions")) {
                    throw new CqfluxPropertyException("cqflux.server.regions", List.copyOf(regions.keySet()), e);
                }
                if (m.contains("cannot listen on")) {
                    throw addressRefused(e);
                }
                throw e;
            }
        } catch (RuntimeException e) {
            release();
            throw e;
        }
    }

    /** Names the property the address came from ({@link #addressFrom}); for none, the one that would set it. */
    synchronized CqfluxServer addressFrom(String property) {
        this.addressProperty = property;
        return this;
    }

    private CqfluxPropertyException addressRefused(RuntimeException e) {
        String host = address.getAddress().getHostAddress();
        return addressProperty != null ? new CqfluxPropertyException(addressProperty, host, e)
                : new CqfluxPropertyException("cqflux.server.address", "(unset: " + host + ", the loopback default)", e);
    }

    /** {@return whether a listen failed with that errno (bind(2): EADDRINUSE, EADDRNOTAVAIL)} */
    private static boolean errno(io.cqflux.core.NativeCallException e, String name) {
        // fabric names the errno itself (FI_EADDRINUSE); rpma reports RPMA_E_PROVIDER with the errno in its text.
        return String.valueOf(e.codeName()).contains(name) || String.valueOf(e.nativeText()).contains(name);
    }

    private MemorySegment memory(Spec s) {
        if (s.file() == null) {
            try {
                // Page-aligned, as a NIC registration prefers (ibv_reg_mr(3) pins whole pages).
                return arena.allocate(s.size(), 4096);
            } catch (OutOfMemoryError e) {
                // The arena's native allocation failed (malloc(3) returned NULL); the Java heap is
                // untouched, so the size is what to report, naming its property.
                throw new CqfluxPropertyException("cqflux.server.regions." + s.name() + ".size", s.size() + " bytes",
                        new IllegalArgumentException("cannot allocate " + s.size() + " bytes of anonymous memory: "
                                + e.getMessage()));
            }
        }
        String at = "cqflux.server.regions." + s.name() + ".file";
        try (FileChannel ch = FileChannel.open(s.file(), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            long size = s.size() > 0 ? s.size() : ch.size();
            if (size == 0) {
                throw new CqfluxPropertyException(at, s.file(), new IllegalArgumentException(
                        "the file is empty: set cqflux.server.regions." + s.name() + ".size"));
            }
            if (ch.size() < size) {
                // Grows the file (sparse where the file system allows); a longer file keeps its tail.
                ch.write(java.nio.ByteBuffer.wrap(new byte[1]), size - 1);
            }
            // The mapping outlives the channel (FileChannel.map: "remains valid until ... unmapped").
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            mapped.add(m);
            return m;
        } catch (IOException e) {
            throw new CqfluxPropertyException(at, s.file(), new IllegalArgumentException(
                    "cannot map " + s.file() + ": " + e, e));
        }
    }

    @Override
    public synchronized void stop() {
        release();
    }

    private void release() {
        RdmaServer s = server;
        server = null;
        if (s != null) {
            s.disposeNow(timeout);
        }
        for (Region r : regions.values()) {
            r.close();
        }
        regions.clear();
        for (MemorySegment m : mapped) {
            m.force();
        }
        mapped.clear();
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** {@return where it listens (the port chosen, for port 0), or null before the start} */
    public InetSocketAddress address() {
        RdmaServer s = server;
        return s == null ? null : s.address();
    }

    /** {@return the regions it exposes, by name, in the order exposed; empty before the start} */
    public synchronized Map<String, Region> regions() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(regions));
    }

    /** {@return whether it listens and its instance runs} */
    public boolean isServing() {
        RdmaServer s = server;
        return s != null && !s.isDisposed() && !cqflux.isDisposed();
    }

    /**
     * {@return what the server's limits and authenticator did so far ({@link RdmaServer#stats()}),
     * or null before the start}
     */
    public RdmaServer.Stats stats() {
        RdmaServer s = server;
        return s == null ? null : s.stats();
    }

    /**
     * {@return whether each connection it accepts gets keys that work on it only
     * ({@link RdmaServer#keysScopedToConnection()}; {@code cqflux.server.keys-scoped-to-connection}),
     * false before the start}
     */
    public boolean keysScopedToConnection() {
        RdmaServer s = server;
        return s != null && s.keysScopedToConnection();
    }
}
