package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.InboundMessage;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * The Flux of {@link RdmaConnection#receive(Function)}: every signal comes from the connection's
 * loop, straight into the subscriber, with no queue in between.
 *
 * <p>Why not {@code Flux.create}: its sink queues a value when another thread is draining it (a
 * {@code request(n)} from the subscriber's thread drains), so a value the receiver handed over
 * could still sit in that queue when the subscriber cancels, and be discarded there. The receiver
 * then believes it delivered a message nobody got. Here a message is either passed to
 * {@code onNext} on the loop or kept in the receiver's backlog: the receiver checks for a cancel
 * before each delivery.
 *
 * @param <T> the decoded value type
 */
public final class ReceiveFlux<T> extends Flux<T> {
    private final ConnectionCore core;
    private final Function<? super InboundMessage, ? extends T> decoder;

    public ReceiveFlux(ConnectionCore core, Function<? super InboundMessage, ? extends T> decoder) {
        this.core = core;
        this.decoder = decoder;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        Inbound<T> s = new Inbound<>(core, actual, decoder);
        actual.onSubscribe(s);
        // After onSubscribe: demand it asked for there waits in the subscription until attach.
        core.runOnLoop(() -> core.receiver.attach(s));
    }

    /**
     * One subscription to the receive side. Demand and cancel come from any thread; every signal
     * is sent on the loop.
     *
     * @param <T> the decoded value type
     */
    public static final class Inbound<T> implements Subscription {
        private final ConnectionCore core;
        private final CoreSubscriber<? super T> actual;
        public final Function<? super InboundMessage, ? extends T> decoder;
        /** Demand not yet taken by the loop. */
        private final AtomicLong requested = new AtomicLong();
        private volatile boolean cancelled;
        private static final java.lang.invoke.VarHandle CANCELLED;

        static {
            try {
                CANCELLED = java.lang.invoke.MethodHandles.lookup().findVarHandle(Inbound.class, "cancelled",
                        boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
        /** A terminal signal was sent. Loop thread. */
        private boolean done;

        public Inbound(ConnectionCore core, CoreSubscriber<? super T> actual,
                Function<? super InboundMessage, ? extends T> decoder) {
            this.core = core;
            this.actual = actual;
            this.decoder = decoder;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                if (!CANCELLED.compareAndSet(this, false, true)) {
                    return; // §3.6: after a cancel, request is a no-op
                }
                // Reactive Streams §3.9: the subscriber hears of its protocol error, unless its
                // stream already ended (§1.7: nothing after the terminal signal; done is read on
                // the loop, which sends every signal). Always as a later loop task: a request made
                // in onNext runs on the loop, and the error must not land inside that onNext (§1.3).
                core.loop.executeLaterOrAfterTermination(() -> {
                    core.receiver.detach(this);
                    if (!done) {
                        error(Exceptions.nullOrNegativeRequestException(n));
                    }
                });
                return;
            }
            requested.accumulateAndGet(n, (a, b) -> a + b < 0 ? Long.MAX_VALUE : a + b);
            core.runOnLoop(() -> core.receiver.request(this));
        }

        @Override
        public void cancel() {
            cancelled = true;
            core.runOnLoop(() -> core.receiver.detach(this));
        }

        public boolean isCancelled() {
            return cancelled;
        }

        /** {@return the demand asked for since the last call, and forget it} Loop thread. */
        public long takeRequested() {
            return requested.getAndSet(0);
        }

        /** Loop thread: a value for the subscriber (never after a terminal signal). */
        public void next(T value) {
            if (done) {
                Operators.onNextDropped(value, actual.currentContext());
                return;
            }
            actual.onNext(value);
        }

        /** Loop thread. */
        public void complete() {
            if (!done) {
                done = true;
                try {
                    actual.onComplete();
                } catch (Throwable t) {
                    // A subscriber that throws from onComplete breaks the protocol (§2.13); the
                    // loop, and the connection's release, go on.
                    reactor.core.Exceptions.throwIfJvmFatal(t);
                    Operators.onErrorDropped(t, actual.currentContext());
                }
            }
        }

        /** Loop thread. */
        public void error(Throwable t) {
            if (done) {
                Operators.onErrorDropped(t, actual.currentContext());
                return;
            }
            done = true;
            try {
                actual.onError(t);
            } catch (Throwable x) {
                reactor.core.Exceptions.throwIfJvmFatal(x);
                Operators.onErrorDropped(x, actual.currentContext());
            }
        }

        public reactor.util.context.Context currentContext() {
            return actual.currentContext();
        }
    }
}
