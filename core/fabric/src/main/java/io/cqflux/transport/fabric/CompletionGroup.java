package io.cqflux.transport.fabric;

import io.cqflux.core.Completion;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.SharedSource;
import io.cqflux.transport.fabric.ffm.fi_cq_data_entry;
import io.cqflux.transport.fabric.ffm.fi_ops_cm;
import io.cqflux.transport.fabric.ffm.fid_ep;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One completion queue bound to up to {@link LoopQueues#groupSize()} endpoints of one event loop
 * (TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP), and the routing of its entries to their
 * connections' {@link Member}s. Opened and closed by {@link LoopQueues}, which counts its
 * endpoints, like the loop's {@link SharedEventQueue}.
 *
 * <p>Why: on tcp (libfabric 1.17) a completion queue costs 3 descriptors for its wait object (an
 * epoll fd and a signal socketpair) and about 452 KiB of transfer entries, which belong to the
 * queue and are allocated by the first operation through any endpoint bound to it
 * ({@code core/fabric/src/test/c/cq_pool_probe.c}). Sharing it among K connections divides both
 * by K; the price is that every {@code fi_cq_read} progresses every endpoint bound to the queue
 * ({@code tcpx_cq_progress} walks the queue's endpoint list), O(K) per read.
 *
 * <p>Routing. A {@code fi_cq_data_entry} names no endpoint ({@code fi_cq(3)}), so every post of
 * a member carries the member's slot in the context bits that belong to the transport
 * ({@link Connection#TRANSPORT_CONTEXT_SHIFT}); {@code fi_cq_readerr} gives the failed
 * operation's {@code op_context} too, the unsignaled half of a durable write included. The slot
 * is cleared before the member's sink sees the context. The one entry without a context is
 * tcp's target entry for a peer's write with CQ data ({@code FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA},
 * {@code op_context} NULL; it consumes no posted receive): for it the sending fabric transport
 * puts a tag into the high 32 bits of the 64-bit CQ data, whose low 32 bits are the immediate
 * (tcp's {@code cq_data_size} is 8, and the provider carries all 64 bits), when its own
 * transport has the groups on (without them the wire is unchanged): its own TCP port and its
 * peer's, which on the receiving side are the endpoint's peer port and its own
 * ({@code fi_getname(3)}, {@code fi_getpeer(3)}). Two members of one group with the same pair
 * would make the tag ambiguous. An accepted end knows its tag from the connection request,
 * before its endpoint exists, and joins only a group where no one holds it, so clients on
 * different hosts with one source port land in different groups. A client cannot choose: Linux
 * may reuse one local port for connections to different destinations, so two connections of one
 * client to servers listening on one port can have one tag; there an ambiguous tag's entries are
 * dropped and logged, never guessed, and so are those of a tag that a member takes while a left
 * member's tag retires (below), which cannot be told from the left one's. A peer that sends no
 * tag (without the option, or another implementation), or one that sees other ports than this
 * side (a NAT, port mapping or a TCP proxy between them), gets its notifications dropped
 * likewise: each tag is logged at WARNING once per group (for the first {@link #MAX_WARNED}
 * tags a group warns about, at DEBUG after that), and FabricTransport#droppedNotifications
 * counts them. A left member's tag retires with its slot (below): its late notifications reach
 * no one, and are not counted while no live member holds the tag. The tag is not a
 * secret: a peer that forges one can hand notifications to a neighbour in the group, enough to
 * overflow its backlog, which is why docs/security.md keeps groups for peers of one trust domain.
 *
 * <p>Late entries. A closed member's slot is not reused until a read of the queue to empty ran
 * after the member's endpoint was closed: {@code fi_close} of the endpoint takes it off the
 * queue's endpoint list, so that read has taken every entry the endpoint left. Until then its
 * entries find no member and are dropped; a new member never gets them. The read must not wait
 * for traffic: {@code fi_close} of an idle endpoint signals nothing on the queue's fd, so a group
 * whose other members are idle would keep the slot retiring, and every new connection of the
 * loop would open a new group. So {@link #leave} asks for the read itself: {@link #prepareToSleep}
 * answers no while a slot retires (the loop then dispatches), the loop's touch listener is told,
 * which wakes a loop that sleeps on a standing {@code fi_trywait} answer, and so is a remaining
 * neighbour's, which reaches a spinning loop (it reads only readable sources).
 *
 * <p>Threading: {@link #dispatch()} and the members' {@link Member#poll} run on the loop thread;
 * {@link #join} and {@link #leave} may come from another thread (connects, accepts and closes
 * off the loop, FabricTransport#connectsOffLoop). A read with its routing and a join or leave
 * are one step apart (one lock, uncontended but for those).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class CompletionGroup implements SharedSource {

    private static final System.Logger LOG = System.getLogger(CompletionGroup.class.getName());

    /** The most members a group may have: one per value of the transport's context bits. */
    static final int MAX_MEMBERS = 1 << Connection.TRANSPORT_CONTEXT_BITS;
    /** Entries read per {@code fi_cq_read} of a dispatch. */
    static final int BATCH = 64;
    /** Batches one dispatch reads at most; the rest waits for the next (the queue says not empty). */
    static final int MAX_BATCHES = 16;

    final Object affinity;
    /** Members it holds at most. */
    final int capacity;
    /** Main-queue entries each member was sized for. */
    final int perMember;
    private final FabricCompletionQueue cq;
    private final Arena arena = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after fi_close
    private final MemorySegment scratch;
    private final Object readLock = new Object();
    /** By slot (guarded by readLock). */
    private final Member[] members;
    /** Free slots, the next on top (guarded by readLock). */
    private final int[] free;
    private int freeTop;
    /** Slots of closed members whose entries may still be queued (guarded by readLock). */
    private final int[] retiring;
    private int retiringCount;
    /**
     * Receiving tags of the members (guarded by readLock): the member, {@link #ambiguous} where
     * two hold one, {@link #tombstone} where a holder left and its entries may still be queued.
     */
    private final Map<Integer, Member> tags = new HashMap<>();
    /** Tags of left members, settled by the next read to empty (guarded by readLock). */
    private final java.util.Set<Integer> retiringTags = new java.util.HashSet<>();
    /** Members whose tag is not known yet (guarded by readLock). */
    private int untagged;
    /** What was logged at WARNING once: a tag, or {@link #NO_CONTEXT_ERROR} (guarded by readLock). */
    private final java.util.Set<Long> warned = new java.util.HashSet<>();
    private final FabricTransport transport;
    private final AtomicReference<Object> loop = new AtomicReference<>();
    /** A slot retires: the next sleep question answers no, so that a dispatch frees it (class comment). */
    private volatile boolean readWanted;
    /** The loop's touch listener for the group ({@link #watchTouches}), or {@code null}. */
    private volatile Runnable loopTouched;
    private final CompletionSink router = this::route;
    /** Whether the last dispatch read the queue to empty (guarded by readLock). */
    private boolean lastReadEmptied = true;
    /** Entries that found no member (tests). */
    private long dropped;
    private boolean closed;
    /** Endpoints bound to it, counted by its {@link LoopQueues} (guarded by that). */
    int endpoints;

    /** The tag's value where two members hold one: its entries are dropped, never guessed. */
    private final Member ambiguous = new Member(0, "a tag two members hold");
    /** The tag's value where its holder left, until the next read to empty (class comment). */
    private final Member tombstone = new Member(0, "a closed member's tag");
    /** The key of {@link #warned} for an error entry without a context. */
    private static final long NO_CONTEXT_ERROR = -1;
    /** How many distinct tags are warned about at most; the rest go to DEBUG. */
    private static final int MAX_WARNED = 1024;

    /** The largest queue a group opens: past it a group takes fewer members than asked. */
    static final int MAX_QUEUE_ENTRIES = 1 << 20;

    /**
     * @param asked the members asked for; the group takes fewer when their queue entries
     *     would pass {@link #MAX_QUEUE_ENTRIES}, so that the members' credits never overrun it
     * @param perMember the queue entries one member needs (its CQ sizes: its credits bound them)
     */
    CompletionGroup(FabricTransport transport, Object affinity, int asked, int perMember) {
        this.transport = transport;
        this.affinity = affinity;
        int capacity = (int) Math.max(1, Math.min(asked, MAX_QUEUE_ENTRIES / Math.max(1, perMember)));
        this.capacity = capacity;
        this.perMember = perMember;
        long size = (long) capacity * perMember;
        try {
            this.scratch = arena.allocate((long) BATCH * fi_cq_data_entry.sizeof(), 8);
            this.cq = new FabricCompletionQueue(transport, this, (int) size, false);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.members = new Member[capacity];
        this.free = new int[capacity];
        for (int i = capacity - 1; i >= 0; i--) {
            free[freeTop++] = i;
        }
        this.retiring = new int[capacity];
    }

    /** {@return the native queue} */
    MemorySegment cq() {
        return cq.cq();
    }

    /** {@return whether a new member fits now (a retiring slot does not)} */
    boolean hasRoom() {
        return hasRoomFor(0);
    }

    /**
     * {@return whether a new member with receiving tag {@code tag} fits now: a free slot, and no
     * member (nor a left one whose entries may still be queued) holds the tag}
     *
     * @param tag the member's receiving tag, or 0 when it is not known before its endpoint
     */
    boolean hasRoomFor(int tag) {
        synchronized (readLock) {
            return freeTop > 0 && (tag == 0 || !tags.containsKey(tag));
        }
    }

    /**
     * Takes a slot for a new member, before its endpoint is bound to the queue.
     *
     * @param description its connection's, for logs
     * @param tag its receiving tag when known before its endpoint (an accepted connection: the
     *     client's port and the listening port), registered at once; 0 when it is not
     * @return the member
     */
    Member join(String description, int tag) {
        synchronized (readLock) {
            if (freeTop == 0) {
                throw new IllegalStateException(this + " has no free slot for " + description);
            }
            Member m = new Member(free[--freeTop], description);
            members[m.slot] = m;
            if (tag != 0) {
                m.heldAtJoin = true;
                holdTag(m, tag);
            } else {
                untagged++;
            }
            return m;
        }
    }

    /**
     * The member's endpoint is closed (or was never bound): its slot retires until the next read
     * to empty, which this asks the loop for (class comment). Any thread.
     */
    void leave(Member m) {
        Runnable neighbour = null;
        synchronized (readLock) {
            if (members[m.slot] != m) {
                return;
            }
            members[m.slot] = null;
            if (m.tag == 0) {
                if (!m.portless) {
                    untagged--;
                }
            } else {
                // Like its slot, its tag retires until a read to empty: a notification of its
                // peer may still be queued, and must reach no one (class comment).
                Member held = tags.get(m.tag);
                if (held == m || held == ambiguous) {
                    tags.put(m.tag, tombstone);
                }
                retiringTags.add(m.tag);
            }
            retiring[retiringCount++] = m.slot;
            readWanted = true;
            for (Member x : members) {
                if (x != null && x.onTouched != null) {
                    neighbour = x.onTouched;
                    break;
                }
            }
        }
        // Both callbacks hand over to the loop from any thread. The group's listener wakes a
        // loop that sleeps on a standing fi_trywait answer (prepareToSleep then says no); a
        // spinning loop asks no source whether it may sleep and reads only readable ones, so a
        // neighbour's touch, which has the loop run the group's dispatch and that neighbour's
        // (empty) drain, is what reaches it. With no member left the group closes (LoopQueues);
        // with the rest joined but not registered with the loop yet a spinning loop is not
        // reached: the slot retires until the group's next read, which a registered member's
        // entry brings.
        Runnable t = loopTouched;
        if (t != null) {
            t.run();
        }
        if (neighbour != null) {
            neighbour.run();
        }
    }

    /** A member takes tag {@code t} (under the read lock). */
    private void holdTag(Member m, int t) {
        m.tag = t;
        Member held = tags.get(t);
        if (held == null) {
            tags.put(t, m);
        } else if (held != tombstone) {
            tags.put(t, ambiguous);
            warnAmbiguous(t, m);
        } else {
            // A left holder's tombstone stays until the read to empty (which the leave asked for)
            // settles the tag; until then a notification for this live member cannot be told from
            // the left one's late notifications and is dropped, which route counts and warns of
            // when it happens. Usually nothing is lost: only noted here, and the once-per-tag
            // warning is left for a real loss.
            LOG.log(System.Logger.Level.DEBUG, "{0} takes tag 0x{1} while a left member''s tombstone stands:"
                    + " its notifications wait for the group''s next read to empty", m, Integer.toHexString(t));
        }
    }

    /**
     * The read to empty has taken every entry of the left members: their tags go to the members
     * that still hold them, one or (ambiguous) several, or away (under the read lock).
     */
    private void settleTags() {
        for (int t : retiringTags) {
            Member only = null;
            int holders = 0;
            for (Member x : members) {
                if (x != null && x.tag == t) {
                    only = x;
                    holders++;
                }
            }
            if (holders == 0) {
                tags.remove(t);
            } else if (holders == 1) {
                tags.put(t, only);
            } else {
                if (tags.get(t) != ambiguous) {
                    warnAmbiguous(t, only);
                }
                tags.put(t, ambiguous);
            }
        }
        retiringTags.clear();
    }

    private void warnAmbiguous(int t, Member m) {
        LOG.log(warnOnce(Integer.toUnsignedLong(t)), "{0} and another connection of {1} have the same ports"
                + " (tag 0x{2}): a peer''s write-with-immediate to either cannot be routed and is dropped", m, this,
                Integer.toHexString(t));
    }

    /** {@return whether tag {@code t} was logged at WARNING (tests)} */
    boolean warnedAbout(int t) {
        synchronized (readLock) {
            return warned.contains(Integer.toUnsignedLong(t));
        }
    }

    /** {@return WARNING the first time for {@code key} (a tag, or {@link #NO_CONTEXT_ERROR}), else DEBUG} */
    private System.Logger.Level warnOnce(long key) {
        return warned.size() < MAX_WARNED && warned.add(key) ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
    }

    /**
     * The member's endpoint, bound to the queue: its ports make its receiving tag.
     *
     * @param ep the endpoint, or {@code null} right before its fi_close (no read may ask it then)
     */
    void endpoint(Member m, MemorySegment ep) {
        synchronized (readLock) {
            m.ep = ep;
        }
    }

    /** {@return the receiving tag of a peer's port and one's own: the peer's in the high 16 bits} */
    static int receivingTag(int peerPort, int ownPort) {
        return peerPort <= 0 || ownPort <= 0 ? 0 : (peerPort << 16) | ownPort;
    }

    /**
     * Registers the member's receiving tag (its endpoint's peer port and own port) once its
     * socket knows both, so that a peer's write-with-immediate finds it. Any thread. A read that
     * finds an entry of no known tag asks the untagged members again (a client's peer port may be
     * unknown until its connect completes).
     */
    void tag(Member m) {
        synchronized (readLock) {
            if (m.tag == 0) {
                tagLocked(m);
            } else {
                confirmTag(m);
            }
        }
    }

    /**
     * The member's connect ended (established, refused, unreachable or closed): its socket has
     * its ports now or never. A member still without ports is asked no more, so that no read
     * pays for its {@code fi_getname}/{@code fi_getpeer} per notification; no peer can send it
     * one. Any thread.
     */
    void connectEnded(Member m) {
        synchronized (readLock) {
            tagLocked(m);
            if (members[m.slot] == m && m.tag == 0 && !m.portless) {
                m.portless = true;
                untagged--;
            }
        }
    }

    /** {@return members a read still asks for their ports (tests)} */
    int untagged() {
        synchronized (readLock) {
            return untagged;
        }
    }

    /**
     * A tag taken at {@link #join} from the connection request is checked once against the
     * endpoint's ports, which are what the peer puts in its notifications; where they differ the
     * ports win (under the read lock).
     */
    private void confirmTag(Member m) {
        if (members[m.slot] != m || m.ep == null || m.tagConfirmed) {
            return;
        }
        int[] p = ports(m.ep);
        if (p == null) {
            return;
        }
        m.tagConfirmed = true;
        int t = receivingTag(p[1], p[0]);
        if (t == m.tag) {
            return;
        }
        LOG.log(System.Logger.Level.DEBUG, "{0}: tag 0x{1} from its request, 0x{2} from its socket", m,
                Integer.toHexString(m.tag), Integer.toHexString(t));
        int old = m.tag;
        if (tags.get(old) == m) {
            tags.remove(old);
        } else {
            retiringTags.add(old); // ambiguous or retiring: the next read to empty settles it
        }
        holdTag(m, t);
    }

    private void tagLocked(Member m) {
        if (members[m.slot] != m || m.tag != 0 || m.portless || m.ep == null) {
            return;
        }
        int[] p = ports(m.ep);
        if (p == null) {
            return;
        }
        // A client's tag: its peer may accept another client with the same pair (Linux reuses a
        // local port for connections to different destinations), which no choice of group here
        // can avoid: holdTag marks it ambiguous, and its notifications are dropped and logged.
        untagged--;
        m.tagConfirmed = true; // taken from the ports themselves
        holdTag(m, receivingTag(p[1], p[0]));
    }

    /**
     * {@return the tag a sender puts in the high 32 bits of its write-with-immediate's CQ data:
     * its own port, then its peer's; 0 when the endpoint cannot tell}
     */
    static long sendingTag(MemorySegment ep) {
        int[] p = ports(ep);
        return p == null ? 0 : Integer.toUnsignedLong((p[0] << 16) | p[1]) << 32;
    }

    /** {@return the endpoint's own port and its peer's ({@code fi_getname}, {@code fi_getpeer}), or null} */
    private static int[] ports(MemorySegment ep) {
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment addr = tmp.allocate(128, 8);
            MemorySegment len = tmp.allocate(ValueLayout.JAVA_LONG);
            MemorySegment cm = fid_ep.cm(ep);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            if (fi_ops_cm.getname.invoke(fi_ops_cm.getname(cm), ep, addr, len) != 0) {
                return null;
            }
            int local = port(addr);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            if (fi_ops_cm.getpeer.invoke(fi_ops_cm.getpeer(cm), ep, addr, len) != 0) {
                return null;
            }
            int peer = port(addr);
            return local <= 0 || peer <= 0 ? null : new int[] {local, peer};
        }
    }

    /** The port of a sockaddr_in or sockaddr_in6 (FabricListener#sockaddr), or -1. */
    private static int port(MemorySegment sa) {
        java.net.InetSocketAddress a = FabricListener.sockaddr(sa);
        return a == null ? -1 : a.getPort();
    }

    @Override
    public void dispatch() {
        synchronized (readLock) {
            if (closed) {
                return;
            }
            int n = BATCH;
            for (int b = 0; b < MAX_BATCHES && n == BATCH; b++) {
                n = cq.poll(scratch, BATCH, router);
            }
            lastReadEmptied = n < BATCH;
            if (n < BATCH) {
                // Read to empty after every retiring member's fi_close (they took this lock): its
                // entries are all gone, so its slot may serve a new member (class comment).
                while (retiringCount > 0) {
                    free[freeTop++] = retiring[--retiringCount];
                }
                settleTags();
                readWanted = false;
            }
        }
    }

    /** Whether the last dispatch's last read came back short: the queue was read to empty. */
    @Override
    public boolean lastReadEmptied() {
        synchronized (readLock) {
            return lastReadEmptied || closed;
        }
    }

    /** One entry of the queue, on its way to its member (under the read lock). */
    private void route(Completion c) {
        long ctx = c.context();
        if (ctx != 0) {
            int slot = (int) ((ctx & Connection.TRANSPORT_CONTEXT_MASK) >>> Connection.TRANSPORT_CONTEXT_SHIFT);
            Member m = slot < members.length ? members[slot] : null;
            if (m == null) {
                // A closed member's late entry: normal (class comment).
                dropped++;
                LOG.log(System.Logger.Level.DEBUG, "a late completion (context 0x{0}) of a closed member of {1}"
                        + " dropped", Long.toHexString(ctx), this);
                return;
            }
            m.add(c, ctx & ~Connection.TRANSPORT_CONTEXT_MASK);
            return;
        }
        if (!(c.isSuccess() && c.hasImmediate() && c instanceof FabricCompletionQueue.View v)) {
            // No context and no peer's notification: nothing names its member.
            lost();
            LOG.log(warnOnce(NO_CONTEXT_ERROR), "a completion without a context ({0}) in {1} names no member and"
                    + " is dropped", c.isSuccess() ? c.opcode() : c.status(), this);
            return;
        }
        // A peer's write with CQ data: routed by the sender's tag (class comment). Every member
        // not tagged yet is asked its ports first, so that no tag is taken as known (or unknown)
        // while a member that would hold it has not said so yet; a member whose connect ended
        // without ports can hold none and is not asked (connectEnded).
        if (untagged > 0) {
            for (Member u : members) {
                if (u != null && u.tag == 0 && !u.portless) {
                    tagLocked(u);
                }
            }
        }
        routeNotification((int) (v.data() >>> 32), c);
    }

    /** A peer's write with CQ data carrying {@code tag}, to its member or dropped (under the read lock). */
    private void routeNotification(int tag, Completion c) {
        Member held = tag == 0 ? null : tags.get(tag);
        if (held != null && held != ambiguous && held != tombstone) {
            held.add(c, 0);
            return;
        }
        boolean liveHolder = held == tombstone && holder(tag) != null;
        if (held == tombstone && !liveHolder) {
            // The late notification of a member that left: normal, like its late entries.
            dropped++;
            LOG.log(System.Logger.Level.DEBUG, "a late notification (tag 0x{0}) of a closed member of {1} dropped",
                    Integer.toHexString(tag), this);
            return;
        }
        // A tombstone over a live member's tag: the notification may be the live member's, which
        // cannot be told from the left one's, so it is lost like an ambiguous tag's.
        lost();
        String why = tag == 0
                ? "carries no tag (is " + io.cqflux.core.spi.TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP
                        + " set on the sending side too?)"
                : held == ambiguous || liveHolder
                        ? "carries tag 0x" + Integer.toHexString(tag) + ", which two members hold or held (peers"
                                + " with the same ports)"
                        : "carries tag 0x" + Integer.toHexString(tag) + ", which no member holds (a NAT, port"
                                + " mapping or TCP proxy between the peers changes the ports)";
        LOG.log(warnOnce(Integer.toUnsignedLong(tag)), "a peer''s write-with-immediate to {0} {1}: dropped ({2} so far"
                + " on this transport)", this, why, transport.droppedNotifications());
    }

    /** {@return a member that holds {@code tag} now, or null (under the read lock)} */
    private Member holder(int tag) {
        for (Member x : members) {
            if (x != null && x.tag == tag) {
                return x;
            }
        }
        return null;
    }

    /** Routes a peer's write with CQ data carrying {@code tag} as a read of the queue would (tests). */
    void routeNotificationForTest(int tag, Completion c) {
        synchronized (readLock) {
            routeNotification(tag, c);
        }
    }

    /** A notification or error entry that no member could take: counted here and on the transport. */
    private void lost() {
        dropped++;
        transport.notificationDropped();
    }

    /** {@return entries that found no member (tests)} */
    long dropped() {
        synchronized (readLock) {
            return dropped;
        }
    }

    /** {@return members now (tests)} */
    int members() {
        synchronized (readLock) {
            int n = 0;
            for (Member m : members) {
                n += m == null ? 0 : 1;
            }
            return n;
        }
    }

    @Override
    public Object claimLoop(Object l) {
        loop.compareAndSet(null, l);
        return loop.get();
    }

    @Override
    public int fd() {
        return cq.fd();
    }

    /**
     * {@code fi_trywait(3)} on the group's queue: one question for all its members; no while a
     * closed member's slot waits for a read to empty (class comment).
     */
    @Override
    public boolean prepareToSleep() {
        return !readWanted && cq.prepareToSleep();
    }

    /** The queue's trywait answer watch; the listener is also told when a slot retires ({@link #leave}). */
    @Override
    public boolean watchTouches(Runnable touched) {
        loopTouched = touched;
        return cq.watchTouches(touched);
    }

    /** {@return whether a retiring slot waits for a read of the queue to empty (tests)} */
    boolean readWanted() {
        return readWanted;
    }

    /** A member posted or shut down: the next sleep asks fi_trywait again (TrywaitAnswer). */
    void touched() {
        cq.touched();
    }

    /** {@return the group queue's fi_trywait answer (tests)} */
    TrywaitAnswer trywaitAnswer() {
        return cq.trywaitAnswer();
    }

    /** After the last endpoint's fi_close (LoopQueues counts them). */
    void close() {
        synchronized (readLock) {
            closed = true;
            readWanted = false;
            cq.close();
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "fabric completion queue group (fd " + cq.fd() + ", up to " + capacity + " connections)";
    }

    /**
     * One connection's view of the group: a {@link CompletionQueue} served by the group
     * ({@link #sharedBy()}), whose {@link #poll} hands over what the group's dispatch routed to
     * it, in queue order. Loop-confined but for its connection's close.
     */
    final class Member implements CompletionQueue {
        final int slot;
        /** The slot in the transport's context bits. */
        final long contextBits;
        private final String description;
        /** Its receiving tag, 0 until known (guarded by readLock). */
        int tag;
        /** Whether its connect ended without ports: it is asked no more (guarded by readLock). */
        boolean portless;
        /** Whether it took a tag at its join, known before its endpoint (guarded by readLock). */
        boolean heldAtJoin;
        /** Whether its tag was checked against its endpoint's ports (guarded by readLock). */
        boolean tagConfirmed;
        /** Its endpoint while open (guarded by readLock). */
        MemorySegment ep;
        /** The loop's callback for entries routed here; also run by a neighbour's leave (any thread). */
        private volatile Runnable onTouched;
        /** What the group's dispatch routed here and its poll has not handed over yet. */
        private final RoutedEntries entries = new RoutedEntries();

        Member(int slot, String description) {
            this.slot = slot;
            this.contextBits = (long) slot << Connection.TRANSPORT_CONTEXT_SHIFT;
            this.description = description;
        }

        /** {@return the group} */
        CompletionGroup group() {
            return CompletionGroup.this;
        }

        /** Copies one routed entry (dispatch, under the read lock). */
        void add(Completion c, long context) {
            entries.add(c, context);
            Runnable t = onTouched;
            if (t != null) {
                t.run(); // the loop runs its handler after the dispatch (once however many came)
            }
        }

        /** {@return entries waiting for its poll (tests)} */
        int pending() {
            return entries.size();
        }

        @Override
        public int poll(MemorySegment unusedScratch, int max, CompletionSink sink) {
            return entries.drain(max, sink);
        }

        @Override
        public void acknowledge() {
            // Nothing native: the group's dispatch read the queue.
        }

        @Override
        public int fd() {
            return cq.fd(); // never registered: the loop registers the group (sharedBy)
        }

        @Override
        public SharedSource sharedBy() {
            return CompletionGroup.this;
        }

        /** The loop's callback for entries routed here (SharedSource's member contract). */
        @Override
        public boolean watchTouches(Runnable touched) {
            onTouched = touched;
            if (touched != null && entries.size() > 0) {
                touched.run();
            }
            return true;
        }

        /**
         * Its connection's close, after the endpoint's fi_close (and only then: the slot must not
         * retire while the endpoint is bound to the queue): see {@link CompletionGroup#leave}.
         */
        void leave() {
            CompletionGroup.this.leave(this);
        }

        /**
         * Nothing: the slot belongs to its connection, whose close leaves the group after the
         * endpoint's fi_close ({@link #leave()}). An owner that closed the queue first would
         * otherwise retire the slot while the endpoint is still bound, and a read to empty
         * would hand it to a new member that then gets the old endpoint's entries.
         */
        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return description + " (slot " + slot + " of " + CompletionGroup.this + ")";
        }
    }
}
