package io.cqflux.reactor.internal.op;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Scannable;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * {@link LoopSafeMono}'s hand-over: a value goes to the subscriber that takes it or to the
 * release, never to both and never to neither, with no global Reactor hook.
 */
class LoopSafeMonoTest {

    /** A resource of the test: released at most once. */
    static final class Res {
        final List<Res> released;

        Res(List<Res> released) {
            this.released = released;
        }

        void release() {
            released.add(this);
        }
    }

    /** A source the test drives by hand: it keeps its subscriber and emits when told to. */
    static final class Manual extends Mono<Res> {
        final AtomicReference<CoreSubscriber<? super Res>> actual = new AtomicReference<>();
        volatile boolean cancelled;

        @Override
        public void subscribe(CoreSubscriber<? super Res> s) {
            actual.set(s);
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                    cancelled = true;
                }
            });
        }

        void emit(Res r) {
            actual.get().onNext(r);
            actual.get().onComplete();
        }
    }

    /**
     * What Reactor's lambda subscriber does, with the race forced: its value and its cancel are
     * decided by one swap of the subscription, and here the cancel (from another thread) wins it
     * while the value is on its way in.
     */
    static final class CancelledWhileDelivering<T> implements CoreSubscriber<T> {
        final AtomicReference<Subscription> s = new AtomicReference<>();
        final List<T> taken = new CopyOnWriteArrayList<>();

        @Override
        public void onSubscribe(Subscription sub) {
            s.set(sub);
            sub.request(Long.MAX_VALUE);
        }

        void dispose() {
            Subscription was = s.getAndSet(Operators.cancelledSubscription());
            if (was != null && was != Operators.cancelledSubscription()) {
                was.cancel();
            }
        }

        @Override
        public void onNext(T t) {
            Thread canceller = new Thread(this::dispose);
            canceller.start();
            try {
                canceller.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            if (s.getAndSet(Operators.cancelledSubscription()) == Operators.cancelledSubscription()) {
                return; // dropped, as Reactor's lambda subscriber drops it
            }
            taken.add(t);
        }

        @Override
        public void onError(Throwable t) {
        }

        @Override
        public void onComplete() {
        }
    }

    @Test
    void handOver_cancelFromAnotherThreadWhileDelivering_releasesTheValue() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        CancelledWhileDelivering<Res> sub = new CancelledWhileDelivering<>();
        LoopSafeMono.of(source, Res.class, Res::release).subscribe(sub);
        Res r = new Res(released);
        source.emit(r);
        assertEquals(List.of(), sub.taken);
        assertEquals(List.of(r), released, "the value the subscriber dropped");
        assertTrue(source.cancelled, "the cancel still reaches the source");
    }

    @Test
    void handOver_cancelBeforeTheValue_releasesItWhenItComes() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        List<Res> taken = new CopyOnWriteArrayList<>();
        LoopSafeMono.of(source, Res.class, Res::release).subscribe(taken::add).dispose();
        Res r = new Res(released);
        source.emit(r);
        assertEquals(List.of(), taken);
        assertEquals(List.of(r), released);
    }

    @Test
    void handOver_subscriberThatCancelsOnceItHoldsTheValue_keepsIt() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Res r = new Res(released);
        // block() and take(1) cancel on the delivering thread, during the delivery.
        Mono<Res> blocked = LoopSafeMono.of(Mono.fromSupplier(() -> r), Res.class, Res::release);
        assertSame(r, blocked.block());
        assertSame(r, blocked.flux().take(1).blockLast());
        // A cancel after the delivery.
        Manual source = new Manual();
        List<Res> taken = new CopyOnWriteArrayList<>();
        var d = LoopSafeMono.of(source, Res.class, Res::release).subscribe(taken::add);
        source.emit(r);
        d.dispose();
        assertEquals(List.of(r), taken);
        assertEquals(List.of(), released);
    }

    @Test
    void handOver_valueDroppedUpstream_isReleased_andOtherDropsGoToTheApplicationsHook() {
        List<Res> released = new CopyOnWriteArrayList<>();
        List<Object> applicationDrops = new CopyOnWriteArrayList<>();
        Hooks.onNextDropped(applicationDrops::add);
        try {
            Res r = new Res(released);
            Mono<Res> dropping = new Mono<>() {
                @Override
                public void subscribe(CoreSubscriber<? super Res> actual) {
                    Operators.complete(actual);
                    // What an operator upstream (a timeout that fired first) does with a late value.
                    Operators.onNextDropped(r, actual.currentContext());
                    Operators.onNextDropped("not a resource", actual.currentContext());
                }
            };
            LoopSafeMono.of(dropping, Res.class, Res::release).subscribe();
            assertEquals(List.of(r), released);
            assertEquals(List.of("not a resource"), applicationDrops);
        } finally {
            Hooks.resetOnNextDropped();
        }
    }

    /**
     * The fact the hand-over depends on for drops upstream of it: Reactor looks for a local
     * {@code onNextDropped} hook under {@link LoopSafeMono#DROP_HOOK_KEY} in the context it is
     * given. Should a Reactor upgrade move it, this fails rather than connections dropped by the
     * connect timeout leaking silently.
     */
    @Test
    void reactorsLocalDropHook_isKeptUnderTheKeyTheHandOverSets() {
        List<Object> seen = new CopyOnWriteArrayList<>();
        Operators.onNextDropped("x", Context.of(LoopSafeMono.DROP_HOOK_KEY, (java.util.function.Consumer<Object>) seen::add));
        assertEquals(List.of("x"), seen);
    }

    /**
     * The facts the late-cancel rule rests on: {@code subscribe(Consumer)} puts Reactor's lambda
     * subscriber (by the name the hand-over looks for) right below the hand-over, and once it has
     * taken the value its {@code dispose()} forwards no cancel.
     */
    @Test
    void reactorsLambdaSubscriber_isRecognised_andForwardsNoCancelOnceItTookTheValue() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        List<Res> taken = new CopyOnWriteArrayList<>();
        Disposable d = LoopSafeMono.of(source, Res.class, Res::release).subscribe(taken::add);
        Object below = Scannable.from(source.actual.get()).scanUnsafe(Scannable.Attr.ACTUAL);
        assertEquals(LoopSafeMono.LAMBDA_SUBSCRIBER, below.getClass().getName());
        Res r = new Res(released);
        source.emit(r);
        d.dispose();
        assertEquals(List.of(r), taken);
        assertEquals(List.of(), released);
        assertFalse(source.cancelled, "a cancel was forwarded after the value was taken");
    }

    /**
     * Reactor's lambda subscriber forwards a cancel only when its own cancel won against the
     * value; a forwarded cancel that reaches the hand-over after the delivery (the disposing
     * thread was descheduled between the two) therefore means the value was dropped. Here the
     * test forwards that late cancel itself.
     */
    @Test
    void handOver_lateCancelFromReactorsLambdaSubscriber_releasesTheValue() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        LoopSafeMono.of(source, Res.class, Res::release).subscribe(x -> { });
        Res r = new Res(released);
        source.emit(r);
        ((Subscription) source.actual.get()).cancel();
        ((Subscription) source.actual.get()).cancel();
        assertEquals(List.of(r), released, "released once");
    }

    /**
     * A late cancel that comes through {@code map} and {@code doOnNext} from Reactor's lambda
     * subscriber still means the value was dropped (the lambda subscriber forwards a cancel only
     * when the cancel won), so it releases the value, once.
     */
    @Test
    void handOver_lateCancelThroughMapAndDoOnNext_releasesTheValue() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        LoopSafeMono.of(source, Res.class, Res::release).map(x -> x).doOnNext(x -> { }).log().subscribe(x -> { });
        Res r = new Res(released);
        source.emit(r);
        ((Subscription) source.actual.get()).cancel();
        ((Subscription) source.actual.get()).cancel();
        assertEquals(List.of(r), released, "released once");
    }

    /**
     * Behind a step the hand-over does not know ({@code filter}), a late cancel is taken for a
     * cancel after the value was taken: the value is left to its taker, never released twice.
     */
    @Test
    void handOver_lateCancelThroughAnUnknownStep_leavesTheValueToItsTaker() {
        List<Res> released = new CopyOnWriteArrayList<>();
        Manual source = new Manual();
        List<Res> taken = new CopyOnWriteArrayList<>();
        LoopSafeMono.of(source, Res.class, Res::release).filter(x -> true).subscribe(taken::add);
        Res r = new Res(released);
        source.emit(r);
        ((Subscription) source.actual.get()).cancel();
        assertEquals(List.of(r), taken);
        assertEquals(List.of(), released);
    }

    /** Every pass-through name is a class of the reactor-core on the class path: a rename would show here. */
    @Test
    void passThroughNames_areReactorClasses() throws ClassNotFoundException {
        for (String name : LoopSafeMono.PASS_THROUGH) {
            Class.forName(name, false, Mono.class.getClassLoader());
        }
        Class.forName(LoopSafeMono.LAMBDA_SUBSCRIBER, false, Mono.class.getClassLoader());
    }

    /**
     * Under {@code Hooks.enableAutomaticContextPropagation()} Reactor wraps the subscriber of a
     * non-internal publisher in a context-restoring one: the walk sees through it, through
     * {@code map}, to the lambda subscriber.
     */
    @Test
    void lateCancel_underAutomaticContextPropagation_isRecognisedThroughTheWrapper() {
        Hooks.enableAutomaticContextPropagation();
        try {
            List<Res> released = new CopyOnWriteArrayList<>();
            Manual source = new Manual();
            LoopSafeMono.of(source, Res.class, Res::release).map(x -> x).subscribe(x -> { });
            String wrapper = source.actual.get() instanceof Scannable sc
                    ? sc.scanUnsafe(Scannable.Attr.ACTUAL).getClass().getName() : "";
            assertTrue(wrapper.contains("RestoringThreadLocals"), "no context-restoring wrapper: " + wrapper);
            Res r = new Res(released);
            source.emit(r);
            ((Subscription) source.actual.get()).cancel();
            assertEquals(List.of(r), released);
        } finally {
            Hooks.disableAutomaticContextPropagation();
        }
    }

    /**
     * Once a subscriber that may not drop it took the value, the hand-over forgets it: a
     * subscription kept alive does not keep the resource reachable.
     */
    @Test
    void handOver_afterTheValueIsTaken_doesNotKeepIt() throws InterruptedException {
        Manual source = new Manual();
        LoopSafeMono.of(source, Res.class, Res::release).subscribe(new CoreSubscriber<Res>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(1);
            }

            @Override
            public void onNext(Res res) {
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onComplete() {
            }
        });
        java.lang.ref.WeakReference<Res> ref = emitForgotten(source);
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertEquals(null, ref.get(), "the hand-over still holds the taken value");
        assertTrue(source.actual.get() != null, "the subscription is still held");
    }

    private static java.lang.ref.WeakReference<Res> emitForgotten(Manual source) {
        Res r = new Res(new CopyOnWriteArrayList<>());
        source.emit(r);
        return new java.lang.ref.WeakReference<>(r);
    }
}
