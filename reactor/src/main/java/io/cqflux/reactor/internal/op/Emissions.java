package io.cqflux.reactor.internal.op;

import java.util.function.Supplier;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.util.context.Context;

/**
 * The one guard around the library's emissions on its hot sinks (a connection's {@code events()}
 * and {@code completions()}, a server's {@code connections()}, a peer pool's {@code events()}, a
 * region's {@code onClose()}).
 *
 * <p>Reactor's sinks let a subscriber's throw from {@code onNext} or {@code onComplete} out of
 * {@code tryEmit*}: a raw {@link org.reactivestreams.Subscriber} that breaks Reactive Streams
 * §2.13 (Reactor's own subscribers catch it). Let out, it would cut short whatever the library was
 * doing around the emission: a connection's end (failing what is pending, ending the receiver),
 * its release, a server's, a pool's event drain. It is dropped through Reactor's hook instead,
 * as {@link ReceiveFlux} does for the receiver.
 */
public final class Emissions {
    private Emissions() {
    }

    /**
     * Runs an emission; a subscriber's throw goes to {@link Operators#onErrorDropped}, a fatal one
     * ({@link Exceptions#throwIfJvmFatal}) is rethrown.
     *
     * @param emission a {@code tryEmit*} on a hot sink
     * @return its result; {@link Sinks.EmitResult#OK} when a subscriber threw, which it did on
     *     being handed the signal
     */
    public static Sinks.EmitResult guarded(Supplier<Sinks.EmitResult> emission) {
        try {
            return emission.get();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            Operators.onErrorDropped(t, Context.empty());
            return Sinks.EmitResult.OK;
        }
    }
}
