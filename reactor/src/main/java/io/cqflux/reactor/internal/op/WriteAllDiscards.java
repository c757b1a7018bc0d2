package io.cqflux.reactor.internal.op;

import io.cqflux.reactor.WriteRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.annotation.Nullable;
import reactor.util.context.Context;

/**
 * What of {@link WriteAllFlux}'s requests goes to discard hooks: the requests of the writes that
 * ended without a result once the stream ended ({@link #discardEnded}), and what upstream discards
 * on its own, through the context it sees.
 *
 * <p>That context is downstream's; where it has a discard hook, one that passes what upstream
 * discards on to it, except a request the stream took (the one taken last, or one a slot holds).
 *
 * <p>Reactor's unicast sink can discard a request it delivers: an {@code emitNext} that
 * offered it, then finds the sink cancelled and its drain owned by another thread, discards it
 * ({@code SinkManyUnicast.drain(T)}), though that owner may have polled it and deliver it
 * (before or after that discard). A request delivered before the discard is the stream's, to
 * emit or discard once its write is done; the sink's discard could reach the caller's hook while
 * the NIC still reads the buffer. With one serialized producer it is the last one taken (the
 * producer cannot offer another in between); with several (a merge of sources, a multi-producer
 * sink) it may be one still in flight, which its slot holds. A request an operator in between
 * remade (a {@code map}) is another object, and passes: Reactor asks discard hooks to be
 * idempotent in general.
 *
 * <p><b>Delivered after the discard.</b> The owner can also deliver the request after the
 * producer's discard: it polled it, then the cancel came, then the producer discarded it (not yet
 * taken, so it passed), then the owner hands it on, and {@code onNext}, finding the stream ended,
 * would discard it a second time. The filter therefore remembers each request it lets through after
 * the end ({@link #passedOn}), and one compare-and-set on its entry's {@link Passed#state} decides
 * which side hands such a request to the hook: the filter publishes the entry, then reads
 * {@link #lastTaken}; {@code onNext} stores {@link #lastTaken}, then looks the request up, a full
 * fence between each side's store and its read. At least one side sees the other's store: a filter that
 * sees the request taken withdraws its entry, {@code onNext} that finds it open claims it; the
 * loser of the two compare-and-sets does the discard, and a side that saw nothing of the other does
 * it too (the other then sees it). The entries hold their requests weakly, keyed by identity: one
 * that upstream may still deliver is strongly held by whoever holds it to deliver it, so its entry
 * stays while it matters, and the requests a producer goes on emitting into the cancelled sink
 * (each discarded through this filter, {@code FAIL_CANCELLED}) cost memory until they are
 * collected and a later discard clears their entries; a hook that keeps what it is given keeps
 * them too. Only discards after the end are remembered: the sink's come after the cancel. A
 * second discard of the same object after the end is passed on as every discard is: it is another
 * emission of that object, or Reactor's own second discard of a request it never delivered.
 *
 * <p>What the handshake does not cover, both rare: with several producers the stream may take a
 * later request between an {@code onNext} after the end and a held producer's discard, so the
 * filter no longer sees the first as the last taken, and that request reaches the hook twice; and
 * entries are keyed by identity, so one object emitted again after the cancel while its earlier
 * emission is still being delivered can have its two discards counted as one.
 *
 * <p>An upstream discard that happens only after the cancel (the sink's are) cannot miss a request
 * {@code onNext} took before it saw the stream ended: that {@code onNext} stored
 * {@link #lastTaken} before it read {@code stopped} as false, so before the cancel stored it, so
 * before the filter's read.
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
            MethodHandles.Lookup l = MethodHandles.lookup();
            LAST_TAKEN = l.findVarHandle(WriteAllDiscards.class, "lastTaken", WriteRequest.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CoreSubscriber<?> actual;
    private final WriteAllSlot[] ring;
    private final Context context;
    /**
     * The request upstream delivered last, whose discard by upstream itself the caller's hook
     * does not get. Written by upstream's thread, read by whichever thread upstream discards on,
     * both volatile (through {@link #LAST_TAKEN}): the store must be seen by a discard that comes
     * after the cancel {@code onNext} had not yet seen, and it is one side of the handshake with
     * {@link #passedOn} (the class comment). A volatile store per request, a fence beside the
     * posting of an RDMA write.
     */
    @SuppressWarnings("unused")
    private WriteRequest lastTaken;
    /**
     * The requests upstream discarded after the end that the filter let through (or is letting
     * through) to the hook, weakly and by identity (the class comment); entries whose requests
     * were collected are dropped as the next one is added. Null where the caller set no hook (no
     * filter then).
     */
    @Nullable
    private final ConcurrentHashMap<Passed, Passed> passedOn;
    /** Where the collector queues the entries of {@link #passedOn} whose requests it collected. */
    @Nullable
    private final ReferenceQueue<Object> collected;
    /** Whether the stream ended ({@link WriteAllMain#stopped()}). */
    private final BooleanSupplier ended;

    /**
     * @param actual downstream, whose context (and discard hook) upstream is given
     * @param ring the stream's slots, whose requests upstream's discards must not reach the hook
     * @param ended whether the stream ended
     */
    WriteAllDiscards(CoreSubscriber<?> actual, WriteAllSlot[] ring, BooleanSupplier ended) {
        this.actual = actual;
        this.ring = ring;
        this.ended = ended;
        Context down = actual.currentContext();
        // Only where the caller set a hook: with one in the context, upstream walks what it
        // still holds on a cancel (Operators.onDiscardMultiple: a finite source builds every
        // element it has left), work nobody asked for otherwise.
        boolean hook = down.hasKey(DISCARD_HOOK_KEY);
        this.passedOn = hook ? new ConcurrentHashMap<>() : null;
        this.collected = hook ? new ReferenceQueue<>() : null;
        this.context = hook ? Operators.enableOnDiscard(down, this::upstreamDiscarded) : down;
    }

    /** {@return the context to give upstream} */
    Context context() {
        return context;
    }

    /** Upstream delivered {@code r}. Upstream's thread (serial, §1.3). */
    void taken(WriteRequest r) {
        LAST_TAKEN.setVolatile(this, r);
    }

    /**
     * {@code r}, {@link #taken} already, arrived after the stream ended: it goes to
     * {@link Operators#onDiscard}, unless upstream's own discard of it already went through the
     * filter (or is going through it, and this call claimed that). Upstream's thread.
     */
    void discardTakenAfterEnd(WriteRequest r) {
        ConcurrentHashMap<Passed, Passed> kept = passedOn;
        if (kept != null) {
            // taken(r) stored lastTaken (volatile) before this: the handshake's order, made
            // explicit for the map's own (acquire) read.
            VarHandle.fullFence();
            Passed p = kept.get(new Passed(r, null));
            if (p != null && Passed.STATE.compareAndSet(p, Passed.OPEN, Passed.CLAIMED)) {
                return;
            }
        }
        Operators.onDiscard(r, actual.currentContext());
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
        for (WriteAllSlot slot : ring) {
            // Read after the state the request was published with (onNext writes the request,
            // then the state).
            if (slot.state != WriteAllSlot.EMPTY && slot.request == o) {
                return;
            }
        }
        if (!ended.getAsBoolean()) {
            if (o != LAST_TAKEN.getVolatile(this)) {
                Operators.onDiscard(o, actual.currentContext());
            }
            return;
        }
        // Only the filter calls this, and there is one only with a hook: both are set.
        ConcurrentHashMap<Passed, Passed> kept = passedOn;
        ReferenceQueue<Object> collected = this.collected;
        for (Reference<?> gone; (gone = collected.poll()) != null; ) {
            kept.remove((Passed) gone);
        }
        // Published before lastTaken is read (the fence: the map's insertion may be a plain
        // write under its bin's lock): an onNext that takes o after the end and misses it stored
        // lastTaken before its lookup, so the read below sees o (class comment).
        Passed p = new Passed(o, collected);
        if (kept.putIfAbsent(p, p) != null) {
            // The same object discarded after the end once more: another emission of it (an
            // application may emit one request object again), or Reactor's own second discard
            // of a request it never delivered. Each discard is passed on; Reactor asks hooks to
            // be idempotent, and a hook that counts emissions must see each.
            Operators.onDiscard(o, actual.currentContext());
            return;
        }
        VarHandle.fullFence();
        if (LAST_TAKEN.getVolatile(this) == o && Passed.STATE.compareAndSet(p, Passed.OPEN, Passed.WITHDRAWN)) {
            return; // taken: the stream emits or discards it (onNext did not claim it)
        }
        Operators.onDiscard(o, actual.currentContext());
    }

    /**
     * An entry of {@link #passedOn}: a request upstream discarded after the end, held weakly,
     * equal to another entry for the same request (by identity); a lookup key is one made without
     * a queue.
     */
    private static final class Passed extends WeakReference<Object> {
        static final int OPEN = 0;
        static final int WITHDRAWN = 1;
        static final int CLAIMED = 2;
        static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(Passed.class, "state", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final int hash;
        /**
         * {@link #OPEN} while the filter lets the request through, {@link #WITHDRAWN} once it kept
         * it back (taken), {@link #CLAIMED} once {@code onNext} found it let through; through
         * {@link #STATE}.
         */
        @SuppressWarnings("unused")
        private volatile int state;

        Passed(Object request, @Nullable ReferenceQueue<Object> queue) {
            super(request, queue);
            this.hash = System.identityHashCode(request);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (o == this) {
                return true;
            }
            Object r = get();
            return r != null && o instanceof Passed p && p.get() == r;
        }
    }
}
