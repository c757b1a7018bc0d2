package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import reactor.core.Disposable;

/**
 * Test helper: records a {@link PeerPool}'s events, waits (bounded) for one, and checks that each
 * slot's events follow the order {@link PeerPoolEvent} documents.
 */
final class PeerPoolEvents implements AutoCloseable {
    final List<PeerPoolEvent> seen = new CopyOnWriteArrayList<>();
    volatile boolean completed;
    private final Disposable sub;

    PeerPoolEvents(PeerPool pool) {
        sub = pool.events().subscribe(seen::add, e -> fail("events() failed: " + e), () -> completed = true);
    }

    /** Waits until {@code n} events match, at most {@code max}. */
    void await(long n, Predicate<PeerPoolEvent> which, Duration max, String what) {
        assertTrue(FaultRig.await(() -> seen.stream().filter(which).count() >= n, max),
                "no " + what + " within " + max + "; events: " + this);
    }

    long count(PeerPoolEvent.Kind kind) {
        return seen.stream().filter(e -> e.kind() == kind).count();
    }

    /**
     * Checks the documented order per slot: CONNECTING(a) -> CONNECTED(a) | RETRYING(a+1);
     * CONNECTED(a) -> LOST; LOST -> RETRYING(1) (the connection stayed up) | RETRYING(a+1) (it did
     * not: the backoff goes on); RETRYING(a) -> CONNECTING(a); CLOSED last; attempts from 1.
     */
    void assertInOrder() {
        Map<Integer, PeerPoolEvent> last = new HashMap<>();
        Map<Integer, PeerPoolEvent> connected = new HashMap<>();
        boolean closed = false;
        for (PeerPoolEvent e : seen) {
            if (closed) {
                fail("an event after CLOSED: " + e + "; events: " + this);
            }
            if (e.kind() == PeerPoolEvent.Kind.CLOSED) {
                closed = true;
                continue;
            }
            PeerPoolEvent p = last.put(e.slot(), e);
            PeerPoolEvent c = e.kind() == PeerPoolEvent.Kind.CONNECTED ? connected.put(e.slot(), e) : connected.get(e.slot());
            boolean ok = switch (e.kind()) {
                case CONNECTING -> p == null ? e.attempt() == 1
                        : p.kind() == PeerPoolEvent.Kind.RETRYING && p.attempt() == e.attempt();
                case CONNECTED -> p != null && p.kind() == PeerPoolEvent.Kind.CONNECTING && p.attempt() == e.attempt()
                        && e.connection() != null;
                case RETRYING -> p != null && e.cause() != null && !e.delay().isNegative()
                        && (p.kind() == PeerPoolEvent.Kind.CONNECTING && e.attempt() == p.attempt() + 1
                            || p.kind() == PeerPoolEvent.Kind.LOST
                                && (e.attempt() == 1 || c != null && e.attempt() == c.attempt() + 1));
                case LOST -> p != null && p.kind() == PeerPoolEvent.Kind.CONNECTED && e.cause() != null;
                case CLOSED -> true;
            };
            if (!ok) {
                fail("event " + e + " after " + p + " breaks the documented order; events: " + this);
            }
        }
    }

    @Override
    public void close() {
        sub.dispose();
    }

    @Override
    public String toString() {
        return seen.stream().map(e -> e.kind() + "(" + e.slot() + "," + e.attempt()
                        + (e.kind() == PeerPoolEvent.Kind.RETRYING ? "," + e.delay().toMillis() + "ms" : "") + ")")
                .collect(Collectors.joining(" "));
    }
}
