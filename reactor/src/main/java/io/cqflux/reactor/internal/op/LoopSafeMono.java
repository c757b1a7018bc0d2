package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * A Mono whose blocking calls refuse a Reactor {@code NonBlocking} thread (an event loop's)
 * before they subscribe, and which, given a release, hands its value to exactly one owner: the
 * subscriber that takes it, or the release.
 *
 * <p><b>Blocking.</b> Reactor's {@code block()} subscribes first and throws after: what the
 * subscription started (a connection, a listener, a lease of the fixed-size pool) would then
 * belong to nobody until the instance is disposed. Operation Monos do the same in
 * {@link OpMono#block()}; this wraps the rest of the public Monos that acquire something. Like
 * any override of {@code block()}, it holds for a {@code block()} of the Mono as returned: one
 * of a chain built on it ({@code connect(...).timeout(...).block()}) is Reactor's again.
 *
 * <p><b>Hand-over.</b> A value that reaches a subscriber which has just cancelled is dropped by
 * it ({@code Operators.onNextDropped}), not discarded, so no {@code doOnDiscard} upstream sees
 * it; a global {@code Hooks.onNextDropped} would, but it is the application's to set and reset,
 * and it would run for every drop of the application's own. Instead the hand-over decides here,
 * with one atomic state, between the value and a cancel:
 * <ul>
 *   <li>a cancel before the value: the value is released when it comes;</li>
 *   <li>a cancel from another thread while the value is being delivered: the subscriber's own
 *       choice between its value and its cancel (Reactor's subscribers make it with one atomic
 *       swap and forward the cancel upstream only when the cancel won) went to the cancel, so the
 *       value was dropped: it is released once the delivery returns;</li>
 *   <li>a cancel on the delivering thread, during the delivery ({@code block()},
 *       {@code take(1)}: they cancel once they hold the value), or any cancel after it: the
 *       subscriber took the value, which is then its own; except that Reactor's lambda
 *       subscriber ({@code subscribe(Consumer)}, {@link #LAMBDA_SUBSCRIBER}) forwards a cancel
 *       only when its cancel won that swap, so a cancel from it that arrives after the delivery
 *       (its thread was descheduled between the swap and the forward) also means the value was
 *       dropped, and releases it. The same holds when only steps that pass the value and the
 *       cancel straight through stand between this and the lambda subscriber
 *       ({@link #PASS_THROUGH}: {@code map}, {@code doOnNext} and the other peeks, {@code log()},
 *       and the context-restoring wrappers that {@code Hooks.enableAutomaticContextPropagation()}
 *       puts around subscribers); behind any other step a late cancel is taken for a cancel after
 *       the value was taken, and a value dropped there stays open until its owner is disposed.
 *       A pass-through step that keeps the value for itself (a {@code doOnNext} that stores it)
 *       does not make it taken: when the cancel won, the value is released;</li>
 *   <li>a value dropped by an operator upstream (the connect timeout racing the connection):
 *       the subscriber context carries a local drop hook (Reactor's
 *       {@link #DROP_HOOK_KEY}) that releases values of the released type and passes any other
 *       on to the hook that was there before, or to Reactor's global one.</li>
 * </ul>
 *
 * @param <T> the value
 */
public final class LoopSafeMono<T> extends MonoOperator<T, T> {

    /**
     * The context key under which Reactor looks for a local {@code onNextDropped} hook before its
     * global one ({@code Hooks.KEY_ON_NEXT_DROPPED}, package-private in reactor-core;
     * {@code LoopSafeMonoTest} pins it).
     */
    public static final String DROP_HOOK_KEY = "reactor.onNextDropped.local";

    /**
     * The class of Reactor's subscriber behind {@code Mono.subscribe(Consumer...)}, which decides
     * between its value and its cancel with one swap and forwards a cancel only when the cancel
     * won it ({@code LoopSafeMonoTest} pins the name and the behaviour).
     */
    public static final String LAMBDA_SUBSCRIBER = "reactor.core.publisher.LambdaMonoSubscriber";

    /**
     * Reactor's subscribers that may stand between this and a {@link #LAMBDA_SUBSCRIBER} without
     * changing what a late cancel means: each hands every value on to its own subscriber (mapped
     * or not) and forwards every cancel at once, without a choice of its own between them. Any
     * class not named here ends the walk with "not a drop": an unknown step may have taken the
     * value ({@code LoopSafeMonoTest} pins that the names exist).
     */
    public static final Set<String> PASS_THROUGH = Set.of(
            "reactor.core.publisher.FluxMap$MapSubscriber",
            "reactor.core.publisher.FluxMap$MapConditionalSubscriber",
            "reactor.core.publisher.FluxMapFuseable$MapFuseableSubscriber",
            "reactor.core.publisher.FluxMapFuseable$MapFuseableConditionalSubscriber",
            "reactor.core.publisher.FluxPeek$PeekSubscriber",
            "reactor.core.publisher.FluxPeekFuseable$PeekFuseableSubscriber",
            "reactor.core.publisher.FluxPeekFuseable$PeekConditionalSubscriber",
            "reactor.core.publisher.FluxPeekFuseable$PeekFuseableConditionalSubscriber",
            "reactor.core.publisher.FluxContextWriteRestoringThreadLocals$ContextWriteRestoringThreadLocalsSubscriber",
            "reactor.core.publisher.FluxContextWriteRestoringThreadLocalsFuseable"
                    + "$FuseableContextWriteRestoringThreadLocalsSubscriber",
            "reactor.core.publisher.MonoContextWriteRestoringThreadLocals$ContextWriteRestoringThreadLocalsSubscriber");

    /** How many pass-through steps the walk follows before it gives up (a "not a drop"). */
    private static final int MAX_STEPS = 32;

    private final Class<T> type;
    private final Consumer<? super T> release;

    private LoopSafeMono(Mono<? extends T> source, Class<T> type, Consumer<? super T> release) {
        super(source);
        this.type = type;
        this.release = release;
    }

    /** {@return {@code source} with blocking calls that refuse an event-loop thread before subscribing} */
    public static <T> Mono<T> of(Mono<? extends T> source) {
        return onAssembly(new LoopSafeMono<>(source, null, null));
    }

    /**
     * {@return {@code source} with blocking calls that refuse an event-loop thread before
     * subscribing, whose value goes to {@code release} when no subscriber takes it}
     *
     * @param source the Mono of a resource
     * @param type the resource's class, to recognise it among dropped values
     * @param release what frees a resource nobody took; idempotent, safe on any thread
     */
    public static <T> Mono<T> of(Mono<? extends T> source, Class<T> type, Consumer<? super T> release) {
        return onAssembly(new LoopSafeMono<>(source, Objects.requireNonNull(type, "type"),
                Objects.requireNonNull(release, "release")));
    }

    /**
     * {@return a cold Mono that runs {@code action} on the connection's loop and completes there,
     * or fails with what it threw} A {@code block()} on an event-loop thread refuses before
     * subscribing, so the action never runs for a caller that gets the refusal.
     *
     * @param core the connection whose loop runs it
     * @param action what to run there
     */
    public static Mono<Void> onLoop(ConnectionCore core, Runnable action) {
        return of(Mono.create(sink -> core.runOnLoop(() -> {
            try {
                action.run();
                sink.success();
            } catch (RuntimeException e) {
                sink.error(e);
            }
        })));
    }

    /**
     * {@return whether a cancel that reaches this from {@code actual} after the value was
     * delivered means the value was dropped}: the subscriber chain below, followed through
     * {@link Scannable.Attr#ACTUAL}, holds only {@link #PASS_THROUGH} steps and ends in a
     * {@link #LAMBDA_SUBSCRIBER}.
     */
    static boolean lateCancelMeansDropped(CoreSubscriber<?> actual) {
        Scannable s = Scannable.from(actual);
        for (int i = 0; i < MAX_STEPS && s.isScanAvailable(); i++) {
            String name = s.getClass().getName();
            if (LAMBDA_SUBSCRIBER.equals(name)) {
                return true;
            }
            if (!PASS_THROUGH.contains(name)) {
                return false;
            }
            s = Scannable.from(s.scanUnsafe(Scannable.Attr.ACTUAL));
        }
        return false;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(release == null ? actual : new HandOver<>(actual, type, release));
    }

    @Override
    public T block() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.block();
    }

    @Override
    public T block(Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.block(timeout);
    }

    @Override
    public Optional<T> blockOptional() {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional();
    }

    @Override
    public Optional<T> blockOptional(Duration timeout) {
        SpinThenParkSubscriber.refuseNonBlockingThread();
        return super.blockOptional(timeout);
    }

    /**
     * One subscription's hand-over. States: OPEN, then either CANCELLED (cancel first) or
     * DELIVERING (value first); DELIVERING ends in TAKEN, or in DROPPED when a cancel came from
     * another thread during it; TAKEN ends in DROPPED on a late cancel from Reactor's lambda
     * subscriber (directly or through pass-through steps). The value is released on
     * CANCELLED-then-value and on DROPPED, by the delivering thread or (TAKEN to DROPPED) by the
     * cancelling one: each a single transition, so once. The field {@link #value} is cleared as
     * soon as it can no longer be released (TAKEN with no late cancel that could drop it, or
     * released), so a kept subscription does not keep the resource reachable.
     */
    public static final class HandOver<T> implements CoreSubscriber<T>, Subscription, Scannable {
        private static final int OPEN = 0;
        private static final int CANCELLED = 1;
        private static final int DELIVERING = 2;
        private static final int TAKEN = 3;
        private static final int DROPPED = 4;
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(HandOver.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final CoreSubscriber<? super T> actual;
        private final Class<T> type;
        private final Consumer<? super T> release;
        private final Context context;
        /** Whether {@link #actual} forwards a cancel only when it did not take the value. */
        private final boolean lateCancelMeansDropped;
        private Subscription upstream;
        /**
         * The value, from its delivery until it is released or can no longer be: a late cancel
         * releases it when {@link #lateCancelMeansDropped}.
         */
        private volatile T value;
        private volatile int state;
        /** Written before the move to DELIVERING, read by a cancel that saw DELIVERING. */
        private volatile Thread deliverer;

        public HandOver(CoreSubscriber<? super T> actual, Class<T> type, Consumer<? super T> release) {
            this.actual = actual;
            this.type = type;
            this.release = release;
            this.lateCancelMeansDropped = LoopSafeMono.lateCancelMeansDropped(actual);
            Context outer = actual.currentContext();
            Consumer<Object> before = outer.getOrDefault(DROP_HOOK_KEY, null);
            this.context = outer.put(DROP_HOOK_KEY, (Consumer<Object>) dropped -> {
                if (type.isInstance(dropped)) {
                    release.accept(type.cast(dropped));
                } else if (before != null) {
                    before.accept(dropped);
                } else {
                    Operators.onNextDropped(dropped, Context.empty());
                }
            });
        }

        @Override
        public Context currentContext() {
            return context;
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                actual.onSubscribe(this);
            }
        }

        @Override
        public void onNext(T t) {
            deliverer = Thread.currentThread();
            value = t;
            if (!STATE.compareAndSet(this, OPEN, DELIVERING)) {
                value = null;
                release.accept(t);
                return;
            }
            try {
                actual.onNext(t);
            } finally {
                if (!STATE.compareAndSet(this, DELIVERING, TAKEN)) {
                    value = null;
                    release.accept(t);
                } else if (!lateCancelMeansDropped) {
                    value = null;
                }
            }
        }

        @Override
        public void onError(Throwable t) {
            actual.onError(t);
        }

        @Override
        public void onComplete() {
            actual.onComplete();
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            for (;;) {
                int s = state;
                if (s == OPEN) {
                    if (STATE.compareAndSet(this, OPEN, CANCELLED)) {
                        break;
                    }
                } else if (s == DELIVERING && deliverer != Thread.currentThread()) {
                    if (STATE.compareAndSet(this, DELIVERING, DROPPED)) {
                        break;
                    }
                } else if (s == TAKEN && lateCancelMeansDropped) {
                    if (STATE.compareAndSet(this, TAKEN, DROPPED)) {
                        T dropped = value;
                        value = null;
                        release.accept(dropped);
                        break;
                    }
                } else {
                    break;
                }
            }
            upstream.cancel();
        }

        @Override
        public Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return upstream;
            }
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.CANCELLED) {
                int s = state;
                return s == CANCELLED || s == DROPPED;
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.SYNC;
            }
            return null;
        }
    }
}
