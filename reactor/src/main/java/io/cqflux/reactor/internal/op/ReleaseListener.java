package io.cqflux.reactor.internal.op;

import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.Scannable.Attr;
import reactor.core.publisher.Operators;

/**
 * A subscriber of the library's own that must know when the NIC no longer reads an
 * operation's buffers, to hand its data back ({@code writeAll}'s window slots discard the
 * request): told once, on the thread that finished or released it last (the loop's; the
 * subscribing thread's for a check that failed before the hand-over; the one that closes the
 * connection after its loop ended), after the operation ended and its regions were released,
 * for an operation it cancelled whatever the outcome, and for one it did not cancel after a
 * failure.
 * A success is not told: the completion path releases the regions before {@code onComplete}.
 * A failure by the connection's end comes before the queue pair is destroyed; the telling
 * then waits for {@link OpMono#releaseRegions()} after the native close (never, when that close
 * failed and the buffers are kept). Found by walking {@link Attr#ACTUAL} from the subscriber:
 * behind an assembly hook's subscriber that is not {@link Scannable}, it is not told. Not meant
 * for a subscriber that calls {@code request(n <= 0)}.
 */
public interface ReleaseListener {
    /** The operation is over and its regions are released: its buffers may be reused. */
    void operationReleased();

    /**
     * Tells a listener among the subscriber and the subscribers it wraps (an assembly hook may
     * have put an operator of its own between the two; followed through {@link Attr#ACTUAL}, a
     * few levels). Never on the success path: the hot path pays nothing.
     *
     * @param a the operation's subscriber
     */
    static void tell(CoreSubscriber<? super Void> a) {
        try {
            Object s = a;
            for (int depth = 0; depth < 8 && s != null; depth++) {
                if (s instanceof ReleaseListener l) {
                    l.operationReleased();
                    return;
                }
                s = s instanceof Scannable sc ? sc.scanUnsafe(Attr.ACTUAL) : null;
            }
        } catch (Throwable t) {
            // A listener, or a hook's subscriber answering the walk, that throws: reported, and
            // kept from the failure path that called this (a loop task, the native close).
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, a.currentContext());
        }
    }
}
