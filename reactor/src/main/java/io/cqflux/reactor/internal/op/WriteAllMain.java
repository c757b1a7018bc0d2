package io.cqflux.reactor.internal.op;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.WriteRequest;
import io.cqflux.reactor.WriteResult;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * The subscriber to upstream and the subscription downstream gets: the window's ring of
 * {@link WriteAllSlot}s, the WIP drain that sends every downstream signal, and the end (the
 * stop, the terminal signal, a subscriber that throws). The design is {@link WriteAllFlux}'s
 * class comment.
 */
final class WriteAllMain implements CoreSubscriber<WriteRequest>, Subscription, Scannable {
    private static final ApiAccess API = ApiAccess.get();

    private static final VarHandle WIP;
    private static final AtomicLongFieldUpdater<WriteAllMain> REQUESTED =
            AtomicLongFieldUpdater.newUpdater(WriteAllMain.class, "requested");
    private static final VarHandle ERROR;
    private static final VarHandle UPSTREAM_CANCELLED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WIP = l.findVarHandle(WriteAllMain.class, "wip", int.class);
            ERROR = l.findVarHandle(WriteAllMain.class, "error", Throwable.class);
            UPSTREAM_CANCELLED = l.findVarHandle(WriteAllMain.class, "upstreamCancelled", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public final CoreSubscriber<? super WriteResult> actual;
    private final ConnectionCore core;
    private final WriteAllSlot[] ring;
    /** {@link #batchEnded}, made once: the drain put off to the end of a completion batch. */
    private final Runnable batchDrain = this::batchEnded;
    /** A drain waits for the end of the completion batch being delivered. Loop thread. */
    private boolean drainPutOff;

    private Subscription upstream;

    /** Drain loop ownership: only the thread that moved it from 0 signals downstream. */
    @SuppressWarnings("unused")
    private volatile int wip;
    /** Downstream demand not yet met; through {@link #REQUESTED} ({@link Operators#addCap}). */
    @SuppressWarnings("unused")
    private volatile long requested;
    /** The first failure (a write, upstream, a bad request); set once through {@link #ERROR}. */
    @SuppressWarnings("unused")
    private volatile Throwable error;
    /** Upstream completed (or failed): no more requests will arrive. */
    private volatile boolean done;
    /** Downstream cancelled. */
    private volatile boolean cancelled;
    /** 1 once upstream was cancelled; through {@link #UPSTREAM_CANCELLED} ({@link #cancelUpstream}). */
    @SuppressWarnings("unused")
    private volatile int upstreamCancelled;
    /** The terminal signal was sent (or the stream was cancelled): start no more writes. */
    private volatile boolean stopped;
    /**
     * The drain sent the terminal signal or handled the cancel: from then on a drain emits
     * nothing and only hands the requests of writes that ended to {@link Operators#onDiscard}.
     * Drain loop only.
     */
    private boolean finished;

    /** Next slot a request goes to. Upstream's thread (serial, §1.3). */
    private int tail;
    /** Slot of the next result to emit. Drain loop only. */
    private int head;
    /** What upstream sees as its context, and what it discards ({@link #currentContext()}). */
    private final WriteAllDiscards discards;
    /** The posting scan: posts the requests waiting in their slots, from the loop thread. */
    private final WriteAllPosting posting;
    /** Results emitted so far: the next result's sequence. Drain loop only. */
    private long emitted;
    /**
     * Watches the connection's events for its end ({@link #watchTheEnd}): disposed when the
     * stream ends ({@link #unwatch}); null before it is made and after that.
     */
    private volatile Disposable endWatch;

    WriteAllMain(CoreSubscriber<? super WriteResult> actual, RdmaConnection connection, int window) {
        this.actual = actual;
        this.core = API.core(connection);
        this.ring = new WriteAllSlot[window];
        for (int i = 0; i < window; i++) {
            ring[i] = new WriteAllSlot(this);
        }
        this.discards = new WriteAllDiscards(actual, ring, this::stopped);
        this.posting = new WriteAllPosting(this, connection, core.loop, ring);
    }

    /**
     * The context upstream sees: downstream's; where it has a discard hook, one that keeps
     * from it what upstream discards of the requests this stream took ({@link WriteAllDiscards}).
     */
    @Override
    public Context currentContext() {
        return discards.context();
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (Operators.validate(upstream, s)) {
            upstream = s;
            actual.onSubscribe(this);
            if (core.closeRequested()) {
                // Started after this side's close: refused as every operation then is, with the
                // ResourceClosedException Admission makes, not with the end's replay below (unless
                // downstream cancelled in its onSubscribe: nothing to tell then).
                if (!stopped) {
                    innerError(core.admission.receiveRefusal());
                }
                return;
            }
            watchTheEnd();
            // Exactly one request per free slot: the window bounds what upstream may send.
            s.request(ring.length);
        }
    }

    /**
     * The connection's end fails the writes in flight, and with them the stream; a stream with
     * none in flight (its upstream quiet, a sink fed now and then) would otherwise outlive its
     * connection until upstream's next request, and keep upstream subscribed meanwhile. So the
     * end fails it too, with the end's {@code ConnectionException}, unless upstream has completed
     * (the writes left end it then). A stream subscribed after the connection ended, or while it
     * is ending, is failed the same way: the events replay the end to a late subscriber; one
     * subscribed after this side's close never gets here (onSubscribe refuses it).
     */
    private void watchTheEnd() {
        Disposable d = core.monitor.events()
                .filter(e -> e != ConnectionEvent.ESTABLISHED)
                // After the end's own work: a write in flight fails the stream first, with its own
                // error where it has one (an error completion ends the connection, then fails its
                // operation), as without this watch.
                .subscribe(e -> core.loop.executeLaterOrAfterTermination(() -> {
                    Throwable end = core.terminal();
                    if (end != null && !done && !stopped) {
                        innerError(end);
                    }
                }));
        endWatch = d;
        if (stopped) {
            unwatch();
        }
    }

    /** Stops watching the connection's end: the stream ended. Any thread; idempotent. */
    private void unwatch() {
        Disposable d = endWatch;
        if (d != null) {
            endWatch = null;
            d.dispose();
        }
    }

    @Override
    public void onNext(WriteRequest r) {
        // Reactive Streams §2.13: a null element is the caller's protocol error.
        Objects.requireNonNull(r, "onNext called with a null WriteRequest (Reactive Streams §2.13)");
        discards.taken(r);
        if (done) {
            Operators.onNextDropped(r, actual.currentContext());
            return;
        }
        if (stopped) {
            // Upstream may have discarded it already, itself (WriteAllDiscards): not twice.
            discards.discardTakenAfterEnd(r);
            return;
        }
        WriteAllSlot slot = ring[tail];
        if (slot.state != WriteAllSlot.EMPTY) {
            // More requests than were asked for: upstream broke §1.1. Our failure, not
            // upstream's: the drain cancels upstream (once) and fails the stream.
            innerError(Operators.onOperatorError(null, Exceptions.failWithOverflow(
                    "writeAll: more requests than the " + ring.length + " asked for"), r, actual.currentContext()));
            Operators.onDiscard(r, actual.currentContext()); // taken, never posted, never emitted
            return;
        }
        tail = tail + 1 == ring.length ? 0 : tail + 1;
        slot.queue(r); // publishes the request to the posting scan
        if (stopped) {
            // The stream ended while this request arrived (a cancel racing this onNext):
            // stop() may have passed this slot before it was QUEUED, and the scan stops at the
            // first request stop() spent. Either this or stop() spends it (both read the
            // other's volatile write after their own).
            if (slot.spendQueued()) {
                drain();
            }
            return;
        }
        posting.queued();
    }

    /**
     * {@code upstream.request(n)}; one that throws (Reactive Streams §3.16 forbids it) fails
     * the stream as a callback of Reactor's operators that throws does, instead of leaving
     * the drain's WIP held for good. Drain loop only (through {@link WriteAllPosting#requestMore}).
     */
    void requestUpstream(long n) {
        try {
            upstream.request(n);
        } catch (Throwable t) {
            Throwable ex;
            try {
                // null: the drain cancels upstream, once (onOperatorError would cancel it too).
                ex = Operators.onOperatorError(null, t, actual.currentContext());
            } catch (Throwable fatal) {
                // A fatal error (or a hook's own) bubbles up, as in downstreamThrew; the stream
                // still lets go of upstream and of its writes: what upstream emitted before it
                // threw is spent, never posted (no drain runs again: the WIP count is kept).
                finished = true;
                stopped = true;
                cancelUpstream();
                stop();
                throw fatal;
            }
            innerError(ex);
        }
    }

    /** {@return whether the stream ended (its terminal signal sent or cancelled): start no more writes} */
    boolean stopped() {
        return stopped;
    }

    /**
     * {@return whether the posting stops}: the stream ended, or failed and the failure is not
     * yet turned into its end (another thread owns the drain); a failure recorded after this
     * check still lets the write being posted go out
     */
    boolean postingStopped() {
        return stopped || error != null;
    }

    /**
     * A hook that the posting scan ran threw (onOperatorError's, onErrorDropped's): the error
     * fails the stream, or is dropped after the first, and the scan goes on.
     */
    void postingThrew(Throwable t) {
        if (!ERROR.compareAndSet(this, null, t)) {
            try {
                Operators.onErrorDropped(t, actual.currentContext());
            } catch (Throwable x) {
                Exceptions.throwIfJvmFatal(x);
            }
        }
        drain();
    }

    @Override
    public void onError(Throwable t) {
        // After a cancel no drain runs again: drop it rather than lose it.
        if (done || cancelled) {
            Operators.onErrorDropped(t, actual.currentContext());
            return;
        }
        if (!ERROR.compareAndSet(this, null, t)) {
            Operators.onErrorDropped(t, actual.currentContext());
        }
        done = true;
        drain();
    }

    @Override
    public void onComplete() {
        if (done) {
            return;
        }
        done = true;
        drain();
    }

    /**
     * A write failed: the first failure fails the stream, a later one is dropped. Drains either
     * way: after the end, a drain discards the failed write's request. Any thread.
     */
    public void innerError(Throwable t) {
        // The results completed earlier in this batch go out first, as they would have if
        // their drain had not been put off (writeCompleted); then the failure.
        if (core.loop.inEventLoop() && drainPutOff) {
            batchEnded();
        }
        // The same exception again, or the connection's end (which fails every write in flight,
        // after a write's own failure too) is no news: only another one is dropped.
        if (!ERROR.compareAndSet(this, null, t) && error != t && t != core.terminal()) {
            Operators.onErrorDropped(t, actual.currentContext());
        }
        drain();
    }

    /**
     * A write completed (its slot is {@link WriteAllSlot#DONE}). Inside a completion batch on the loop
     * the drain waits for the batch's end ({@link io.cqflux.epoll.loop.EventLoop#runAfterBatch}),
     * so that the batch's results go out, and upstream is asked for as many more requests, in
     * one drain instead of one per write; the new writes are then posted one after the other,
     * as a C program reads a batch of completions and then posts (together with
     * {@link WriteAllPosting#requestMore}). Any other thread (the connection's end after the loop ended)
     * drains at once.
     */
    public void writeCompleted() {
        EventLoop loop = core.loop;
        if (loop.inEventLoop()) {
            if (drainPutOff) {
                return;
            }
            if (loop.runAfterBatch(batchDrain)) {
                drainPutOff = true;
                return;
            }
        }
        drain();
    }

    /** The end of the completion batch a drain was put off to ({@link #writeCompleted}). Loop thread. */
    private void batchEnded() {
        assert core.loop.inEventLoop();
        drainPutOff = false;
        drain();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            // Reactive Streams §3.9: the subscriber hears of its own protocol error.
            innerError(Exceptions.nullOrNegativeRequestException(n));
            return;
        }
        Operators.addCap(REQUESTED, this, n);
        drain();
    }

    @Override
    public void cancel() {
        if (cancelled) {
            return;
        }
        cancelled = true;
        stopped = true;
        cancelUpstream();
        drain();
    }

    /**
     * Cancels upstream once, whoever gets here first: a downstream cancel racing the drain's
     * failure path, or a failed check after the hook's own cancel.
     */
    private void cancelUpstream() {
        if (UPSTREAM_CANCELLED.compareAndSet(this, 0, 1)) {
            upstream.cancel();
        }
    }

    /**
     * The stream ends (cancelled, or its terminal signal about to go): spends every request
     * still waiting to be posted, cancels every write
     * still pending (each keeps its credits and regions until its completion, as a cancelled
     * {@code write()} does; one waiting for a credit is never posted) and discards the
     * requests whose writes already ended. The cancelled writes' requests are discarded as
     * they are released ({@link WriteAllSlot#operationReleased}). Drain loop only.
     */
    private void stop() {
        for (WriteAllSlot s : ring) {
            if (s.state == WriteAllSlot.QUEUED) {
                // Never posted, and now never will be (post() sees stopped or loses this CAS).
                s.spendQueued();
            }
            if (s.state == WriteAllSlot.PENDING) {
                // Read after stopped was set: a write subscribed later cancels itself
                // (WriteAllSlot.onSubscribe), so each pending write is cancelled by one side or both.
                Subscription op = s.op;
                if (op != null) {
                    op.cancel();
                }
            }
        }
        discards.discardEnded();
        unwatch();
    }

    /**
     * Sends the terminal signal; a subscriber that throws from it is dropped, not thrown into
     * whoever drained (often the connection's loop), so that the drains that discard the
     * requests of the writes still ending keep running.
     */
    private void terminate(CoreSubscriber<? super WriteResult> a, @Nullable Throwable ex) {
        try {
            if (ex == null) {
                a.onComplete();
            } else {
                a.onError(ex);
            }
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, a.currentContext());
        }
    }

    /**
     * The subscriber's {@code onNext} threw (Reactive Streams §2.13 forbids it; it happens):
     * as Reactor's operators treat a callback of theirs that throws, the error goes through
     * {@link Operators#onOperatorError} and fails the stream, which cancels upstream (once, in
     * the drain) and the writes in flight. Drain loop only.
     */
    private void downstreamThrew(Throwable t, WriteResult result, Context ctx) {
        Throwable ex;
        try {
            ex = Operators.onOperatorError(null, t, result, ctx);
        } catch (Throwable fatal) {
            // A fatal error bubbles up, as in Reactor; the stream still lets go of upstream
            // and of its writes (no drain will run again: the WIP count is kept).
            finished = true;
            stopped = true;
            if (!done) {
                cancelUpstream();
            }
            stop();
            throw fatal;
        }
        if (!ERROR.compareAndSet(this, null, ex)) {
            Operators.onErrorDropped(ex, ctx);
        }
    }

    public void drain() {
        if ((int) WIP.getAndAdd(this, 1) != 0) {
            return;
        }
        int missed = 1;
        WriteAllSlot[] ring = this.ring;
        CoreSubscriber<? super WriteResult> a = actual;
        for (;;) {
            if (finished) {
                // After the end: the requests of writes that ended since go to discard.
                discards.discardEnded();
                missed = (int) WIP.getAndAdd(this, -missed) - missed;
                if (missed == 0) {
                    return;
                }
                continue;
            }
            long r = requested;
            long e = 0;
            for (;;) {
                if (cancelled) {
                    finished = true;
                    // A failure that arrived with (or after) the cancel is dropped, not lost.
                    Throwable ex = (Throwable) ERROR.getAndSet(this, Exceptions.TERMINATED);
                    if (ex != null && ex != Exceptions.TERMINATED) {
                        Operators.onErrorDropped(ex, a.currentContext());
                    }
                    stop();
                    break;
                }
                Throwable ex = error;
                if (ex != null) {
                    finished = true;
                    stopped = true;
                    // An upstream that terminated (its error, or completed with writes in
                    // flight) is not cancelled (§3.7 makes it a no-op, but doOnCancel and
                    // metrics upstream would see a cancel that never happened).
                    if (!done) {
                        cancelUpstream();
                    }
                    stop();
                    terminate(a, ex);
                    break;
                }
                // done before the head's state: every request upstream sent before it
                // completed is then visible.
                boolean d = done;
                WriteAllSlot slot = ring[head];
                int st = slot.state;
                if (st != WriteAllSlot.DONE) {
                    if (d && st == WriteAllSlot.EMPTY) {
                        finished = true;
                        stopped = true;
                        unwatch();
                        terminate(a, null);
                    }
                    break;
                }
                if (e == r) {
                    break;
                }
                // Free before upstream is asked again: onNext finds the slot empty.
                WriteResult result = new WriteResult(slot.emptied(), emitted++);
                head = head + 1 == ring.length ? 0 : head + 1;
                e++;
                try {
                    a.onNext(result);
                } catch (Throwable t) {
                    downstreamThrew(t, result, a.currentContext());
                }
            }
            if (e != 0 && !finished) {
                if (r != Long.MAX_VALUE) {
                    REQUESTED.addAndGet(this, -e);
                }
                if (!done) {
                    posting.requestMore(e);
                }
            }
            missed = (int) WIP.getAndAdd(this, -missed) - missed;
            if (missed == 0) {
                return;
            }
        }
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        if (key == Attr.NAME) {
            return WriteAllFlux.NAME;
        }
        if (key == Attr.PARENT) {
            return upstream;
        }
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.PREFETCH) {
            return ring.length;
        }
        if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
            return requested;
        }
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.TERMINATED) {
            return stopped && !cancelled;
        }
        if (key == Attr.ERROR) {
            Throwable e = error;
            return e == Exceptions.TERMINATED ? null : e;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }
}
