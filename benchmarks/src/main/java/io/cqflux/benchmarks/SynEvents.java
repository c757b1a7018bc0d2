package io.cqflux.benchmarks;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.EventChannel;
import java.util.concurrent.ConcurrentLinkedQueue;

/** A connection's event channel. */
final class SynEvents implements EventChannel {
    final SynSignal signal = new SynSignal();
    private final ConcurrentLinkedQueue<ConnectionEvent> queue = new ConcurrentLinkedQueue<>();

    void add(ConnectionEvent e) {
        queue.add(e);
        signal.signal();
    }

    @Override
    public int fd() {
        return signal.fd();
    }

    @Override
    public ConnectionEvent nextEvent() {
        return signal.poll(queue);
    }
}
