package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.WriteRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * One place of {@link WriteAllFlux}'s window and the inner subscriber of the write it holds; reused once its
 * result was emitted (its previous write then terminated, so no late signal can reach it).
 */
final class WriteAllSlot implements CoreSubscriber<Void>, Scannable, ReleaseListener {
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WriteAllSlot.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final int EMPTY = 0;
    static final int PENDING = 1;
    static final int DONE = 2;
    /**
     * The write ended without a result to emit and its buffers are released (it failed, was
     * never posted, or ended after the stream cancelled it): its request goes to discard
     * once the stream has ended.
     */
    static final int SPENT = 3;
    /**
     * The write failed, but its buffers may still be read by the NIC: failed by the
     * connection's end, it is released only after the native close. Its request is
     * discarded once {@link #operationReleased} says so.
     */
    static final int FAILED = 4;
    /** Taken from upstream, waiting for the posting scan ({@link WriteAllPosting}). */
    static final int QUEUED = 5;

    private final WriteAllMain parent;
    /** The request; written by upstream's thread before the write is subscribed. */
    WriteRequest request;
    /** The write's subscription, for cancellation. */
    volatile Subscription op;
    /** {@link #EMPTY}, {@link #QUEUED}, {@link #PENDING}, {@link #DONE}, {@link #SPENT} or {@link #FAILED}. */
    volatile int state;

    WriteAllSlot(WriteAllMain parent) {
        this.parent = parent;
    }

    /** {@return whether this call spent a request that waited for the posting scan (never posted)} */
    boolean spendQueued() {
        return STATE.compareAndSet(this, QUEUED, SPENT);
    }

    /** {@return whether this call moved a waiting request to posting}: false when stop() spent it */
    boolean startPosting() {
        return STATE.compareAndSet(this, QUEUED, PENDING);
    }

    /** The write ended without a result, its buffers released (never posted). */
    void spent() {
        state = SPENT;
    }

    /**
     * Takes {@code r} from upstream: the request first, then the state, which publishes it to the
     * posting scan. Upstream's thread, on an {@link #EMPTY} slot.
     */
    void queue(WriteRequest r) {
        request = r;
        state = QUEUED;
    }

    /**
     * Frees the slot of a result about to be emitted, before upstream is asked again (onNext finds
     * it empty; a release store: upstream's thread sees it through the request's own hand-over).
     * Drain loop only.
     *
     * @return the request whose result is emitted
     */
    WriteRequest emptied() {
        WriteRequest r = request;
        request = null;
        op = null;
        STATE.setRelease(this, EMPTY);
        return r;
    }

    /** {@return the request to discard, once (the slot forgets it), or null when there is none} */
    WriteRequest forget() {
        WriteRequest r = request;
        if (r != null) {
            request = null;
            op = null;
        }
        return r;
    }

    @Override
    public Context currentContext() {
        return parent.actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        op = s;
        // Written before the stopped check, read after it in stop(): one of the two
        // sides sees the other, so a write subscribed while the stream ends is detached.
        if (parent.stopped()) {
            s.cancel();
            return;
        }
        // A Mono<Void> needs no demand for its terminal signal; asked anyway, for any Mono an
        // assembly hook may have wrapped the operation in (OpMono ignores it).
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Void v) {
        // A Mono<Void> emits no value.
    }

    @Override
    public void onError(Throwable t) {
        // A write whose regions are already released (refused by its check, or failed by its
        // own error completion) is spent now: read on the thread that released them, which is
        // the one failing it. Otherwise its request waits for operationReleased(), which
        // OpMono finds by walking Attr.ACTUAL from its subscriber: an assembly hook whose
        // subscriber hides that walk leaves such a request undiscarded.
        if (state == PENDING) {
            state = op instanceof OpMono o && o.released ? SPENT : FAILED;
        }
        parent.innerError(t);
    }

    /**
     * The write failed, or the stream cancelled it and it is over (completed, failed or never
     * posted), and its regions are released: its request can go to discard now that the NIC
     * no longer reads its buffer. Loop thread (or the thread that closed the connection).
     */
    @Override
    public void operationReleased() {
        int st = state;
        if (st == PENDING || st == FAILED) {
            state = SPENT;
        }
        parent.drain();
    }

    @Override
    public void onComplete() {
        // A release store: the drain that emits the result reads it (a volatile read) on this
        // thread or after a WIP hand-over; no store-load order is needed here.
        STATE.setRelease(this, DONE);
        parent.writeCompleted();
    }

    /**
     * An inner subscriber answers as Reactor's own do, so that a {@link Scannable} walk from a
     * write (its {@code ACTUAL} is this slot) reaches the stream and its subscriber.
     */
    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        if (key == Attr.PARENT) {
            return op;
        }
        if (key == Attr.ACTUAL) {
            return parent;
        }
        if (key == Attr.TERMINATED) {
            return state == DONE;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }
}
