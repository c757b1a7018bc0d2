package io.cqflux.transport.fabric;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The queues one transport shares per event loop: the event queue of every connection a loop
 * serves ({@link SharedEventQueue}), opened with the loop's first endpoint and closed after its
 * last one's {@code fi_close}. Only tcp shares (the provider whose sharing was checked; see
 * SharedEventQueue); a connection without an affinity, or of another provider, gets a queue of
 * its own, counted the same way.
 *
 * <p>Why a count and never a trial close: {@code fi_close} of an EQ with endpoints bound answers
 * {@code -FI_EBUSY} and closes nothing, and of a CQ it also damages the queue (tcp 1.17: its
 * close after the endpoints are gone then aborts the process with a double free); the count is
 * the only guard.
 *
 * <p>Thread-safe (guarded by this): connects and accepts may run on any loop.
 */
final class LoopQueues {

    private final FabricTransport transport;
    private final Map<Object, SharedEventQueue> eventQueues = new IdentityHashMap<>();

    LoopQueues(FabricTransport transport) {
        this.transport = transport;
    }

    /**
     * {@return the event queue for a new endpoint of {@code affinity}'s loop, counting the
     * endpoint} Pair with {@link #release}.
     *
     * @param affinity the loop, or {@code null} for a queue of the endpoint's own
     */
    synchronized SharedEventQueue acquire(Object affinity) {
        Object key = transport.isTcp() ? affinity : null;
        SharedEventQueue q = key == null ? null : eventQueues.get(key);
        if (q == null) {
            q = new SharedEventQueue(transport, key);
            if (key != null) {
                eventQueues.put(key, q);
            }
        }
        q.endpoints++;
        return q;
    }

    /** An endpoint bound to {@code q} was closed (or never created): the last one closes the queue. */
    synchronized void release(SharedEventQueue q) {
        if (--q.endpoints > 0) {
            return;
        }
        if (q.affinity != null) {
            eventQueues.remove(q.affinity, q);
        }
        q.close();
    }

    /** {@return how many shared event queues are open (tests)} */
    synchronized int sharedEventQueues() {
        return eventQueues.size();
    }
}
