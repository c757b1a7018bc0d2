package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.spi.CompletionQueue;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The queues one {@link FabricConnection}'s endpoint is bound to: the event queue of its loop
 * (on tcp, shared with the loop's other connections and routed by fid: SharedEventQueue,
 * LoopQueues) or, without a loop, its own; and its own completion queue(s) or (on tcp, beyond a
 * loop's first connections by default) a slot in a completion queue its loop's connections share
 * in groups (CompletionGroup); the tag its peer asked it to send with each write with immediate.
 * Taken before the endpoint exists, bound to it, and given back
 * after its {@code fi_close} ({@code fi_endpoint(3)}: an endpoint must be closed before the
 * objects bound to it); an endpoint that fails to close keeps them all, logged once
 * ({@link #KEPT_ON_FAILED_CLOSE}).
 *
 * <p>Threading: as its connection (loop-confined once handed to its loop; built, and closed, on
 * another thread where the transport allows it).
 */
final class ConnectionQueues {

    /**
     * What a connection keeps when fi_close of its endpoint fails: everything the endpoint may
     * still be bound to. fi_close of a CQ with an endpoint bound damages it on tcp 1.17 (see
     * LoopQueues), the EQ's count must not drop while the endpoint is bound to it, the route
     * stays with the endpoint's entries, and the domain (the transport's count) stays open.
     */
    static final String KEPT_ON_FAILED_CLOSE =
            "its completion queues, its route and count in the event queue, and the domain";

    private final FabricTransport transport;
    private final String description;
    private final SharedEventQueue queue;
    /** Its own CQ, or null when it is a member of a completion-queue group. */
    private final FabricCompletionQueue cq;
    private final FabricCompletionQueue rcq;
    /** Its slot in a completion-queue group (CompletionGroup), or null when it has its own CQ. */
    private final CompletionGroup.Member member;
    /** Its loop, when LoopQueues#takeOwn counted its own CQ there, else null. */
    private final Object countedOwn;
    private final List<CompletionQueue> queues;
    /**
     * The high half of a write-with-immediate's CQ data: the tag by which the peer's shared
     * queue routes it (CompletionGroup), as its parameters asked; 0 where it asked for none.
     */
    private long sendingTag;

    /**
     * Takes the loop's event queue and a group slot or CQs of its own, giving back what it took
     * when one of them fails.
     *
     * @param home the domain the endpoint and its own CQs are opened in
     * @param owner the connection, which its own CQs name
     * @param groupable whether its peer will learn its receiving tag (its private data carries
     *     its parameters): only then may it share a queue
     */
    ConnectionQueues(FabricTransport transport, DomainHolder home, FabricConnection owner, ConnectionConfig config,
                     Object affinity, String description, boolean groupable) {
        this.transport = transport;
        this.description = description;
        SharedEventQueue e = null;
        Object counted = null;
        CompletionGroup.Member m = null;
        FabricCompletionQueue c = null;
        FabricCompletionQueue r = null;
        try {
            e = transport.loopQueues().acquire(affinity);
            // The events are shared per loop, the CQ only in groups: tcp's CQ progress walks
            // every endpoint bound to the CQ on each fi_cq_read (prov/tcp, tcpx_cq_progress), so a
            // CQ shared by a loop's connections would cost each read O(connections) where a CQ of
            // its own costs O(ready) (benchmarks/c/fabric_scale_bench.c, the scale results README).
            // Groups of K connections share one (CompletionGroup): O(K) per read. By default a
            // loop's first connections keep their own (LoopQueues#takeOwn). A peer's
            // notifications reach a member only by the tag its parameters tell the peer.
            counted = groupable ? transport.loopQueues().takeOwn(affinity, transport.mayShareQueues(home)) : null;
            if (counted == null) {
                m = transport.loopQueues().join(groupable ? affinity : null, transport.mayShareQueues(home),
                        config.completionQueueSize() + config.receiveCompletionQueueSize(), description);
            }
            if (m == null) {
                c = new FabricCompletionQueue(transport, home, owner, config.completionQueueSize(), false);
                if (config.receiveCompletionQueueSize() > 0) {
                    r = new FabricCompletionQueue(transport, home, owner, config.receiveCompletionQueueSize(), true);
                }
            }
        } catch (RuntimeException ex) {
            release(transport, e, counted, m, c, r);
            throw ex;
        }
        this.countedOwn = counted;
        this.queue = e;
        this.cq = c;
        this.rcq = r;
        this.member = m;
        this.queues = m != null ? List.of(m) : r == null ? List.of(c) : List.of(c, r);
    }

    /** Binds the endpoint to the event queue, then the CQ (or the group's), then the receive CQ. */
    void bind(MemorySegment endpoint) {
        FabricLibrary.check("fi_ep_bind(eq)", FabricLibrary.bind(endpoint, queue.eq().eq(), 0), description);
        long txFlags = FI_TRANSMIT() | FI_SELECTIVE_COMPLETION() | (rcq == null ? FI_RECV() : 0);
        FabricLibrary.check("fi_ep_bind(cq)", FabricLibrary.bind(endpoint, member != null ? member.group().cq() : cq.cq(),
                txFlags), description);
        if (rcq != null) {
            FabricLibrary.check("fi_ep_bind(rcq)", FabricLibrary.bind(endpoint, rcq.cq(), FI_RECV()), description);
        }
    }

    /**
     * The connection's set-up failed after these were taken: the endpoint, if one was opened,
     * is closed first, then the CQs, the group slot and the event queue are given back.
     *
     * @param endpoint the endpoint, or {@code NULL} when none was opened
     * @return whether they were given back: not when the endpoint failed to close (they stay with it)
     */
    boolean releaseAfterFailedSetup(MemorySegment endpoint) {
        boolean unbound = endpoint.equals(MemorySegment.NULL)
                || queue.closeEndpoint(endpoint, description, KEPT_ON_FAILED_CLOSE);
        if (unbound) {
            release(transport, queue, countedOwn, member, cq, rcq);
        }
        return unbound;
    }

    /** fi_endpoint(3)'s order, what was taken given back last to first. */
    private static void release(FabricTransport transport, SharedEventQueue e, Object counted,
                                CompletionGroup.Member m, FabricCompletionQueue c, FabricCompletionQueue r) {
        if (r != null) {
            r.close();
        }
        if (c != null) {
            c.close();
        }
        if (counted != null) {
            transport.loopQueues().giveBackOwn(counted);
        }
        if (m != null) {
            m.leave();
            transport.loopQueues().release(m.group());
        }
        if (e != null) {
            transport.loopQueues().release(e);
        }
    }

    /**
     * Closes the endpoint, which also unroutes it (SharedEventQueue).
     *
     * @return whether the endpoint closed: otherwise everything stays with it ({@link #KEPT_ON_FAILED_CLOSE})
     */
    boolean closeEndpoint(MemorySegment ep) {
        return queue.closeEndpoint(ep, description, KEPT_ON_FAILED_CLOSE);
    }

    /**
     * After the endpoint closed: closes its CQs or leaves its group, then gives back the event
     * queue.
     */
    void giveBack() {
        if (member != null) {
            member.leave(); // its slot retires until the group's next read to empty
            transport.loopQueues().release(member.group());
        } else {
            cq.close();
            if (rcq != null) {
                rcq.close();
            }
            if (countedOwn != null) {
                transport.loopQueues().giveBackOwn(countedOwn);
            }
        }
        transport.loopQueues().release(queue);
    }

    /** {@return the event queue its events come through} */
    SharedEventQueue eventQueue() {
        return queue;
    }

    /** {@return its completion queues, as the connection hands them to its loop} */
    List<CompletionQueue> completionQueues() {
        return queues;
    }

    /** {@return its completion-queue group member, or null} */
    CompletionGroup.Member member() {
        return member;
    }

    /** {@return its slot in its group's context bits, or 0 (FabricPoster)} */
    long contextBits() {
        return member == null ? 0 : member.contextBits;
    }

    /** A post or a shutdown ran the provider's progress: its CQs ask fi_trywait again (TrywaitAnswer). */
    void touched() {
        if (member != null) {
            member.group().touched();
            return;
        }
        cq.touched();
        if (rcq != null) {
            rcq.touched();
        }
    }

    /** {@return the tag its peer is to put in notifications to it: its group member's, or 0} */
    int receivingTag() {
        return member == null ? 0 : member.tag;
    }

    /** Its peer's parameters asked for {@code tag} (0: none) in the high half of each write with immediate. */
    void peerTag(int tag) {
        sendingTag = Integer.toUnsignedLong(tag) << 32;
    }

    /** {@return the high half of a write-with-immediate's CQ data: the peer's tag, or 0} */
    long sendingTag() {
        return sendingTag;
    }
}
