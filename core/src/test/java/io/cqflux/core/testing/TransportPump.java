package io.cqflux.core.testing;

import static org.junit.jupiter.api.Assertions.fail;

import io.cqflux.core.spi.Pollable;
import io.cqflux.core.spi.SharedSource;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Test-side stand-in for the event loop (core cannot use it): polls every registered completion
 * queue, event channel (dispatching the shared sources they name, as the loop does) and listener
 * in the calling thread until a condition holds or a deadline
 * passes. Between passes it honours {@link Pollable#prepareToSleep()} and then waits on all fds
 * with {@code poll(2)} for at most a few milliseconds, so an idle pump does not spin. Every wait
 * has a deadline; nothing sleeps as synchronisation. Not thread-safe.
 */
public final class TransportPump implements AutoCloseable {

    /** What one connection produced: its completions (snapshots) and events, in arrival order. */
    public static final class Side {
        private final String name;
        private final Connection connection;
        /** Completions not yet taken by a test. */
        public final List<CompletionRecord> completions = new ArrayList<>();
        /** Events in arrival order. */
        public final List<ConnectionEvent> events = new ArrayList<>();
        /** The largest number of completions one poll call returned on this side. */
        public int largestBatch;

        Side(String name, Connection connection) {
            this.name = name;
            this.connection = connection;
        }

        /** {@return the connection} */
        public Connection connection() {
            return connection;
        }

        @Override
        public String toString() {
            return name + "[completions=" + completions + ", events=" + events + "]";
        }
    }

    private static final MethodHandle POLL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final int BATCH = 16;

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment scratch = arena.allocate((long) BATCH * CompletionQueue.MAX_ENTRY_BYTES, 64);
    private final MemorySegment pollfds = arena.allocate(8L * 64, 8);
    private final List<Side> sides = new ArrayList<>();
    private final List<Listener> listeners = new ArrayList<>();
    private final List<Deque<ConnectionRequest>> requests = new ArrayList<>();

    /**
     * Registers a connection.
     *
     * @param name for messages
     * @param c the connection
     * @return its side
     */
    public Side add(String name, Connection c) {
        Side s = new Side(name, c);
        sides.add(s);
        return s;
    }

    /**
     * Registers a listener.
     *
     * @param l the listener
     * @return the queue its requests land in
     */
    public Deque<ConnectionRequest> add(Listener l) {
        listeners.add(l);
        Deque<ConnectionRequest> q = new ArrayDeque<>();
        requests.add(q);
        return q;
    }

    /** Unregisters a connection (before closing it). @param s its side */
    public void remove(Side s) {
        sides.remove(s);
    }

    /** Unregisters a listener (before closing it). @param l the listener */
    public void remove(Listener l) {
        int i = listeners.indexOf(l);
        if (i >= 0) {
            listeners.remove(i);
            requests.remove(i);
        }
    }

    /** One pass over everything; {@return how many items it produced} */
    public int pollOnce() {
        int n = 0;
        // The loop's part for shared event sources (Pollable.sharedBy()): it alone reads them,
        // once per pass, routing each entry to its member, whose nextEvent() then returns it.
        java.util.Set<SharedSource> dispatched = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Side s : sides) {
            SharedSource shared = s.connection.events().sharedBy();
            if (shared != null && dispatched.add(shared)) {
                shared.dispatch();
            }
            // Completion queues that several connections share: read once, routed to the members.
            for (CompletionQueue q : s.connection.completionQueues()) {
                SharedSource sq = q.sharedBy();
                if (sq != null && dispatched.add(sq)) {
                    sq.dispatch();
                }
            }
        }
        for (Side s : sides) {
            for (CompletionQueue q : s.connection.completionQueues()) {
                // the loop's cycle: acknowledge (rpma: consume the notification and re-arm the CQ,
                // rpma_cq_wait(3); a no-op on fabric), then drain. Without it an rpma CQ fd stays
                // readable after its first notification and the pump's poll(2) never sleeps.
                q.acknowledge();
                int got;
                do {
                    got = q.poll(scratch, BATCH, c -> s.completions.add(c.snapshot()));
                    s.largestBatch = Math.max(s.largestBatch, got);
                    n += got;
                } while (got == BATCH);
            }
            ConnectionEvent e;
            while ((e = s.connection.events().nextEvent()) != null) {
                s.events.add(e);
                n++;
            }
        }
        for (int i = 0; i < listeners.size(); i++) {
            ConnectionRequest r;
            while ((r = listeners.get(i).nextRequest()) != null) {
                requests.get(i).add(r);
                n++;
            }
        }
        return n;
    }

    /**
     * Pumps until {@code condition} holds.
     *
     * @param what for the failure message
     * @param timeout the deadline
     * @param condition checked after every pass
     */
    public void until(String what, Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            int n = pollOnce();
            if (condition.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + timeout + " waiting for " + what + "; state: " + sides);
            }
            if (n == 0) {
                waitForFds(5);
            }
        }
    }

    /**
     * Pumps for a while, for checks that something does NOT happen.
     *
     * @param d how long
     */
    public void drainFor(Duration d) {
        long end = System.nanoTime() + d.toNanos();
        while (System.nanoTime() - end < 0) {
            if (pollOnce() == 0) {
                waitForFds(2);
            }
        }
    }

    private void waitForFds(int millis) {
        List<Pollable> all = new ArrayList<>();
        for (Side s : sides) {
            all.addAll(s.connection.completionQueues());
            all.add(s.connection.events());
        }
        all.addAll(listeners);
        int n = 0;
        for (Pollable p : all) {
            // A shared completion queue's member is not asked: its shared source is (as the loop does).
            Pollable asked = p instanceof CompletionQueue q && q.sharedBy() != null ? q.sharedBy() : p;
            if (!asked.prepareToSleep()) {
                return; // work pending that the fd will not signal: poll again first
            }
            if (n < 64) {
                pollfds.set(ValueLayout.JAVA_INT, n * 8L, p.fd());
                pollfds.set(ValueLayout.JAVA_SHORT, n * 8L + 4, (short) 1); // POLLIN
                pollfds.set(ValueLayout.JAVA_SHORT, n * 8L + 6, (short) 0);
                n++;
            }
        }
        try {
            int rc = (int) POLL.invokeExact(pollfds, (long) n, millis);
            if (rc < 0) {
                fail("poll(2) failed");
            }
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
