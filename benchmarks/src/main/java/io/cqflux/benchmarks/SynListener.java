package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/** A listening port: requests queue here until the loop takes them. */
final class SynListener implements Listener {
    /** Listening ports of every synthetic transport in the JVM. */
    private static final ConcurrentHashMap<Integer, SynListener> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(40_000);

    final InetSocketAddress address;
    final ConnectionConfig config;
    private final SynSignal signal = new SynSignal();
    private final ConcurrentLinkedQueue<SynRequest> requests = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    private SynListener(InetSocketAddress address, ConnectionConfig config) {
        this.address = address;
        this.config = config;
    }

    /** Any thread: listens on {@code address}'s port, or on a fresh one for port 0. */
    static SynListener open(InetSocketAddress address, ConnectionConfig config) {
        int port = address.getPort() == 0 ? NEXT_PORT.incrementAndGet() : address.getPort();
        SynListener l = new SynListener(new InetSocketAddress(address.getAddress(), port), config);
        if (LISTENERS.putIfAbsent(port, l) != null) {
            l.signal.close();
            throw new IllegalStateException("synthetic port " + port + " is already listening");
        }
        return l;
    }

    /** Any thread: the listener on {@code port}, or null. */
    static SynListener at(int port) {
        return LISTENERS.get(port);
    }

    boolean offer(SynRequest r) {
        if (closed) {
            return false;
        }
        requests.add(r);
        signal.signal();
        return true;
    }

    @Override
    public int fd() {
        return signal.fd();
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public ConnectionRequest nextRequest() {
        return signal.poll(requests);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LISTENERS.remove(address.getPort(), this);
        for (SynRequest r; (r = requests.poll()) != null; ) {
            r.reject();
        }
        signal.close();
    }
}
