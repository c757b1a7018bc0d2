package io.cqflux.test.network;

import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.Disposable;

/**
 * A {@link PeerPool}'s events, each stamped with {@code System.nanoTime()} as it arrives: what the
 * heal-bound checks need to tell whether an attempt was in flight at the heal and when it ended. A
 * connect attempt sent into a partition cannot see the link come back (its request was dropped,
 * and the transport resends it only after its own timer: TCP's SYN after 1 s, 3 s, 7 s, the RDMA
 * CM's request after seconds); the pool, which has one attempt per connection at a time, abandons
 * a reconnect attempt at the end of its backoff slot ({@link io.cqflux.reactor.PeerPoolOptions#minAttemptTime()})
 * and starts the next at once, so the attempt in flight at a heal delays the pool by at most that
 * slot, not by the connect timeout.
 */
final class PoolTimeline {
    record Stamped(long nanos, PeerPoolEvent event) {
    }

    private final List<Stamped> seen = new CopyOnWriteArrayList<>();

    /** Records {@code pool}'s events from now on; {@return the subscription, to dispose after the test} */
    Disposable record(PeerPool pool) {
        return pool.events().subscribe(e -> seen.add(new Stamped(System.nanoTime(), e)));
    }

    /** {@return the events so far, in order} */
    List<PeerPoolEvent> events() {
        return seen.stream().map(Stamped::event).toList();
    }

    /**
     * {@return when the connect attempt in flight at {@code at} ended (its CONNECTED or RETRYING),
     * or {@code at} when none was in flight}; -1 when one was in flight and has not ended yet
     */
    long attemptInFlightEnds(long at) {
        long ends = at;
        for (int slot : seen.stream().mapToInt(s -> s.event().slot()).filter(i -> i >= 0).distinct().toArray()) {
            Stamped start = null;
            Stamped outcome = null;
            for (Stamped s : seen) {
                if (s.event().slot() != slot) {
                    continue;
                }
                PeerPoolEvent.Kind k = s.event().kind();
                if (s.nanos() <= at) {
                    if (k == PeerPoolEvent.Kind.CONNECTING) {
                        start = s;
                        outcome = null;
                    } else if (start != null && (k == PeerPoolEvent.Kind.CONNECTED || k == PeerPoolEvent.Kind.RETRYING)) {
                        start = null;
                    }
                } else if (start != null && outcome == null
                        && (k == PeerPoolEvent.Kind.CONNECTED || k == PeerPoolEvent.Kind.RETRYING)) {
                    outcome = s;
                }
            }
            if (start != null) {
                if (outcome == null) {
                    return -1;
                }
                ends = Math.max(ends, outcome.nanos());
            }
        }
        return ends;
    }

    /** {@return when the first {@code kind} event at or after {@code at} arrived, or -1} */
    long first(PeerPoolEvent.Kind kind, long at) {
        for (Stamped s : seen) {
            if (s.nanos() >= at && s.event().kind() == kind) {
                return s.nanos();
            }
        }
        return -1;
    }

    /** {@return the events as "+ms KIND(attempt)" relative to {@code origin}, for a FACT line or a failure} */
    String describe(long origin) {
        StringBuilder b = new StringBuilder("[");
        for (Stamped s : seen) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append(String.format("%+.0f ms %s", (s.nanos() - origin) / 1e6, s.event().kind()));
            if (s.event().kind() == PeerPoolEvent.Kind.CONNECTING || s.event().kind() == PeerPoolEvent.Kind.RETRYING) {
                b.append('(').append(s.event().attempt()).append(')');
            }
        }
        return b.append(']').toString();
    }
}
