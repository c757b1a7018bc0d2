package io.cqflux.reactor;

import java.time.Duration;
import java.util.Optional;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoOperator;

/**
 * A Mono whose blocking calls refuse a Reactor {@code NonBlocking} thread (an event loop's)
 * before they subscribe. Reactor's {@code block()} subscribes first and throws after: what the
 * subscription started (a connection, a listener, a lease of the fixed-size pool) would then
 * belong to nobody until the instance is disposed. Operation Monos do the same in
 * {@link OpMono#block()}; this wraps the rest of the public Monos that acquire something. Like
 * any override of {@code block()}, it holds for a {@code block()} of the Mono as returned: one
 * of a chain built on it ({@code connect(...).timeout(...).block()}) is Reactor's again.
 *
 * @param <T> the value
 */
final class LoopSafeMono<T> extends MonoOperator<T, T> {

    private LoopSafeMono(Mono<? extends T> source) {
        super(source);
    }

    /** {@return {@code source} with blocking calls that refuse an event-loop thread before subscribing} */
    static <T> Mono<T> of(Mono<? extends T> source) {
        return onAssembly(new LoopSafeMono<>(source));
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(actual);
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
}
