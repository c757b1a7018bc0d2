package io.cqflux.reactor.internal.connection;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.InboundMessage;
import io.cqflux.reactor.internal.op.ReceiveFlux;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.lang.foreign.MemorySegment;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;

/**
 * The one subscriber of a connection's receive side and its demand: hands it a message through
 * its decoder, one unit of demand each, and ends it. Its {@link Receiver} decides what to hand
 * over and when; this class only keeps the subscriber's side of the protocol (a decoder or an
 * {@code onNext} that throws fails the subscriber, and the loop goes on). Confined as its
 * receiver is: the loop thread.
 */
final class ReceiveSubscriber {
    private static final ApiAccess API = ApiAccess.get();

    /** The view a decoder reads, valid only during the call (invalidated after it). */
    private final InboundMessage view = API.newInboundMessage();
    private ReceiveFlux.Inbound<Object> sink;
    private long demand;
    /**
     * A message is being handed over: its decoder or the subscriber's {@code onNext} runs. What
     * they set off on the loop runs inline (a {@code request(n)}; a {@code dispose()}, whose end
     * serves what is kept): a delivery from there would overtake the message being handed over,
     * reuse the decoder's {@link #view} and nest one {@code onNext} in another (Reactive Streams
     * §1.3: signals are serial). So nothing is handed over meanwhile; the loop that called
     * {@link #deliver} (the backlog's, the leftovers') goes on once it returns, and what the end
     * keeps waits for the next serve.
     */
    private boolean delivering;
    /** A failure of the subscriber raised during a hand-over, signalled once it returned ({@link #fail}). */
    private Throwable pendingFailure;
    /** The subscriber {@link #pendingFailure} is for. */
    private ReceiveFlux.Inbound<Object> pendingFor;

    /** {@return whether a message is being handed over now (see {@link #delivering})} */
    boolean delivering() {
        return delivering;
    }

    /** {@return whether a subscriber is attached} */
    boolean attached() {
        return sink != null;
    }

    /** {@return whether {@code s} is the attached subscriber} */
    boolean is(ReceiveFlux.Inbound<?> s) {
        return s == sink;
    }

    /** Attaches {@code s}, with no demand taken yet. */
    @SuppressWarnings("unchecked")
    void attach(ReceiveFlux.Inbound<?> s) {
        sink = (ReceiveFlux.Inbound<Object>) s;
        demand = 0;
    }

    /** Adds what the subscriber asked for, saturating at {@link Long#MAX_VALUE}. */
    void addDemand(long n) {
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
    }

    /** {@return the attached subscriber's outstanding demand, 0 without one} */
    long demand() {
        return sink != null ? demand : 0;
    }

    /** Detaches {@code s} if it is the attached subscriber. */
    void detach(ReceiveFlux.Inbound<?> s) {
        if (s == sink) {
            sink = null;
            demand = 0;
        }
    }

    /** Detaches the subscriber if it cancelled (from any thread): nothing more is handed to it. */
    void detachCancelled() {
        if (sink != null && sink.isCancelled()) {
            detach(sink);
        }
    }

    /**
     * {@return whether a subscriber takes a message now} A subscriber that cancelled from another
     * thread is detached here, before anything more is handed to it: what arrives is kept instead.
     */
    boolean wanted() {
        detachCancelled();
        return sink != null && demand > 0 && !delivering;
    }

    /**
     * Detaches the subscriber and fails it with {@code e}.
     *
     * @return whether there was one
     */
    boolean fail(Throwable e) {
        if (delivering && sink != null) {
            // From inside the hand-over (a request(n) in onNext whose receive post failed): the
            // error follows once onNext returned, never inside it (§1.3), and only to the
            // subscriber it was meant for (that onNext may cancel and subscribe anew).
            if (pendingFailure == null) {
                pendingFailure = e;
                pendingFor = sink;
            } else {
                pendingFailure.addSuppressed(e);
            }
            return true;
        }
        ReceiveFlux.Inbound<Object> s = sink;
        sink = null;
        if (s == null) {
            return false;
        }
        s.error(e);
        return true;
    }

    /** Detaches the subscriber, if any, and ends it ({@link #end(ReceiveFlux.Inbound, Throwable)}). */
    void end(Throwable cause) {
        ReceiveFlux.Inbound<Object> s = sink;
        sink = null;
        if (s != null) {
            end(s, cause);
        }
    }

    /** An orderly close by the peer completes the stream; anything else fails it. */
    static void end(ReceiveFlux.Inbound<?> s, Throwable cause) {
        if (cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.CLOSED) {
            s.complete();
        } else {
            s.error(cause);
        }
    }

    /**
     * Hands one message to the attached subscriber (the caller checked {@link #wanted()}) through
     * its decoder, using up one unit of demand.
     *
     * @param data the message's bytes, or {@link MemorySegment#NULL} for a notification
     */
    void deliver(long length, Opcode opcode, boolean imm, int immediate, MemorySegment data) {
        delivering = true;
        try {
            handOver(length, opcode, imm, immediate, data);
        } finally {
            delivering = false;
            Throwable failed = pendingFailure;
            if (failed != null) {
                ReceiveFlux.Inbound<Object> meant = pendingFor;
                pendingFailure = null;
                pendingFor = null;
                if (sink == meant) {
                    fail(failed);
                } else {
                    // Its subscriber has gone (it cancelled, or its onNext threw and ended it).
                    reactor.core.publisher.Operators.onErrorDropped(failed, meant.currentContext());
                }
            }
        }
    }

    private void handOver(long length, Opcode opcode, boolean imm, int immediate, MemorySegment data) {
        ReceiveFlux.Inbound<Object> s = sink;
        demand = demand == Long.MAX_VALUE ? demand : demand - 1;
        API.set(view, data, length, opcode, imm, immediate);
        Object value;
        try {
            value = s.decoder.apply(view);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            sink = null;
            s.error(t);
            return;
        } finally {
            API.invalidate(view);
        }
        if (value == null) {
            // Reactor's convention for a mapper that returns null (Flux.map): an error, not a
            // silently used-up unit of demand that would stall the stream and the peer's sends.
            sink = null;
            s.error(new NullPointerException("the receive decoder returned null"));
            return;
        }
        try {
            s.next(value);
        } catch (Throwable t) {
            // A subscriber that throws from onNext breaks the protocol (§2.13): it is failed,
            // and the loop goes on.
            Exceptions.throwIfJvmFatal(t);
            if (sink == s) {
                sink = null;
            }
            s.error(Operators.onOperatorError(t, s.currentContext()));
        }
    }
}
