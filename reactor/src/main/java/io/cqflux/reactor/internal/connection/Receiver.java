package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.op.ReceiveFlux;
import java.lang.foreign.MemorySegment;

/**
 * The receive side of one connection. Loop-confined.
 *
 * <p><b>Nothing arrives unseen.</b> A message can only land in a posted receive buffer, and
 * buffers are posted for the subscriber's outstanding demand plus the prefetch (below), at most
 * the receive queue's depth. A message that lands in a buffer after its subscriber went away (cancelled,
 * {@code next()}, a {@code take(n)} that was satisfied) is kept in that buffer, in arrival order,
 * and handed to the next subscriber before anything else; the buffer is reposted only once its
 * message was delivered. The backlog is therefore bounded by the receive queue's depth, costs no
 * copy, and a re-subscribing receiver loses nothing. A peer's write-with-immediate that consumes
 * no posted receive (libfabric's tcp provider reports {@code fi_writedata}'s remote CQ data that
 * way, with context 0) is kept, when nobody asks for it, in a bounded queue of its own
 * ({@link #notificationLimit}); overflowing it ends the connection with a clear error instead of
 * dropping a notification.
 *
 * <p><b>Prefetch: receives for peers without credits.</b> A cqflux peer sends only into receives
 * this side granted (PeerControl's credits), so posting for demand loses nothing. A peer not
 * written with cqflux sends whenever it likes, typically as soon as it is connected and again just
 * before it disconnects; a send that finds no posted receive is refused by the NIC (an RNR NAK,
 * retried by the sender, and lost if it disconnects meanwhile). So a connection may keep
 * {@link #prefetch} receives posted ahead of demand, from establishment on (or from before the
 * accept, {@link #adopt}), subscriber or not; what lands in them waits in its buffer, in order,
 * for the next subscriber, as the backlog does. While the backlog has room at least one receive
 * stays posted. For a peer without credits the bound is the pool: when every buffer holds a
 * message nobody asked for, nothing was lost yet, but the peer's next message would find no
 * posted receive. By default ({@link #endOnOverflow}) the connection then ends with a clear error
 * (its messages are still delivered first) rather than leave that next send to the NIC's retries,
 * which lose it if they run out or the peer disconnects meanwhile. A peer that never has more
 * messages outstanding than {@code receiveQueueSize} (a librpma peer whose window equals it) is
 * ended all the same when it fills the pool exactly; the option off leaves the next send to wait
 * for a receive instead (an RNR NAK retried by the sender on RDMA; on fabric/tcp the message
 * waits in the stream), which holds the peer back without ending anything. For a cqflux peer a
 * full pool only means no credits: its sends wait.
 *
 * <p>The pool ({@code receiveQueueSize} buffers) is allocated and registered on the first
 * subscription (or at establishment with a prefetch, or before the accept) and freed when the
 * connection's native objects are gone: posted receives keep
 * using it until the queue pair is destroyed. A server's connection to a cqflux peer takes its
 * buffers from the server's {@link SharedReceivePool} instead ({@link #share}), and posts at most
 * its window, which starts small and grows with use (its {@link PoolShare}); its posted
 * receives and the buffers of its backlog go back to that pool. With {@code receiveQueueSize} 0 there is no pool:
 * a subscriber then gets only the notifications that consume no receive, and where there are
 * none (a write with immediate consumes a receive) it is refused.
 *
 * <p>This class keeps the buffers, what is posted and the backlog; the subscriber and its demand
 * are a {@link ReceiveSubscriber}'s, and the end (what is left to deliver after it, and when the
 * stream ends) is {@link ReceiveLeftovers}'.
 */
public final class Receiver {
    private final ConnectionCore core;
    /** Where a receive takes its context, and how a cqflux peer hears of posted receives. */
    private final SendQueue sendQueue;
    private final int count;
    private final int bufferSize;
    private final int notificationLimit;
    /** The one subscriber and its demand. */
    private final ReceiveSubscriber subscriber = new ReceiveSubscriber();
    /** Completed receives and notifications nobody has asked for yet, in arrival order. */
    private final ReceiveBacklog backlog = new ReceiveBacklog();
    /** The connection's own buffers; null: none yet, or it takes part in a server's pool. */
    private ReceivePool pool;
    /** Where its own pool is registered when it makes one: null for the transport (see {@link #registerPoolIn}). */
    private io.cqflux.core.spi.Registrar poolRegistrar;
    /** Its share of the server's pool its buffers come from; null: a pool of its own. */
    private PoolShare share;
    private int posted;
    private boolean retryScheduled;
    /** The end: whether it came, and what had arrived and was not yet delivered then. */
    private final ReceiveLeftovers leftovers = new ReceiveLeftovers();

    /** Receives kept posted ahead of demand, 0..count (see the class comment). */
    private int prefetch;
    /** The peer sends without credits: a pool full of unasked messages ends the connection. */
    private boolean uncredited;
    /** Whether a full pool of an uncredited peer ends the connection (else the peer is held back). */
    private boolean endOnOverflow = true;

    Receiver(ConnectionCore core, SendQueue sendQueue, int count, int bufferSize, int notificationLimit) {
        this.core = core;
        this.sendQueue = sendQueue;
        this.count = count;
        this.bufferSize = bufferSize;
        this.notificationLimit = notificationLimit;
    }

    /** Attaches the single subscriber, with the demand it asked for so far. Loop thread. */
    public void attach(ReceiveFlux.Inbound<?> s) {
        if (s.isCancelled()) {
            return;
        }
        Throwable refusal = core.admission.receiveRefusal();
        if (refusal != null) {
            if (!subscriber.attached() && leftovers.awaitSubscriber()) {
                subscriber.attach(s);
                request(s);
                return;
            }
            Throwable cause = leftovers.endCause();
            ReceiveSubscriber.end(s, cause != null ? cause : refusal);
            return;
        }
        if (subscriber.attached()) {
            s.error(new IllegalStateException("connection " + core.description
                    + " already has a receiving subscriber; share its Flux instead"));
            return;
        }
        if (count == 0 && core.transport.writeWithImmediateConsumesReceive()) {
            // Nothing can ever arrive. Where a peer's write with immediate consumes no receive
            // (libfabric's tcp provider), its notifications still do, and are kept for this
            // subscriber (the backlog): refusing it would leave them to overflow the backlog.
            s.error(new IllegalStateException("connection " + core.description
                    + " has receiveQueueSize 0: no receive can be posted, so nothing can be received"));
            return;
        }
        RuntimeException failed = ensurePool();
        if (failed != null) {
            s.error(failed);
            return;
        }
        subscriber.attach(s);
        request(s);
    }

    /**
     * Takes this connection's receive buffers from a server's shared pool instead of a pool of its
     * own, with a window that starts at {@link SharedReceivePool#INITIAL_WINDOW} and grows on use
     * (SharedReceivePool's design comment). For a peer with credits only: one without sends
     * whenever it likes, so it keeps its own pool and prefetch. Before the connection starts;
     * the pool is held until {@link #freePool()}.
     *
     * @param p the server's pool
     * @return whether it is used (not with receiveQueueSize 0, a peer without credits, or
     *     buffers of another size)
     */
    public boolean share(SharedReceivePool p) {
        if (count == 0 || uncredited || pool != null || p.bufferSize() != bufferSize) {
            return false;
        }
        share = new PoolShare(p, count, core.loop, this::repost);
        return true;
    }

    /** {@return the receives this connection may have posted at once: its window, or its depth without a shared pool} */
    public int window() {
        return share != null ? share.window() : count;
    }

    /** {@return receives posted now (diagnostics, tests)} */
    public int posted() {
        return posted;
    }

    /** {@return a free buffer, taken, or null} */
    private ReceiveBuffer takeFree() {
        if (share != null) {
            return share.take();
        }
        return pool != null ? pool.take() : null; // receiveQueueSize 0: no pool, nothing to post
    }

    private void giveBack(ReceiveBuffer b) {
        if (share != null) {
            share.give(b);
        } else {
            pool.give(b);
        }
    }

    /**
     * A receive that was still posted when the native connection was closed: its buffer goes
     * back to the shared pool (the queue pair that could write it is gone). Loop thread, or the
     * forced close's.
     *
     * @param b the buffer
     */
    public void postedAtClose(ReceiveBuffer b) {
        if (share != null) {
            posted--;
            share.give(b);
        }
    }

    /** Allocates and registers the pool if it is not yet; {@return the failure, or null} */
    private RuntimeException ensurePool() {
        if (pool != null || share != null || count == 0) {
            return null;
        }
        try {
            pool = ReceivePool.allocate(poolRegistrar != null ? poolRegistrar : core.transport, count, bufferSize);
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /**
     * Registers the pool it makes of its own (none when it shares the server's) in {@code r}: a
     * scoped connection's key scope, where its keys and its connection live. A transport whose
     * posts need a local descriptor of the connection's own domain (libfabric verbs,
     * {@code FI_MR_LOCAL}) then posts the pool's receives as they are, instead of registering the
     * pool, made in the transport's domain, once more in the connection's. Before the connection
     * starts.
     *
     * @param r the connection's key scope; it takes registrations while the connection lives
     */
    public void registerPoolIn(io.cqflux.core.spi.Registrar r) {
        this.poolRegistrar = r;
    }

    /**
     * Sets the receives kept posted ahead of demand. Before the connection starts.
     *
     * @param receives how many, at most the receive queue's depth (more is that depth)
     * @param withoutCredits whether the peer sends without credits (raw private data)
     */
    public void prefetch(int receives, boolean withoutCredits) {
        this.prefetch = Math.clamp(receives, 0, count);
        this.uncredited = withoutCredits;
    }

    /**
     * Sets what a full pool of a peer without credits does: end the connection (the default), or
     * leave the peer's next send to wait for a receive (see the class comment). Before the
     * connection starts.
     *
     * @param end whether to end the connection
     */
    public void endOnOverflow(boolean end) {
        this.endOnOverflow = end;
    }

    /** {@return the receives kept posted ahead of demand} */
    public int prefetch() {
        return prefetch;
    }

    /**
     * The connection is established: with a prefetch, the pool comes up and its receives are
     * posted now, before anyone subscribes. Loop thread.
     */
    public void established() {
        if (prefetch == 0 || leftovers.ended()) {
            return;
        }
        RuntimeException failed = ensurePool();
        if (failed != null) {
            core.endOnReceiveFailure("allocating its receive prefetch of " + prefetch + " buffers failed", failed);
            return;
        }
        repost();
    }

    /**
     * Takes over a pool whose first {@code p.posted} buffers were posted before the accept
     * ({@link ReceivePool#handOver}). Before the connection starts.
     *
     * @param p the pool and what was posted into it
     * @throws IllegalStateException when the table hands out other contexts (a bookkeeping bug)
     */
    public void adopt(ReceivePool p) {
        pool = p;
        posted += p.handOver(sendQueue);
    }

    /**
     * Takes the demand the subscriber asked for, serves the backlog, and posts receives for the
     * rest. Demand asked for before {@link #attach} stays in the subscription until then. Loop
     * thread.
     */
    public void request(ReceiveFlux.Inbound<?> s) {
        if (!subscriber.is(s)) {
            return;
        }
        subscriber.addDemand(s.takeRequested());
        if (leftovers.ended()) {
            leftovers.serve(subscriber);
            return;
        }
        serveBacklog();
        repost();
    }

    /** Copies a message (or, with no buffer, a notification) into the leftovers. */
    private void keep(long length, Opcode opcode, boolean imm, int immediate, ReceiveBuffer b) {
        leftovers.keep(length, opcode, imm, immediate, b == null ? null : slice(b));
    }

    /** Detaches the subscriber; posted buffers stay posted and keep what lands in them. Loop thread. */
    public void detach(ReceiveFlux.Inbound<?> s) {
        subscriber.detach(s);
    }

    /** {@return the messages and notifications kept for the next subscriber (diagnostics, tests)} */
    public int backlog() {
        return backlog.size();
    }

    private void serveBacklog() {
        while (!backlog.isEmpty() && subscriber.wanted()) {
            Object o = backlog.poll();
            if (o instanceof ReceiveBuffer b) {
                subscriber.deliver(b.length, b.opcode, b.hasImmediate, b.immediate, slice(b));
                recycle(b);
            } else {
                ReceiveBacklog.Notification m = (ReceiveBacklog.Notification) o;
                subscriber.deliver(m.length(), m.opcode(), m.hasImmediate(), m.immediate(), MemorySegment.NULL);
            }
        }
        serveLeftoversIfEnded();
    }

    /**
     * An end made from inside a hand-over (an onNext or a decoder that disposed the connection)
     * moved the rest into the leftovers, which that hand-over could not serve (one onNext at a
     * time): serve them once it returned, rather than when the native release finishes the end.
     */
    private void serveLeftoversIfEnded() {
        if (leftovers.ended() && !subscriber.delivering()) {
            leftovers.serve(subscriber);
        }
    }

    private void repost() {
        while (!leftovers.ended() && core.canPost() && posted < target()) {
            ReceiveBuffer b = takeFree();
            if (b == null) {
                if (share != null) {
                    share.awaitBuffer();
                }
                return;
            }
            long ctx = sendQueue.acquireReceiveContext(b);
            boolean ok;
            try {
                ok = core.conn.receive(b.region, b.offset, bufferSize, ctx);
            } catch (RuntimeException e) {
                sendQueue.releaseReceiveContext(ctx);
                giveBack(b);
                if (!subscriber.fail(e)) {
                    core.endOnReceiveFailure("posting a prefetched receive failed", e);
                }
                return;
            }
            if (!ok) {
                sendQueue.releaseReceiveContext(ctx);
                giveBack(b);
                scheduleRetry();
                return;
            }
            posted++;
            sendQueue.receivesPosted(1);
        }
    }

    /**
     * {@return how many receives should be posted: the subscriber's demand, plus the prefetch
     * less what already waits in the backlog, and at least one while a prefetch is on}
     */
    private long target() {
        long want = subscriber.demand();
        if (prefetch > 0) {
            long ahead = Math.max(1, prefetch - backlog.buffers());
            want = want + ahead < 0 ? Long.MAX_VALUE : want + ahead;
        }
        return share != null ? Math.min(want, share.window()) : want;
    }

    private void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        retryScheduled = true;
        try {
            core.loop.execute(() -> {
                retryScheduled = false;
                repost();
            });
        } catch (RuntimeException e) {
            retryScheduled = false;
        }
    }

    /**
     * A posted receive completed (its context was already released by the owner). Loop thread.
     *
     * @param c the completion
     * @param b the buffer it landed in
     */
    public void onCompletion(Completion c, ReceiveBuffer b) {
        posted--;
        if (leftovers.ended()) {
            // Arrived after the connection ended but before its queue pair was destroyed: kept
            // like the backlog (the pool is alive until freePool).
            if (c.isSuccess()) {
                keep(c.byteLength(), c.opcode(), c.hasImmediate(), c.hasImmediate() ? c.immediate() : 0, b);
                leftovers.serve(subscriber);
            }
            giveBack(b);
            return;
        }
        if (!c.isSuccess()) {
            // A flushed receive means the connection is going down: the owner ends it and the
            // subscriber hears of that end. Any other error is this receive's own, and also ends
            // the connection (an error completion puts the queue pair in the error state,
            // ibv_poll_cq(3)); the buffer is not reposted either way.
            giveBack(b);
            if (c.status() != CompletionStatus.WR_FLUSH_ERR && subscriber.attached()) {
                subscriber.fail(new OperationFailedException(c.snapshot(), Opcode.RECEIVE, core.description));
            }
            return;
        }
        Opcode opcode = c.opcode();
        long len = c.byteLength();
        if (opcode == Opcode.RECEIVE && len > bufferSize) {
            len = bufferSize;
        }
        boolean imm = c.hasImmediate();
        int immediate = imm ? c.immediate() : 0;
        if (share != null) {
            share.messageArrived(); // the window follows use
        }
        if (backlog.isEmpty() && subscriber.wanted()) {
            subscriber.deliver(len, opcode, imm, immediate, slice(b));
            recycle(b);
            serveLeftoversIfEnded();
            return;
        }
        // Nobody asks for it now: keep it in its buffer, in order, for the next subscriber.
        b.hold(len, opcode, imm, immediate);
        backlog.add(b);
        if (uncredited && endOnOverflow && prefetch > 0 && (pool == null || pool.exhausted())
                && posted == 0) {
            // Every buffer holds a message nobody asked for: nothing is lost yet, but the peer's
            // next send would find no receive (see the class comment). Ended loudly; what arrived
            // is still delivered.
            core.endOnReceiveOverflow("all " + count + " receive buffers (receiveQueueSize) hold messages nobody"
                    + " asked for yet (none was lost), so the peer's next message would find no posted receive;"
                    + " subscribe to receive() sooner, raise receiveQueueSize, or let the peer wait for receives"
                    + " (withEndOnReceiveOverflow(false))");
            return;
        }
        repost();
    }

    /**
     * A notification that consumed no receive buffer (see {@link CompletionDispatch#onCompletion}).
     * Loop thread.
     *
     * @param c the completion
     */
    public void onNotification(Completion c) {
        boolean imm = c.hasImmediate();
        int immediate = imm ? c.immediate() : 0;
        if (leftovers.ended()) {
            keep(c.byteLength(), c.opcode(), imm, immediate, null);
            leftovers.serve(subscriber);
            return;
        }
        if (backlog.isEmpty() && subscriber.wanted()) {
            subscriber.deliver(c.byteLength(), c.opcode(), imm, immediate, MemorySegment.NULL);
            serveLeftoversIfEnded();
            return;
        }
        boolean overflow = backlog.notifications() >= notificationLimit;
        // Kept in every case, the one past the limit too, in order, before the end copies the
        // backlog out: the overflow ends the connection, it does not drop what arrived.
        backlog.add(new ReceiveBacklog.Notification(c.byteLength(), c.opcode(), imm, immediate));
        if (overflow) {
            core.endOnReceiveOverflow(notificationLimit + " write-with-immediate notifications arrived with nobody"
                    + " receiving them (the backlog limit); subscribe to receive() or raise"
                    + " Cqflux.Builder.notificationBacklog");
        }
    }

    private MemorySegment slice(ReceiveBuffer b) {
        return b.region.segment().asSlice(b.offset, bufferSize);
    }

    private void recycle(ReceiveBuffer b) {
        giveBack(b);
        repost();
    }

    /**
     * Ends the subscriber when the connection ends: what the backlog holds is delivered first, as
     * far as demand allows. Loop thread.
     *
     * @param cause what the subscriber gets: a {@link ConnectionException} {@code CLOSED} by the
     *     peer completes the stream; after a close by this side a {@link ResourceClosedException}
     */
    public void terminate(Throwable cause) {
        serveBacklog();
        leftovers.end(cause);
        // What nobody asked for yet outlives the pool: copy it out, in order.
        backlog.drain(b -> {
            keep(b.length, b.opcode, b.hasImmediate, b.immediate, b);
            if (share != null) {
                share.give(b); // copied out: another connection may use it now
            }
        }, m -> keep(m.length(), m.opcode(), m.hasImmediate(), m.immediate(), null));
        subscriber.detachCancelled();
        leftovers.serve(subscriber);
    }

    /**
     * Nothing can arrive any more (the native connection is gone, or is abandoned): the stream
     * ends once its leftovers are delivered. Loop thread, or any thread once the loop is gone.
     */
    public void finish() {
        boolean giveBack = share != null && !share.released();
        backlog.drain(b -> {
            if (giveBack) {
                share.give(b);
            }
        }, m -> { });
        leftovers.finish();
        leftovers.serve(subscriber);
    }

    /** Frees the pool, after the native connection is closed; then {@link #finish()}. */
    public void freePool() {
        finish();
        if (share != null) {
            // Its posted receives went back with postedAtClose; the region is the server's.
            share.release();
            return;
        }
        if (pool != null) {
            // The deregistration first: only then may the memory go (DeferredArena's design
            // comment); a deregistration that fails keeps the memory.
            pool.region.close();
            pool.arena.close();
            pool = null;
        }
    }
}
