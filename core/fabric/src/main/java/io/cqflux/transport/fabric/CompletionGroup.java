package io.cqflux.transport.fabric;

import io.cqflux.core.Completion;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.SharedSource;
import io.cqflux.transport.fabric.ffm.fi_cq_data_entry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
 * ({@code core/fabric/src/test/c/cq_pool_probe.c}). A wait object of the queue's own costs no
 * fewer: 4 descriptors with {@code FI_WAIT_NONE}, {@code FI_WAIT_POLLFD} or {@code FI_WAIT_UNSPEC}
 * (tcp refuses {@code FI_WAIT_YIELD} and {@code FI_WAIT_MUTEX_COND}); queues opened on one shared
 * wait set ({@code FI_WAIT_SET}) cost none beyond the set's 3, but the set's fd then does not say
 * which queue is ready ({@code core/fabric/src/test/c/cq_wait_fd_probe.c}; not used here). Sharing
 * the queue among K connections divides both by K; the price is that every {@code fi_cq_read}
 * progresses every endpoint bound to the queue ({@code tcpx_cq_progress} walks the queue's
 * endpoint list), O(K) per read.
 *
 * <p>Routing. A {@code fi_cq_data_entry} names no endpoint ({@code fi_cq(3)}), so every post of
 * a member carries the member's slot in the context bits that belong to the transport
 * ({@link Connection#TRANSPORT_CONTEXT_SHIFT}); {@code fi_cq_readerr} gives the failed
 * operation's {@code op_context} too, the unsignaled half of a durable write included. The slot
 * is cleared before the member's sink sees the context. The one entry without a context is
 * tcp's target entry for a peer's write with CQ data ({@code FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA},
 * {@code op_context} NULL; it consumes no posted receive): it goes to the member that holds the
 * tag its sender put in the high half of the CQ data, the tag this side drew for the member and
 * told the peer in its connection's parameters ({@link GroupRoster}, which says how tags are made
 * and held). A notification with no tag (a peer that was not told one) or a tag no member
 * holds (a forged one) is dropped, never guessed: each tag is logged at WARNING once per group
 * (for the first {@link #MAX_WARNED} tags a group warns about, at DEBUG after that), and
 * FabricTransport#droppedNotifications counts them. A left member's tag retires with its slot
 * (below): its late notifications reach no one, and are not counted. A peer learns only its own
 * connection's tag, drawn at random: to hand a notification to a neighbour in its group it must
 * guess a 32-bit value, each wrong guess counted (docs/security.md).
 *
 * <p>Late entries. A closed member's slot and tag retire until a read of the queue to empty ran
 * after the member's endpoint was closed ({@link GroupRoster}): until then its entries find no
 * member and are dropped; a new member never gets them. The read must not wait for traffic:
 * {@code fi_close} of an idle endpoint signals nothing on the queue's fd, so a group whose other
 * members are idle would keep the slot retiring, and every new connection of the loop would open
 * a new group. So {@link #leave} asks for the read itself: {@link #prepareToSleep} answers no
 * while a slot retires (the loop then dispatches), the loop's touch listener is told, which wakes
 * a loop that sleeps on a standing {@code fi_trywait} answer, and so is a remaining neighbour's,
 * which reaches a spinning loop (it reads only readable sources).
 *
 * <p>Threading: {@link #dispatch()} and the members' {@link Member#poll} run on the loop thread;
 * {@link #join} and {@link #leave} may come from another thread (connects, accepts and closes
 * off the loop, FabricTransport#connectsOffLoop). A read with its routing and a join or leave
 * are one step apart (one lock, uncontended but for those).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class CompletionGroup implements SharedSource {

    private static final System.Logger LOG = System.getLogger(CompletionGroup.class.getName());

    /**
     * Members per group where the option is unset, on tcp: 32 makes an idle connection cost its
     * socket and a 32nd of a queue's 3 fds and 452 KiB, for about 4 µs more per read of a busy
     * member beside 31 idle ones (docs/performance.md).
     */
    static final int DEFAULT_SIZE = 32;
    /**
     * Where the option is unset, on tcp: how many connections of a loop keep queues of their own
     * before the next ones share (LoopQueues#takeOwn). A member's completions take a way round
     * its group's dispatch that costs a lone connection about 1.5 µs of its 16 per 8-byte round
     * trip on this host, and each read progresses every member. A loop's first connections (a
     * client's usually its busiest; a server's the first to arrive) keep neither, and an idle
     * crowd beyond them costs about 1 + 3/32 fds and a 32nd of a queue each. At most this many
     * queues per loop (their 452 KiB each), so what the crowd saves is bounded by the crowd.
     */
    static final int DEFAULT_OWN_PER_LOOP = 16;
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
    /** Its members by slot and by tag (guarded by readLock). */
    private final GroupRoster roster;
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

    /** The key of {@link #warned} for an error entry without a context. */
    private static final long NO_CONTEXT_ERROR = -1;
    /** How many distinct tags are warned about at most; the rest go to DEBUG. */
    private static final int MAX_WARNED = 1024;

    /** The largest queue a group opens: past it a group takes fewer members than asked. */
    static final int MAX_QUEUE_ENTRIES = 1 << 20;

    /*
     * Design: why a group's queue holds every member's credits.
     *
     * The members' credits bound what is in flight, and the queue is opened with room for all of
     * it, so that no completion ever lands past the queue's ring (fi_cq(3) calls an overrun
     * fatal). On tcp (libfabric 1.17) a smaller ring would lose no entry, but costs more than it
     * saves: the entries past the ring go to the util CQ's overflow list, and once the ring's
     * entries are read every fi_cq_read returns one overflow entry, each read running the
     * provider's progress over every endpoint on the queue, so a burst costs a native read per
     * completion. That was checked on 1.17 only; a provider that reports a full queue instead
     * would fail the posting path, which does not expect it. And the saving is malloc's count,
     * not resident memory: the ring (about 48 bytes an entry, idle_ep_probe.c) is one large
     * block whose pages become resident only as completions are written (docs/performance.md).
     * What must hold: ringEntries is the members' sum, never less.
     */

    /**
     * {@return the entries a group's queue is opened with: every member's (design comment above)}
     *
     * @param capacity the members it holds
     * @param perMember the entries one member needs
     */
    static int ringEntries(int capacity, int perMember) {
        return Math.multiplyExact(capacity, perMember);
    }

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
        int size = ringEntries(capacity, perMember);
        try {
            this.scratch = arena.allocate((long) BATCH * fi_cq_data_entry.sizeof(), 8);
            this.cq = new FabricCompletionQueue(transport, this, size, false);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.roster = new GroupRoster(this, capacity);
    }

    /** {@return the native queue} */
    MemorySegment cq() {
        return cq.cq();
    }

    /** {@return whether a new member fits now (a retiring slot does not)} */
    boolean hasRoom() {
        synchronized (readLock) {
            return roster.hasRoom();
        }
    }

    /**
     * Takes a slot for a new member, before its endpoint is bound to the queue, with a receiving
     * tag of its own ({@link GroupRoster}).
     *
     * @param description its connection's, for logs
     * @return the member
     */
    Member join(String description) {
        int drawn = GroupRoster.drawTag(); // SecureRandom outside the lock a read of the queue takes
        synchronized (readLock) {
            return roster.join(description, drawn);
        }
    }

    /**
     * The member's endpoint is closed (or was never bound): its slot retires until the next read
     * to empty, which this asks the loop for (class comment). Any thread.
     */
    void leave(Member m) {
        Runnable neighbour = null;
        synchronized (readLock) {
            if (!roster.leave(m)) {
                return;
            }
            readWanted = true;
            neighbour = roster.neighbourTouch();
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
                roster.readToEmpty();
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
            Member m = roster.at(slot);
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
        // A peer's write with CQ data: routed by the tag in its high half (class comment).
        routeNotification((int) (v.data() >>> 32), c);
    }

    /** A peer's write with CQ data carrying {@code tag}, to its member or dropped (under the read lock). */
    private void routeNotification(int tag, Completion c) {
        Member held = tag == 0 ? null : roster.tagged(tag);
        if (held != null && held != roster.tombstone) {
            held.add(c, 0);
            return;
        }
        if (held == roster.tombstone) {
            // The late notification of a member that left: normal, like its late entries.
            dropped++;
            LOG.log(System.Logger.Level.DEBUG, "a late notification (tag 0x{0}) of a closed member of {1} dropped",
                    Integer.toHexString(tag), this);
            return;
        }
        lost();
        String why = tag == 0
                ? "carries no tag (its sender was not told this side's: a cqflux peer from before the tags, or"
                        + " one that did not apply them)"
                : "carries tag 0x" + Integer.toHexString(tag) + ", which no member of the group holds (forged,"
                        + " or for a connection that left before the group's last read)";
        LOG.log(warnOnce(Integer.toUnsignedLong(tag)), "a peer''s write-with-immediate to {0} {1}: dropped ({2} so far"
                + " on this transport)", this, why, transport.droppedNotifications());
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
            return roster.count();
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
        /** Its receiving tag, drawn at its join (GroupRoster), which its peer puts in its notifications. */
        final int tag;
        /** The loop's callback for entries routed here; also run by a neighbour's leave (any thread). */
        volatile Runnable onTouched;
        /** What the group's dispatch routed here and its poll has not handed over yet. */
        private final RoutedEntries entries = new RoutedEntries();

        /** @param tag its receiving tag (GroupRoster#join) */
        Member(int slot, String description, int tag) {
            this.slot = slot;
            this.contextBits = (long) slot << Connection.TRANSPORT_CONTEXT_SHIFT;
            this.description = description;
            this.tag = tag;
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
