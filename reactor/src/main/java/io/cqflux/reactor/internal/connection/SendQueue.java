package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.connection.ConnectionCore.State;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.resources.LibraryTimer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * One connection's send side: the in-flight table and the send credits, the bounded queue of
 * operations waiting for a credit and the queue of messages waiting for the peer's receive
 * credits (PeerControl), posting (an operation's parts, the connection's own control writes,
 * a receive's context), and the metrics mirrors of all of it. Loop thread, except where a
 * method says otherwise; the lifecycle it posts under is its {@link ConnectionCore}'s, read
 * through {@link ConnectionCore#state()}.
 */
final class SendQueue {
    /*
     * The metrics mirrors (inFlightOps, maxInFlight, waitingOps) are written by the loop with
     * opaque stores through these handles: a volatile store per operation and completion was a
     * full fence each time on the hot path, for gauges that need no ordering.
     */
    private static final VarHandle MIRROR_IN_FLIGHT;
    private static final VarHandle MIRROR_MAX_IN_FLIGHT;
    private static final VarHandle MIRROR_WAITING;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            MIRROR_IN_FLIGHT = l.findVarHandle(SendQueue.class, "inFlightOps", int.class);
            MIRROR_MAX_IN_FLIGHT = l.findVarHandle(SendQueue.class, "maxInFlight", int.class);
            MIRROR_WAITING = l.findVarHandle(SendQueue.class, "waitingOps", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Control writes the connection posts for itself: they take a table slot and a send credit like an operation. */
    enum Internal { GRANT, GOODBYE, PROBE }

    private final ConnectionCore core;
    private final EventLoop loop;
    private final Transport transport;
    private final Connection conn;
    private final PeerControl control;
    private final String description;
    private final InFlightTable table;
    private final int pendingLimit;
    /** Whether {@link #post} stamps {@code postedAt} with the loop's unit clock (see there). */
    private final boolean coarsePostClock;
    // Sized for an idle connection (one per connection, thousands per server); it grows on use.
    private final ArrayDeque<OpMono> waiting = new ArrayDeque<>(4);
    /** Messages waiting for a credit from the peer's receiver (PeerControl), in order. */
    private final ArrayDeque<OpMono> messages = new ArrayDeque<>(4);
    /** Staged messages held back, without a staging buffer, until the peer can take them (MessageHold). */
    private final MessageHold hold;
    /** Messages waiting for the peer's credit: a mirror the stagings read on any thread. */
    private volatile int waitingMessages;
    /**
     * Whether the peer had no receive credit for this side the last time the loop looked (its
     * credit word is native memory the loop reads while the connection is established; a
     * staging on another thread reads this mirror instead, since the word may be freed by then).
     * Starts true: the first staged message goes through the loop, which knows.
     */
    private volatile boolean creditStarved = true;
    private boolean creditPollScheduled;
    private boolean retryScheduled;
    private volatile int maxInFlight;
    /** Send credits in use by posted operations; a volatile mirror for metrics. */
    private volatile int inFlightOps;
    /** Operations waiting for a credit (either queue, and the hold); a volatile mirror for metrics. */
    private volatile int waitingOps;
    /** Operations refused for the pending limit; written on the loop only, read anywhere. */
    private volatile long rejections;

    SendQueue(ConnectionCore core, InFlightTable table, PeerControl control, int pendingLimit,
              boolean coarsePostClock) {
        this.core = core;
        this.loop = core.loop;
        this.transport = core.transport;
        this.conn = core.conn;
        this.description = core.description;
        this.table = table;
        this.control = control;
        this.pendingLimit = pendingLimit;
        this.coarsePostClock = coarsePostClock;
        this.hold = new MessageHold(core, this);
    }

    /** Any thread: hands an operation to the loop. */
    void enqueue(OpMono op) {
        if (loop.inEventLoop()) {
            submit(op);
            return;
        }
        // A hand-over the loop refuses or drops in a forced shutdown still runs, after the loop
        // ended: the connection is ENDED by then (the loop's hooks end it), so the op fails.
        // The operation is its own task (OpMono.run): no capturing lambda per hand-over.
        loop.executeLaterOrAfterTermination(op);
    }

    /** Loop thread: queues or posts an operation handed over by {@link #enqueue}. */
    void submit(OpMono op) {
        hold.reached(op);
        enqueueOrPost(op);
        noteWaiting();
    }

    void noteWaiting() {
        mirrorWaiting();
        hold.releaseIfNoMessageWaits();
    }

    void mirrorWaiting() {
        int w = waitingOperations();
        if (w != (int) MIRROR_WAITING.getOpaque(this)) {
            MIRROR_WAITING.setOpaque(this, w); // a metrics mirror, as in noteInFlight
        }
        int m = messages.size();
        if (m != waitingMessages) {
            waitingMessages = m;
        }
        boolean starved = core.state() != State.ESTABLISHED || !control.mayPost();
        if (starved != creditStarved) {
            creditStarved = starved;
        }
    }

    /**
     * Any thread: whether a staged message waits in the hold, without a buffer, before it leases
     * one: while messages wait, while others are held (they go in order), and while the peer had
     * no credit when the loop last looked. Mirrors, read as a hint: a message that passes on a
     * stale reading waits in {@link #messages} holding its buffer, and one held needlessly is
     * released at once (MessageHold); what is exact is the send queue's own count, on the loop.
     */
    boolean holdsStagedMessages() {
        return control.enabled() && (waitingMessages > 0 || hold.anyHeld() || creditStarved);
    }

    /**
     * Loop thread: {@return whether a message let out of the hold now would get the send queue's
     * verdict at once}: the peer has a receive credit for it, or said it never will (MessageHold
     * fails it then). When not, and only then, it arms the re-read of the credit word in 1 ms,
     * which comes back through {@link #noteWaiting}: so call it last in a condition.
     */
    boolean messageMayGoElsePoll() {
        if (core.state() != State.ESTABLISHED) {
            return false; // posts nothing now: the end's verdict first
        }
        if (control.mayPost() || control.peerNeverReceives()) {
            return true;
        }
        scheduleCreditPoll();
        return false;
    }

    /** {@return the hold of staged messages} */
    MessageHold hold() {
        return hold;
    }

    /** Loop thread: {@return whether no message waits for the peer's credit} */
    boolean noMessageWaits() {
        return messages.isEmpty();
    }

    /**
     * Loop thread: {@return the operations that wait, the count pendingLimit bounds: for a send
     * credit, for the peer's receive credit, and in the hold}
     */
    int waitingOperations() {
        return waiting.size() + messages.size() + hold.waiting();
    }

    /** {@return the bound on waiting operations} */
    int pendingLimit() {
        return pendingLimit;
    }

    /** Loop thread: an operation (a held staging) was refused for pendingLimit. */
    void countRefusal() {
        rejections++; // NOSONAR: written by the loop thread only
    }

    private void enqueueOrPost(OpMono op) {
        if (core.closeRequested()) {
            // This side asked to close, and the close's task waits behind this operation in the
            // loop's queue: the close takes effect now, and this operation (handed over before
            // the request, or it would have been refused) fails with it rather than posting.
            core.closeRequestedNow();
        }
        State s = core.state();
        if (s == State.CONNECTING) {
            op.failUnposted(new IllegalStateException("connection " + description + " is not established"));
            return;
        }
        if (s.compareTo(State.ENDED) >= 0) {
            // The end, as the queued operations get it: one cancelled on its way here (its
            // hand-over still in the loop's queue when the close came) does not drop it.
            op.failUnpostedOnConnectionEnd(core.terminal());
            return;
        }
        // ESTABLISHED or ENDING: ENDING posts nothing, its operations wait for the end's verdict.
        // pendingLimit bounds the operations that wait: one that can go out at once is posted
        // whatever it is (with pendingLimit 0, nothing waits and everything else is refused).
        boolean message = op.kind.isMessage(transport) && control.enabled();
        if (!message && s == State.ESTABLISHED && waiting.isEmpty() && table.tryTakeCredits(op.kind.credits)) {
            post(op);
        } else if (message && messages.isEmpty()) {
            // A message waits for the peer's credit in its own queue, so that it never holds up
            // the operations behind it. Nothing ahead of it: it may go out at once, and it waits,
            // within the bound, only if it stays.
            messages.add(op);
            pumpMessages();
            if (messages.peekLast() == op && waitingOperations() > pendingLimit) {
                messages.pollLast();
                refuse(op);
            }
        } else if (waitingOperations() >= pendingLimit) {
            refuse(op);
        } else if (message) {
            messages.add(op);
            pumpMessages();
        } else {
            waiting.add(op);
        }
    }

    /** Refuses an operation that would wait beyond pendingLimit. Loop thread. */
    private void refuse(OpMono op) {
        countRefusal();
        op.failUnposted(queueFull());
    }

    /** {@return the error of an operation refused for pendingLimit} */
    QueueFullException queueFull() {
        return new QueueFullException("connection " + description + ": " + pendingLimit
                + " operations already wait for a send-queue credit (pendingLimit " + pendingLimit
                + ", send queue " + table.creditLimit()
                + "); apply backpressure or raise Cqflux.Builder.pendingLimit", pendingLimit);
    }

    /**
     * Posts waiting messages while the peer's receiver has granted credits and a send credit is
     * free; a starved sender re-reads its credit word in 1 ms (PeerControl). Loop thread.
     */
    private void pumpMessages() {
        while (core.state() == State.ESTABLISHED) {
            OpMono op = messages.peek();
            if (op == null) {
                return;
            }
            if (op.cancelled) {
                messages.poll();
                op.discard();
                op.releaseRegions();
                continue;
            }
            if (core.violations.checkControlWords()) {
                return; // ended: the messages fail with the end
            }
            if (!control.mayPost()) {
                if (control.peerNeverReceives()) {
                    failMessagesToAPeerThatNeverReceives();
                    return;
                }
                scheduleCreditPoll();
                return;
            }
            if (!table.tryTakeCredits(op.kind.credits)) {
                return; // a returning credit pumps again
            }
            messages.poll();
            if (!post(op)) {
                // back at the head of `waiting` (post() did that): take it back in order
                waiting.remove(op);
                messages.addFirst(op);
                return;
            }
            // Counted only when it really went out: post() discards an op cancelled (from another
            // thread) since the check above, and fails one whose post threw; neither took a
            // receive of the peer, and counting it would lose that credit for good.
            if (op.stage() != OpMono.NEW) {
                control.consume();
            }
        }
    }

    /** The peer said it can never post a receive: every message waiting for its credit fails now. Loop thread. */
    private void failMessagesToAPeerThatNeverReceives() {
        OpMono op;
        while ((op = messages.poll()) != null) {
            if (op.cancelled) {
                op.discard();
                op.releaseRegions();
            } else {
                op.failUnposted(neverReceived(op.kind.opcode));
            }
        }
    }

    /** {@return the error of a message to a peer that posts no receives} */
    IllegalStateException neverReceived(io.cqflux.core.Opcode opcode) {
        return new IllegalStateException("the peer of connection " + description + " posts no receives (its"
                + " receiveQueueSize is 0): a " + opcode + " to it could never be received");
    }

    /** Loop thread: {@return whether the peer said it can never post a receive} */
    boolean peerNeverReceives() {
        return control.peerNeverReceives();
    }

    private void scheduleCreditPoll() {
        if (creditPollScheduled) {
            return;
        }
        creditPollScheduled = true;
        LibraryTimer.schedule(() -> core.runOnLoop(() -> {
            creditPollScheduled = false;
            pumpMessages();
            noteWaiting();
        }), 1, TimeUnit.MILLISECONDS);
    }

    /** Loop thread: the receiver posted receives; tell a cqflux peer (its credits). */
    void receivesPosted(int n) {
        control.receivesPosted(n);
        grant();
    }

    void grant() {
        if (core.state() != State.ESTABLISHED || !control.grantPending()) {
            return;
        }
        try {
            if (postControl(Internal.GRANT, ctx -> control.postGrant(conn, ctx)) == Posted.REFUSED) {
                scheduleRetry();
            }
        } catch (RuntimeException e) {
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting a receive credit failed", e), ConnectionEvent.LOST);
        }
    }

    /**
     * Posts an operation whose credits are taken. Loop thread.
     *
     * @return false when the transport's queue was momentarily full (the op is back at the head
     *     of the waiting queue with its credits returned, and a retry is scheduled)
     */
    private boolean post(OpMono op) {
        assert loop.inEventLoop();
        int k = op.kind.credits;
        if (op.cancelled) {
            // Cancelled while waiting: never posted, so nothing of it is in flight.
            table.returnCredits(k);
            op.discard();
            op.releaseRegions();
            return true;
        }
        long ctx = table.acquire(op);
        // With an operationTimeout of a second or more (the default is 30 s), the loop's unit
        // clock rather than a clock read per operation, which is not free on the hot path. It is
        // behind by the current unit's time so far, which makes an operation look that much
        // older: only a loop held by one unit of work for about the timeout could end the
        // connection LOST early, and such a loop holds back every completion anyway. A shorter
        // timeout reads the clock.
        op.posting(ctx, coarsePostClock ? loop.unitClock() : System.nanoTime());
        core.operationPosted();
        noteInFlight();
        boolean ok;
        try {
            ok = op.postFirst(conn, ctx);
        } catch (RuntimeException e) {
            table.release(ctx);
            table.returnCredits(k);
            noteInFlight();
            op.failUnposted(e); // the post threw, so nothing was posted
            return true;
        }
        if (!ok) {
            table.release(ctx);
            table.returnCredits(k);
            noteInFlight();
            op.notPosted();
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        if (op.kind.twoPart()) {
            op.firstPartPosted();
            return postSecond(op);
        }
        op.posted();
        return true;
    }

    private boolean postSecond(OpMono op) {
        boolean ok;
        try {
            ok = op.postSecond(conn, op.context());
        } catch (RuntimeException e) {
            // The unsignaled first part is in flight and nothing signaled will ever retire it:
            // its slot and credits could only come back when the connection closes, so end it
            // now (the subscriber, and everything else pending, learns why).
            op.posted();
            core.end(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting the second half of a " + op.kind + " failed; the connection is closed", e),
                    ConnectionEvent.LOST);
            return true;
        }
        if (!ok) {
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        op.posted();
        return true;
    }

    void noteInFlight() {
        int inUse = table.creditsInUse();
        // Metrics mirrors, read by other threads: opaque stores (no fence on the per-operation
        // path; a reader sees the value soon, which is all a gauge needs), and only on change.
        if (inUse != (int) MIRROR_IN_FLIGHT.getOpaque(this)) {
            MIRROR_IN_FLIGHT.setOpaque(this, inUse);
        }
        if (inUse > (int) MIRROR_MAX_IN_FLIGHT.getOpaque(this)) {
            MIRROR_MAX_IN_FLIGHT.setOpaque(this, inUse);
        }
    }

    void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        retryScheduled = true;
        try {
            loop.execute(() -> {
                retryScheduled = false;
                drainWaiting();
            });
        } catch (RuntimeException e) {
            retryScheduled = false;
        }
    }

    void drainWaiting() {
        drainOperations();
        grant();
        pumpMessages();
        noteWaiting();
    }

    private void drainOperations() {
        while (core.state() == State.ESTABLISHED) {
            OpMono op = waiting.peek();
            if (op == null) {
                return;
            }
            if (op.stage() == OpMono.SECOND_PENDING) {
                waiting.poll();
                if (!postSecond(op)) {
                    return;
                }
                continue;
            }
            if (!table.tryTakeCredits(op.kind.credits)) {
                return;
            }
            waiting.poll();
            if (!post(op)) {
                return;
            }
        }
    }

    /** What became of a control write. */
    enum Posted { YES, NO_CREDIT, REFUSED }

    /**
     * Posts one of the connection's own control writes under a table slot and a send credit,
     * giving both back when it is not posted (refused, or the post threw: rethrown).
     */
    Posted postControl(Internal kind, java.util.function.LongPredicate post) {
        if (!table.tryTakeCredits(1)) {
            return Posted.NO_CREDIT;
        }
        long ctx = table.acquire(kind);
        boolean ok = false;
        try {
            ok = post.test(ctx);
        } finally {
            if (!ok) {
                table.release(ctx);
                table.returnCredits(1);
            }
            noteInFlight();
        }
        return ok ? Posted.YES : Posted.REFUSED;
    }

    /** Loop thread: a context for a receive buffer (see {@link InFlightTable}). */
    long acquireReceiveContext(ReceiveBuffer b) {
        long ctx = table.acquire(b);
        noteInFlight();
        return ctx;
    }

    /** Loop thread: gives back a receive context whose post failed. */
    void releaseReceiveContext(long ctx) {
        table.release(ctx);
        noteInFlight();
    }

    // ---------------------------------------------------------------- what the end and the deadlines ask

    /** {@return whether an operation still waits in either queue} Loop thread, or the forced close's. */
    boolean hasQueued() {
        return !waiting.isEmpty() || !messages.isEmpty();
    }

    /** {@return the next queued operation, operations before messages, or null} Loop thread, or the forced close's. */
    OpMono pollQueued() {
        OpMono op = waiting.poll();
        return op != null ? op : messages.poll();
    }

    /**
     * Visits every entry of the in-flight table: an operation, a receive buffer or a control write.
     *
     * @param visitor called with each context and its owner
     */
    void forEachInFlight(InFlightTable.Visitor visitor) {
        table.forEach(visitor);
    }

    /** Frees one in-flight context, its credits not counted (the native close is done). */
    void forget(long ctx) {
        table.release(ctx);
    }

    /**
     * {@return the longest time an operation of the table has been posted, -1 when no operation is
     * in flight (receives and control writes are not operations)}
     *
     * @param now the clock now
     */
    long longestInFlight(long now) {
        if (table.creditsInUse() == 0) {
            return -1;
        }
        long[] longest = {-1};
        table.forEach((ctx, o) -> {
            if (o instanceof OpMono op && op.stage() != OpMono.NEW) {
                longest[0] = Math.max(longest[0], Math.max(0, now - op.postedAt()));
            }
        });
        return longest[0];
    }

    /** The native connection is closed: nothing is in flight any more. */
    void clearInFlight() {
        inFlightOps = 0;
    }

    // ---------------------------------------------------------------- completions

    /** {@return the owner of a context: an operation, a receive buffer, an {@link Internal} write, or null} */
    Object lookup(long ctx) {
        return table.lookup(ctx);
    }

    /**
     * A completion retires its context and gives back its credits; a subscriber that posts again
     * from its callback then finds them free.
     *
     * @param ctx the context
     * @param credits the send credits it held (0 for a receive)
     */
    void retire(long ctx, int credits) {
        table.release(ctx);
        if (credits > 0) {
            table.returnCredits(credits);
        }
        noteInFlight();
    }

    // ---------------------------------------------------------------- metrics

    int creditLimit() {
        return table.creditLimit();
    }

    int waitingOps() {
        return waitingOps;
    }

    int inFlightOps() {
        return inFlightOps;
    }

    int maxInFlight() {
        return maxInFlight;
    }

    long rejections() {
        return rejections;
    }
}
