package io.cqflux.reactor.internal.op;

import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.WriteRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * The posting scan of {@link WriteAllFlux}: posts the requests waiting in their slots
 * ({@link WriteAllSlot#QUEUED}) in ring order, from the connection's loop thread.
 *
 * <p>A request is posted from the loop thread: when upstream emits it there in answer to the
 * drain's request (a synchronous source), by the one scan that follows that request, with every
 * other request it emitted; emitted there otherwise, at once (or by the posting task already
 * queued, if one is); emitted on another thread, it waits in its slot and one loop task posts
 * every request waiting, in order. So a producer on another thread costs one hand-over to the
 * loop per burst, not one per write: posting is batched per loop turn.
 */
final class WriteAllPosting {
    private static final VarHandle POST_WIP;

    static {
        try {
            POST_WIP = MethodHandles.lookup().findVarHandle(WriteAllPosting.class, "postWip", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final WriteAllMain main;
    private final RdmaConnection connection;
    private final EventLoop loop;
    private final WriteAllSlot[] ring;
    /** {@link #postQueued}, made once: the task that posts the waiting requests. */
    private final Runnable postTask = this::postQueued;

    /**
     * Ownership of the posting scan, as the stream's WIP owns its drain: the request that moves it
     * from 0 starts a scan (inline on the loop thread, else as a {@link #postTask} handed to the
     * loop), or a drain on the loop takes it before it asks upstream for more
     * ({@link #requestMore}, which scans once upstream has emitted), and the scan goes round again
     * while requests were queued meanwhile. So exactly one scan runs at a time, on whatever thread
     * (after the loop ended, the closing or the emitting one), and a request queued during a scan
     * (a nested emission included) is seen by it. Through {@link #POST_WIP}.
     */
    @SuppressWarnings("unused")
    private volatile int postWip;
    /**
     * A drain on the loop thread holds the posting scan while it asks upstream for more
     * ({@link #requestMore}): a request emitted on this thread meanwhile is left for the scan that
     * follows. Loop thread.
     */
    private boolean scanAfterRequest;
    /** Slot of the oldest request not yet posted (or of the next one). Owner of {@link #postWip}. */
    private int postHead;

    WriteAllPosting(WriteAllMain main, RdmaConnection connection, EventLoop loop, WriteAllSlot[] ring) {
        this.main = main;
        this.connection = connection;
        this.loop = loop;
        this.ring = ring;
    }

    /**
     * A request was queued in its slot (upstream's thread): posts it now on the loop thread, or
     * hands the scan to the loop, or leaves it to the scan that owns the posting.
     */
    void queued() {
        boolean onLoop = loop.inEventLoop();
        if (onLoop && scanAfterRequest) {
            // Emitted while a drain on this thread asks upstream for more (requestMore): the
            // scan that follows that request posts this write with the others.
            return;
        }
        if ((int) POST_WIP.getAndAdd(this, 1) == 0) {
            if (onLoop) {
                postQueued();
            } else {
                // One hand-over per burst: the task posts this request and every one
                // queued until its scan ends. After the loop ended it runs on the closing
                // (or this) thread, and the writes fail with the connection's end.
                loop.executeLaterOrAfterTermination(postTask);
            }
        }
    }

    /**
     * Asks upstream for {@code n} more requests. On the loop thread this thread takes the posting
     * scan first, so that what a synchronous upstream emits during the request is only queued
     * ({@link #queued}), and one scan posts it all afterwards: no hand-over of the scan per write.
     * The stream's drain loop only.
     */
    void requestMore(long n) {
        if (!loop.inEventLoop() || (int) POST_WIP.getAndAdd(this, 1) != 0) {
            // Off the loop, or the scan has an owner already: a scan under way on this thread
            // (this drain runs nested in it), or a posting task queued and not yet run. The
            // increment makes that owner go round once more, and it posts what is emitted.
            main.requestUpstream(n);
            return;
        }
        scanAfterRequest = true;
        try {
            main.requestUpstream(n);
        } finally {
            scanAfterRequest = false;
            postQueued(); // owner of the scan: releases it when nothing more is queued
        }
    }

    /**
     * Posts the waiting requests in ring order, from {@link #postHead} to the first slot that is
     * not {@link WriteAllSlot#QUEUED}, and again while requests were queued meanwhile. Runs
     * only as the owner of {@link #postWip}: on the loop thread, or after the loop ended.
     */
    private void postQueued() {
        WriteAllSlot[] ring = this.ring;
        int missed = 1;
        for (;;) {
            for (WriteAllSlot slot = ring[postHead]; slot.state == WriteAllSlot.QUEUED; slot = ring[postHead]) {
                postHead = postHead + 1 == ring.length ? 0 : postHead + 1;
                try {
                    post(slot);
                } catch (Throwable t) {
                    // A hook that throws (onOperatorError's, onErrorDropped's) must not leave
                    // the scan owned and the later requests waiting: the error fails the
                    // stream (or is dropped after the first), and the scan goes on.
                    Exceptions.throwIfJvmFatal(t);
                    main.postingThrew(t);
                }
            }
            missed = (int) POST_WIP.getAndAdd(this, -missed) - missed;
            if (missed == 0) {
                return;
            }
        }
    }

    /** Posts one waiting request, unless the stream ended or failed first (then it is discarded). */
    private void post(WriteAllSlot slot) {
        WriteRequest r = slot.request;
        if (main.postingStopped()) {
            // Taken, never posted: spent, and the drain (after the end) discards it. stop()
            // may have got there first. A failure not yet turned into the stream's end
            // (another thread owns the drain) stops the posting too, soon after it (a failure
            // recorded after this check still lets this one write go out).
            if (slot.spendQueued()) {
                main.drain();
            }
            return;
        }
        if (!slot.startPosting()) {
            return; // stop() spent it meanwhile
        }
        Mono<Void> op;
        try {
            op = r.durable()
                    ? connection.durableWrite(r.remote(), r.remoteOffset(), r.local(), r.localOffset(), r.length())
                    : connection.write(r.remote(), r.remoteOffset(), r.local(), r.localOffset(), r.length());
        } catch (Throwable t) {
            // Taken but never posted: the drain discards the request once the stream ends.
            slot.spent();
            // null: the drain cancels upstream, once (onOperatorError would cancel it too).
            main.innerError(Operators.onOperatorError(null, t, r, main.actual.currentContext()));
            return;
        }
        // An OpMono is its own subscription: this allocates nothing more per request. A stop()
        // between the state change and here is seen by Slot.onSubscribe, which cancels.
        try {
            op.subscribe(slot);
        } catch (Throwable t) {
            // Only a Mono an assembly hook wrapped can throw here (§2.13 forbids it). Not
            // subscribed, so never posted: spent now. Otherwise its outcome still comes.
            Exceptions.throwIfJvmFatal(t);
            if (slot.op == null) {
                slot.spent();
            }
            main.innerError(Operators.onOperatorError(null, t, r, main.actual.currentContext()));
        }
    }
}
