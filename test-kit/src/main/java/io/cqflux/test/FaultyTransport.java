package io.cqflux.test;

import io.cqflux.core.Capability;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * The {@code faulty} test double: a real transport with every connection wrapped in a
 * {@link FaultyConnection}. Regions pass through unchanged.
 */
final class FaultyTransport implements Transport {
    private final Transport inner;
    private final Faults faults;
    /**
     * The peers' control words (credits, goodbye), whose writes are never faulted: regions the
     * reactive layer's handshake makes from a raw descriptor with stated access.
     */
    private final Set<RemoteRegion> controlRegions = Collections.synchronizedSet(
            Collections.newSetFromMap(new WeakHashMap<>()));
    /** The reactive layer's handshake, the one maker of control regions. */
    private static final String HANDSHAKE = "io.cqflux.reactor.internal.connection.PeerHello";

    FaultyTransport(Transport inner, Faults faults) {
        this.inner = inner;
        this.faults = faults;
    }

    Faults faults() {
        return faults;
    }

    boolean isControl(RemoteRegion r) {
        return controlRegions.contains(r);
    }

    @Override
    public String name() {
        // Checks reads the name on every operation: build it once.
        String n = name;
        if (n == null) {
            n = Faults.TRANSPORT + "(" + inner.name() + ")";
            name = n;
        }
        return n;
    }

    private String name;

    @Override
    public Set<Capability> capabilities() {
        Set<Capability> hidden = faults.hiddenCapabilities();
        if (hidden.isEmpty()) {
            return inner.capabilities();
        }
        Set<Capability> shown = java.util.EnumSet.noneOf(Capability.class);
        shown.addAll(inner.capabilities());
        shown.removeAll(hidden);
        return java.util.Collections.unmodifiableSet(shown);
    }

    /** The wrapped transport's, unless the test hid the capability (Faults#withoutCapabilities). */
    @Override
    public String connectionScopedKeysRefusal() {
        return hidesScopedKeys() ? HIDDEN_SCOPED_KEYS : inner.connectionScopedKeysRefusal();
    }

    /** The wrapped transport's, unless the test hid the capability (Faults#withoutCapabilities). */
    @Override
    public String connectionScopedKeysDefaultRefusal() {
        return hidesScopedKeys() ? HIDDEN_SCOPED_KEYS : inner.connectionScopedKeysDefaultRefusal();
    }

    private static final String HIDDEN_SCOPED_KEYS = "the test's Faults hide it (test double)";

    private boolean hidesScopedKeys() {
        return faults.hiddenCapabilities().contains(Capability.CONNECTION_SCOPED_KEYS);
    }

    @Override
    public long maxMessageSize() {
        return inner.maxMessageSize();
    }

    @Override
    public boolean writeWithImmediateConsumesReceive() {
        return inner.writeWithImmediateConsumesReceive();
    }

    @Override
    public int flushReadBytes() {
        return inner.flushReadBytes();
    }

    @Override
    public int maxConnectPrivateData() {
        return inner.maxConnectPrivateData();
    }

    @Override
    public int maxAcceptPrivateData() {
        return inner.maxAcceptPrivateData();
    }

    @Override
    public byte[] handshake() {
        return inner.handshake();
    }

    @Override
    public void checkPeerHandshake(byte[] handshake) {
        inner.checkPeerHandshake(handshake);
    }

    @Override
    public LocalRegion register(MemorySegment memory, Set<RegionAccess> access) {
        return inner.register(memory, access);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] descriptor) {
        return inner.remoteRegion(descriptor);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        RemoteRegion r = inner.remoteRegion(rawDescriptor, access);
        // The caller's own raw regions (RdmaConnection.remoteRegion(byte[], ...), a foreign
        // peer's) come through this method too, and are faulted like any other: only the
        // handshake's are control words. The SPI call carries nothing else to tell them apart.
        if (calledByTheHandshake()) {
            controlRegions.add(r);
        }
        return r;
    }

    private static boolean calledByTheHandshake() {
        return StackWalker.getInstance().walk(frames -> frames
                .dropWhile(f -> f.getClassName().equals(FaultyTransport.class.getName()))
                .findFirst()
                .map(f -> f.getClassName().equals(HANDSHAKE))
                .orElse(false));
    }

    @Override
    public Listener listen(InetSocketAddress address, ConnectionConfig config) {
        Listener l = inner.listen(address, config);
        return new Listener() {
            @Override
            public InetSocketAddress address() {
                return l.address();
            }

            @Override
            public ConnectionRequest nextRequest() {
                ConnectionRequest r = l.nextRequest();
                return r == null ? null : new ConnectionRequest() {
                    @Override
                    public byte[] privateData() {
                        return r.privateData();
                    }

                    @Override
                    public Connection accept(byte[] privateData) {
                        failIfAsked();
                        return new FaultyConnection(r.accept(privateData), FaultyTransport.this);
                    }

                    /** The wrapped request's, for the same hello on the wire (a queue of its own: no affinity). */
                    @Override
                    public Connection acceptWithHello(java.util.function.UnaryOperator<byte[]> hello, Object affinity) {
                        failIfAsked();
                        return new FaultyConnection(r.acceptWithHello(hello, null), FaultyTransport.this);
                    }

                    /** The wrapped request's: a server scopes keys by default where the transport can. */
                    @Override
                    public io.cqflux.core.spi.KeyScope scopeKeys() {
                        return r.scopeKeys();
                    }

                    /** Faults#failNextAccept: answered first, as a real transport's failed accept is. */
                    private void failIfAsked() {
                        Error e = faults.takeAcceptFailure();
                        if (e != null) {
                            r.reject();
                            throw e;
                        }
                    }

                    @Override
                    public void reject() {
                        r.reject();
                    }
                };
            }

            @Override
            public int fd() {
                return l.fd();
            }

            @Override
            public boolean prepareToSleep() {
                return l.prepareToSleep();
            }

            @Override
            public void close() {
                l.close();
            }

            /** The wrapped listener's: its close may wait, so the server calls it off the loop. */
            @Override
            public boolean closesOffLoop() {
                return l.closesOffLoop();
            }
        };
    }

    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        return new FaultyConnection(inner.connect(address, config, privateData), this);
    }

    /** The wrapped transport's, for the same hello on the wire (a queue of its own: no affinity). */
    @Override
    public Connection connectWithHello(InetSocketAddress address, ConnectionConfig config,
                                       java.util.function.UnaryOperator<byte[]> hello, Object affinity) {
        return new FaultyConnection(inner.connectWithHello(address, config, hello, null), this);
    }

    @Override
    public byte[] connectionParametersTemplate() {
        return inner.connectionParametersTemplate();
    }

    /** As the wrapped transport: a connection and its wrapper are made on one thread and handed to the loop together. */
    @Override
    public boolean connectsOffLoop() {
        return inner.connectsOffLoop();
    }

    /** As the wrapped transport (see {@link #connectsOffLoop()}). */
    @Override
    public boolean acceptsOffLoop() {
        return inner.acceptsOffLoop();
    }

    @Override
    public void close() {
        inner.close();
    }

    @Override
    public String toString() {
        return name();
    }
}
