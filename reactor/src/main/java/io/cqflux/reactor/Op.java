package io.cqflux.reactor;

import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;

/**
 * One subscription to an {@link OpMono}: the pending operation. Created on the subscribing
 * thread; from the hand-over to the loop on, every field but {@link #cancelled} is confined to the
 * connection's loop thread.
 *
 * <p>Cancellation only detaches the subscriber: the slot, the credits and the region references
 * stay held until the completion arrives (the NIC may still be using the buffers), and a late
 * outcome is dropped through {@link Operators#onErrorDropped}. An operation cancelled while still
 * waiting for a credit is never posted.
 */
final class Op implements Subscription, Scannable {
    static final int NEW = 0;
    /** First part of a two-part operation posted, the second still to post. */
    static final int SECOND_PENDING = 1;
    static final int POSTED = 2;

    final OpMono spec;
    final CoreSubscriber<? super Void> actual;
    volatile boolean cancelled;
    /** Whether the subscriber got its terminal signal (or was detached): loop-confined after hand-over. */
    boolean done;
    /** Whether the region references were released. */
    boolean released;
    int stage = NEW;
    long context = -1;

    Op(OpMono spec, CoreSubscriber<? super Void> actual) {
        this.spec = spec;
        this.actual = actual;
    }

    @Override
    public void request(long n) {
        // A Mono<Void> emits no value: demand does not gate the terminal signal.
    }

    @Override
    public void cancel() {
        cancelled = true;
    }

    /** Signals success, unless already terminated; a throwing subscriber never escapes. */
    void complete() {
        if (done) {
            return;
        }
        done = true;
        if (cancelled) {
            return;
        }
        try {
            actual.onComplete();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, actual.currentContext());
        }
    }

    /**
     * Signals an error, unless already terminated; after cancellation it goes to
     * {@link Operators#onErrorDropped}.
     *
     * @param error the failure
     */
    void fail(Throwable error) {
        if (done) {
            return;
        }
        done = true;
        if (cancelled) {
            Operators.onErrorDropped(error, actual.currentContext());
            return;
        }
        try {
            actual.onError(error);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, actual.currentContext());
        }
    }

    /** Releases the local regions' in-flight references, once. */
    void releaseRegions() {
        if (!released) {
            released = true;
            spec.releaseRegions();
        }
    }

    @Override
    @Nullable
    @SuppressWarnings("rawtypes") // Scannable declares it with the raw Attr
    public Object scanUnsafe(Attr key) {
        if (key == Attr.CANCELLED) {
            return cancelled;
        }
        if (key == Attr.TERMINATED) {
            return done;
        }
        if (key == Attr.ACTUAL) {
            return actual;
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.ASYNC;
        }
        return null;
    }
}
