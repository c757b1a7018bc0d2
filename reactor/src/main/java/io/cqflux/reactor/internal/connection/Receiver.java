package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.reactor.InboundMessage;
import io.cqflux.reactor.internal.op.ReceiveFlux;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.EnumSet;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;

/**
 * The receive side of one connection. Loop-confined.
 *
 * <p><b>Nothing arrives unseen.</b> A message can only land in a posted receive buffer, and
 * buffers are posted only for the subscriber's outstanding demand (at most the receive queue's
 * depth). A message that lands in a buffer after its subscriber went away (cancelled,
 * {@code next()}, a {@code take(n)} that was satisfied) is kept in that buffer, in arrival order,
 * and handed to the next subscriber before anything else; the buffer is reposted only once its
 * message was delivered. The backlog is therefore bounded by the receive queue's depth, costs no
 * copy, and a re-subscribing receiver loses nothing. A peer's write-with-immediate that consumes
 * no posted receive (libfabric's tcp provider reports {@code fi_writedata}'s remote CQ data that
 * way, with context 0) is kept, when nobody asks for it, in a bounded queue of its own
 * ({@link #notificationLimit}); overflowing it ends the connection with a clear error instead of
 * dropping a notification.
 *
 * <p>The pool ({@code receiveQueueSize} buffers) is allocated and registered on the first
 * subscription and freed when the connection's native objects are gone: posted receives keep
 * using it until the queue pair is destroyed. With {@code receiveQueueSize} 0 there is no pool:
 * a subscriber then gets only the notifications that consume no receive, and where there are
 * none (a write with immediate consumes a receive) it is refused.
 */
public final class Receiver {
    private static final ApiAccess API = ApiAccess.get();


    /** One registered receive buffer: its slot in the pool and, while it waits in the backlog, what it holds. */
    public static final class Buffer {
        public final int index;
        public long length;
        public Opcode opcode;
        public boolean hasImmediate;
        public int immediate;

        public Buffer(int index) {
            this.index = index;
        }
    }

    /** A notification that consumed no buffer, kept until asked for. */
    private record Notification(long length, Opcode opcode, boolean hasImmediate, int immediate) {
    }

    private final ConnectionCore core;
    private final int count;
    private final int bufferSize;
    private final int notificationLimit;
    private final InboundMessage view = API.newInboundMessage();
    /** Completed receives (a {@link Buffer}) and notifications nobody has asked for yet, in arrival order. */
    private final ArrayDeque<Object> backlog = new ArrayDeque<>();
    private int backlogNotifications;
    private Arena arena;
    private LocalRegion pool;
    private Buffer[] buffers;
    private int[] free;
    private int freeTop;
    private int posted;
    private long demand;
    private ReceiveFlux.Inbound<Object> sink;
    private boolean retryScheduled;
    private boolean ended;
    /**
     * What had arrived and was not yet delivered when the connection ended, copied out of the pool
     * (which is freed with the connection): delivered before the stream's terminal signal, to the
     * subscriber of the moment or the next one. Bounded by the receive queue's depth plus the
     * notification backlog.
     */
    private final ArrayDeque<Kept> leftovers = new ArrayDeque<>();
    /** What subscribers get once the leftovers are delivered. */
    private Throwable endCause;
    /** The native connection is gone: nothing more can arrive. */
    private boolean finished;

    /** A message or notification kept past the end of its connection. */
    private record Kept(long length, Opcode opcode, boolean hasImmediate, int immediate, byte[] data) {
    }

    public Receiver(ConnectionCore core, int count, int bufferSize, int notificationLimit) {
        this.core = core;
        this.count = count;
        this.bufferSize = bufferSize;
        this.notificationLimit = notificationLimit;
    }

    /** Attaches the single subscriber, with the demand it asked for so far. Loop thread. */
    @SuppressWarnings("unchecked")
    public void attach(ReceiveFlux.Inbound<?> s) {
        if (s.isCancelled()) {
            return;
        }
        Throwable refusal = core.admission.receiveRefusal();
        if (refusal != null) {
            if (ended && sink == null && (!leftovers.isEmpty() || !finished)) {
                sink = (ReceiveFlux.Inbound<Object>) s;
                demand = 0;
                request(s);
                return;
            }
            endSubscriber(s, ended && endCause != null ? endCause : refusal);
            return;
        }
        if (sink != null) {
            s.error(new IllegalStateException("connection " + core.description
                    + " already has a receiving subscriber; share its Flux instead"));
            return;
        }
        if (count == 0 && core.transport.writeWithImmediateConsumesReceive()) {
            // Nothing can ever arrive. Where a peer's write with immediate consumes no receive
            // (libfabric's tcp provider), its notifications still do, and are kept for this
            // subscriber (the backlog): refusing it would leave them to overflow the backlog.
            s.error(new IllegalStateException("connection " + core.description
                    + " has receiveQueueSize 0: no receive can be posted, so nothing can be received"));
            return;
        }
        if (pool == null && count > 0) {
            try {
                arena = Arena.ofShared();
                MemorySegment mem = arena.allocate((long) count * bufferSize, 64);
                pool = core.transport.register(mem, EnumSet.of(RegionAccess.RECV));
            } catch (RuntimeException e) {
                if (arena != null) {
                    arena.close();
                    arena = null;
                }
                s.error(e);
                return;
            }
            buffers = new Buffer[count];
            free = new int[count];
            for (int i = 0; i < count; i++) {
                buffers[i] = new Buffer(i);
                free[i] = count - 1 - i;
            }
            freeTop = count;
        }
        sink = (ReceiveFlux.Inbound<Object>) s;
        demand = 0;
        request(s);
    }

    /**
     * Takes the demand the subscriber asked for, serves the backlog, and posts receives for the
     * rest. Demand asked for before {@link #attach} stays in the subscription until then. Loop
     * thread.
     */
    public void request(ReceiveFlux.Inbound<?> s) {
        if (s != sink) {
            return;
        }
        long n = s.takeRequested();
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        if (ended) {
            serveLeftovers();
            return;
        }
        serveBacklog();
        repost();
    }

    private void serveLeftovers() {
        while (!leftovers.isEmpty() && wanted()) {
            Kept k = leftovers.poll();
            MemorySegment data = k.data() == null ? MemorySegment.NULL : MemorySegment.ofArray(k.data());
            deliver(k.length(), k.opcode(), k.hasImmediate(), k.immediate(), data);
        }
        if (leftovers.isEmpty() && finished && sink != null) {
            ReceiveFlux.Inbound<Object> s = sink;
            sink = null;
            endSubscriber(s, endCause);
        }
    }

    /** Copies a message (or, with no buffer, a notification) into the leftovers. */
    private void keep(long length, Opcode opcode, boolean imm, int immediate, Buffer b) {
        byte[] data = null;
        if (b != null) {
            long n = opcode == Opcode.RECEIVE ? Math.max(0, Math.min(length, bufferSize)) : 0;
            data = slice(b).asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
        }
        leftovers.add(new Kept(length, opcode, imm, immediate, data));
    }

    /** Detaches the subscriber; posted buffers stay posted and keep what lands in them. Loop thread. */
    public void detach(ReceiveFlux.Inbound<?> s) {
        if (s == sink) {
            sink = null;
            demand = 0;
        }
    }

    /**
     * {@return whether a subscriber takes a message now} A subscriber that cancelled from another
     * thread is detached here, before anything more is handed to it: what arrives is kept instead.
     */
    private boolean wanted() {
        if (sink != null && sink.isCancelled()) {
            detach(sink);
        }
        return sink != null && demand > 0;
    }

    /** {@return the messages and notifications kept for the next subscriber (diagnostics, tests)} */
    public int backlog() {
        return backlog.size();
    }

    private void serveBacklog() {
        while (!backlog.isEmpty() && wanted()) {
            Object o = backlog.poll();
            if (o instanceof Buffer b) {
                deliver(b.length, b.opcode, b.hasImmediate, b.immediate, slice(b));
                recycle(b);
            } else {
                backlogNotifications--;
                Notification m = (Notification) o;
                deliver(m.length(), m.opcode(), m.hasImmediate(), m.immediate(), MemorySegment.NULL);
            }
        }
    }

    private void repost() {
        while (sink != null && !ended && core.canPost() && posted < demand && freeTop > 0) {
            Buffer b = buffers[free[--freeTop]];
            long ctx = core.acquireReceiveContext(b);
            boolean ok;
            try {
                ok = core.conn.receive(pool, (long) b.index * bufferSize, bufferSize, ctx);
            } catch (RuntimeException e) {
                core.releaseReceiveContext(ctx);
                free[freeTop++] = b.index;
                ReceiveFlux.Inbound<Object> s = sink;
                sink = null;
                s.error(e);
                return;
            }
            if (!ok) {
                core.releaseReceiveContext(ctx);
                free[freeTop++] = b.index;
                scheduleRetry();
                return;
            }
            posted++;
            core.receivesPosted(1);
        }
    }

    private void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        retryScheduled = true;
        try {
            core.loop.execute(() -> {
                retryScheduled = false;
                repost();
            });
        } catch (RuntimeException e) {
            retryScheduled = false;
        }
    }

    /**
     * A posted receive completed (its context was already released by the owner). Loop thread.
     *
     * @param c the completion
     * @param b the buffer it landed in
     */
    public void onCompletion(Completion c, Buffer b) {
        posted--;
        if (ended) {
            // Arrived after the connection ended but before its queue pair was destroyed: kept
            // like the backlog (the pool is alive until freePool).
            if (c.isSuccess()) {
                keep(c.byteLength(), c.opcode(), c.hasImmediate(), c.hasImmediate() ? c.immediate() : 0, b);
                serveLeftovers();
            }
            free[freeTop++] = b.index;
            return;
        }
        if (!c.isSuccess()) {
            // A flushed receive means the connection is going down: the owner ends it and the
            // subscriber hears of that end. Any other error is this receive's own, and also ends
            // the connection (an error completion puts the queue pair in the error state,
            // ibv_poll_cq(3)); the buffer is not reposted either way.
            free[freeTop++] = b.index;
            if (c.status() != CompletionStatus.WR_FLUSH_ERR && sink != null) {
                ReceiveFlux.Inbound<Object> s = sink;
                sink = null;
                s.error(new OperationFailedException(c.snapshot(), Opcode.RECEIVE, core.description));
            }
            return;
        }
        Opcode opcode = c.opcode();
        long len = c.byteLength();
        if (opcode == Opcode.RECEIVE && len > bufferSize) {
            len = bufferSize;
        }
        boolean imm = c.hasImmediate();
        int immediate = imm ? c.immediate() : 0;
        if (backlog.isEmpty() && wanted()) {
            deliver(len, opcode, imm, immediate, slice(b));
            recycle(b);
            return;
        }
        // Nobody asks for it now: keep it in its buffer, in order, for the next subscriber.
        b.length = len;
        b.opcode = opcode;
        b.hasImmediate = imm;
        b.immediate = immediate;
        backlog.add(b);
    }

    /**
     * A notification that consumed no receive buffer (see {@link CompletionDispatch#onCompletion}).
     * Loop thread.
     *
     * @param c the completion
     */
    public void onNotification(Completion c) {
        boolean imm = c.hasImmediate();
        int immediate = imm ? c.immediate() : 0;
        if (ended) {
            keep(c.byteLength(), c.opcode(), imm, immediate, null);
            serveLeftovers();
            return;
        }
        if (backlog.isEmpty() && wanted()) {
            deliver(c.byteLength(), c.opcode(), imm, immediate, MemorySegment.NULL);
            return;
        }
        boolean overflow = backlogNotifications >= notificationLimit;
        // Kept in every case, the one past the limit too, in order, before the end copies the
        // backlog out: the overflow ends the connection, it does not drop what arrived.
        backlogNotifications++;
        backlog.add(new Notification(c.byteLength(), c.opcode(), imm, immediate));
        if (overflow) {
            core.endOnReceiveOverflow(notificationLimit);
        }
    }

    private MemorySegment slice(Buffer b) {
        return pool.segment().asSlice((long) b.index * bufferSize, bufferSize);
    }

    private void deliver(long length, Opcode opcode, boolean imm, int immediate, MemorySegment data) {
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

    private void recycle(Buffer b) {
        free[freeTop++] = b.index;
        repost();
    }

    /**
     * Ends the subscriber when the connection ends: what the backlog holds is delivered first, as
     * far as demand allows. Loop thread.
     *
     * @param cause what the subscriber gets: a {@link ConnectionException} {@code CLOSED} by the
     *     peer completes the stream; after a close by this side a {@link ResourceClosedException}
     */
    public void terminate(Throwable cause) {
        serveBacklog();
        ended = true;
        endCause = cause;
        // What nobody asked for yet outlives the pool: copy it out, in order.
        for (Object o : backlog) {
            if (o instanceof Buffer b) {
                keep(b.length, b.opcode, b.hasImmediate, b.immediate, b);
            } else {
                Notification m = (Notification) o;
                keep(m.length(), m.opcode(), m.hasImmediate(), m.immediate(), null);
            }
        }
        backlog.clear();
        backlogNotifications = 0;
        if (sink != null && sink.isCancelled()) {
            detach(sink);
        }
        serveLeftovers();
    }

    /** An orderly close by the peer completes the stream; anything else fails it. */
    private static void endSubscriber(ReceiveFlux.Inbound<?> s, Throwable cause) {
        if (cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.CLOSED) {
            s.complete();
        } else {
            s.error(cause);
        }
    }

    /**
     * Nothing can arrive any more (the native connection is gone, or is abandoned): the stream
     * ends once its leftovers are delivered. Loop thread, or any thread once the loop is gone.
     */
    public void finish() {
        backlog.clear();
        finished = true;
        serveLeftovers();
    }

    /** Frees the pool, after the native connection is closed; then {@link #finish()}. */
    public void freePool() {
        finish();
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }
}
