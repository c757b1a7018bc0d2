package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.WriteRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * What of {@link WriteAllFlux}'s requests goes to discard hooks: the requests of the writes that
 * ended without a result once the stream ended ({@link #discardEnded}), and what upstream discards
 * on its own, through the context it sees.
 *
 * <p>That context is downstream's; where it has a discard hook, one that passes what upstream
 * discards on to it, except a request the stream took (the one taken last, or one a slot holds).
 *
 * <p>Reactor's unicast sink can discard a request it has delivered: an {@code emitNext} that
 * offered it, then finds the sink cancelled and its drain owned by the thread that already
 * delivered it, discards it ({@code SinkManyUnicast.drain(T)}). That request is
 * the stream's, to emit or discard once its write is done; the sink's discard could reach the
 * caller's hook while the NIC still reads the buffer. With one serialized producer it is the last
 * one taken (the producer cannot offer another in between); with several (a merge of sources, a
 * multi-producer sink) it may be one still in flight, which its slot holds. A request an operator
 * in between remade (a {@code map}) is another object, and passes: Reactor asks discard hooks to
 * be idempotent in general.
 */
final class WriteAllDiscards {
    /**
     * The context key under which Reactor keeps a local discard hook ({@code Hooks.KEY_ON_DISCARD},
     * package-private in reactor-core; {@code WriteAllDiscardHookKeyTest} pins it).
     */
    static final String DISCARD_HOOK_KEY = "reactor.onDiscard.local";

    private static final VarHandle LAST_TAKEN;

    static {
        try {
            LAST_TAKEN = MethodHandles.lookup().findVarHandle(WriteAllDiscards.class, "lastTaken", WriteRequest.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CoreSubscriber<?> actual;
    private final WriteAllSlot[] ring;
    private final Context context;
    /**
     * The request upstream delivered last, whose discard by upstream itself the caller's hook
     * does not get. Written by upstream's thread with a release store (one reference store and
     * its GC barrier per write, as {@code Slot.request} costs), read with an acquire by whichever
     * thread upstream discards on; through {@link #LAST_TAKEN}. A stale read lets that one discard
     * through: a second discard, as before this filter.
     */
    @SuppressWarnings("unused")
    private WriteRequest lastTaken;

    /**
     * @param actual downstream, whose context (and discard hook) upstream is given
     * @param ring the stream's slots, whose requests upstream's discards must not reach the hook
     */
    WriteAllDiscards(CoreSubscriber<?> actual, WriteAllSlot[] ring) {
        this.actual = actual;
        this.ring = ring;
        Context down = actual.currentContext();
        // Only where the caller set a hook: with one in the context, upstream walks what it
        // still holds on a cancel (Operators.onDiscardMultiple: a finite source builds every
        // element it has left), work nobody asked for otherwise.
        this.context = down.hasKey(DISCARD_HOOK_KEY) ? Operators.enableOnDiscard(down, this::upstreamDiscarded) : down;
    }

    /** {@return the context to give upstream} */
    Context context() {
        return context;
    }

    /** Upstream delivered {@code r}. Upstream's thread (serial, §1.3). */
    void taken(WriteRequest r) {
        LAST_TAKEN.setRelease(this, r);
    }

    /**
     * Hands to {@link Operators#onDiscard} the request of every slot whose write ended but whose
     * result will never be emitted: completed and held for lack of demand, failed, or never
     * posted. Never one still pending: its buffers may still be read by the NIC. Each request once
     * (the slot forgets it). The stream's drain loop only, after the end.
     */
    void discardEnded() {
        Context ctx = actual.currentContext();
        for (WriteAllSlot s : ring) {
            int st = s.state;
            if (st == WriteAllSlot.DONE || st == WriteAllSlot.SPENT) {
                WriteRequest r = s.forget();
                if (r != null) {
                    Operators.onDiscard(r, ctx);
                }
            }
        }
    }

    private void upstreamDiscarded(Object o) {
        if (o == LAST_TAKEN.getAcquire(this)) {
            return;
        }
        for (WriteAllSlot slot : ring) {
            // Read after the state the request was published with (onNext writes the request,
            // then the state).
            if (slot.state != WriteAllSlot.EMPTY && slot.request == o) {
                return;
            }
        }
        Operators.onDiscard(o, actual.currentContext());
    }
}
