package io.cqflux.transport.fabric;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
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
    /** Each loop's open completion-queue groups (CompletionGroup), the one filling up last. */
    private final Map<Object, List<CompletionGroup>> groups = new IdentityHashMap<>();
    /** Connections per completion queue (TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP); 1: none shared. */
    private int groupSize = 1;
    /** How many connections of a loop keep queues of their own before the next ones share (#takeOwn). */
    private int ownPerLoop;
    /** Per loop, its connections counted by #takeOwn and not given back yet. */
    private final Map<Object, int[]> own = new IdentityHashMap<>();

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

    /**
     * Set once, when the transport opens.
     *
     * @param k connections per completion queue
     * @param ownPerLoop how many connections of a loop keep queues of their own before the next
     *     ones share (0: all share)
     */
    synchronized void groupSize(int k, int ownPerLoop) {
        this.groupSize = k;
        this.ownPerLoop = ownPerLoop;
    }

    /**
     * {@return {@code affinity}, counted, when a new connection of that loop that could share a
     * queue gets one of its own as one of the loop's first {@code ownPerLoop} (pair with
     * {@link #giveBackOwn}); else {@code null}: it shares one ({@link #join}), or groups do not
     * apply to it}
     */
    synchronized Object takeOwn(Object affinity, boolean mayShare) {
        if (ownPerLoop == 0 || groupSize <= 1 || affinity == null || !mayShare || !transport.isTcp()) {
            return null;
        }
        int[] n = own.computeIfAbsent(affinity, a -> new int[1]);
        if (n[0] >= ownPerLoop) {
            return null;
        }
        n[0]++;
        return affinity;
    }

    /** A connection counted by {@link #takeOwn} closed its queues (or never opened them). */
    synchronized void giveBackOwn(Object affinity) {
        int[] n = own.get(affinity);
        if (n != null && --n[0] == 0) {
            own.remove(affinity); // no entry that would keep the loop reachable for nothing
        }
    }

    /** {@return connections of {@code affinity}'s loop counted by #takeOwn now (tests)} */
    synchronized int ownQueues(Object affinity) {
        int[] n = own.get(affinity);
        return n == null ? 0 : n[0];
    }

    /** {@return connections per completion queue; 1 when none share one} */
    synchronized int groupSize() {
        return groupSize;
    }

    /**
     * {@return a slot in a completion-queue group of {@code affinity}'s loop for a new endpoint,
     * counting the endpoint, or {@code null} when its connection gets a queue of its own} Groups
     * exist on tcp only, for connections of a loop whose endpoint may be bound to a CQ of the
     * transport's domain (FabricTransport#mayShareQueues: its own, and a scoped one's on the
     * libfabric measured), when the group size is above 1. A group that is full (its closed members' slots retire until its next read) leaves the
     * endpoint to the next one, or to a new one. Pair with {@link #release(CompletionGroup)}.
     *
     * @param affinity the loop, or {@code null} for a queue of its own (also a connection whose
     *     peer will not learn its tag: FabricConnection#parameters)
     * @param perMember the main-queue entries the connection needs
     */
    synchronized CompletionGroup.Member join(Object affinity, boolean mayShare, int perMember, String description) {
        if (groupSize <= 1 || affinity == null || !mayShare || !transport.isTcp()) {
            return null;
        }
        List<CompletionGroup> open = groups.computeIfAbsent(affinity, a -> new ArrayList<>());
        CompletionGroup g = null;
        for (CompletionGroup c : open) {
            if (c.perMember >= perMember && c.hasRoom()) {
                g = c;
                break;
            }
        }
        if (g == null) {
            try {
                g = new CompletionGroup(transport, affinity, groupSize, perMember);
            } catch (RuntimeException e) {
                if (open.isEmpty()) {
                    groups.remove(affinity); // no entry that would keep the loop reachable for nothing
                }
                throw e;
            }
            open.add(g);
        }
        CompletionGroup.Member m = g.join(description);
        g.endpoints++;
        return m;
    }

    /** An endpoint of {@code g} was closed (or never bound): the last one closes the group's queue. */
    synchronized void release(CompletionGroup g) {
        if (--g.endpoints > 0) {
            return;
        }
        List<CompletionGroup> open = groups.get(g.affinity);
        if (open != null) {
            open.remove(g);
            if (open.isEmpty()) {
                groups.remove(g.affinity);
            }
        }
        g.close();
    }

    /** {@return how many completion-queue groups are open (tests)} */
    synchronized int completionGroups() {
        int n = 0;
        for (List<CompletionGroup> l : groups.values()) {
            n += l.size();
        }
        return n;
    }

    /** {@return how many shared event queues are open (tests)} */
    synchronized int sharedEventQueues() {
        return eventQueues.size();
    }
}
