package io.cqflux.reactor;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.function.Function;
import reactor.core.Exceptions;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The receive side of one connection: a pool of registered buffers, posted as receives only for
 * the subscriber's outstanding demand (so received messages can never exceed it), each recycled
 * and reposted right after the decoder has seen its message. Loop-confined.
 *
 * <p>The pool ({@code receiveQueueSize} buffers) is allocated and registered on the first
 * subscription, and freed when the connection closes — after the native connection, because
 * posted receives keep using it until the queue pair is destroyed.
 */
final class Receiver {
    private final ConnectionCore core;
    private final int count;
    private final int bufferSize;
    private final InboundMessage view = new InboundMessage();
    private Arena arena;
    private LocalRegion pool;
    private int[] free;
    private int freeTop;
    private int posted;
    private long demand;
    private FluxSink<Object> sink;
    private Function<? super InboundMessage, ?> decoder;
    private boolean retryScheduled;
    private long dropped;

    Receiver(ConnectionCore core, int count, int bufferSize) {
        this.core = core;
        this.count = count;
        this.bufferSize = bufferSize;
    }

    /** Attaches the single subscriber. Loop thread. */
    @SuppressWarnings("unchecked")
    void attach(FluxSink<?> s, Function<? super InboundMessage, ?> dec) {
        if (!core.isOpen()) {
            s.error(new ConnectionException(ConnectionEvent.CLOSED, "connection " + core.description + " is closed"));
            return;
        }
        if (sink != null) {
            s.error(new IllegalStateException("connection " + core.description
                    + " already has a receiving subscriber; share its Flux instead"));
            return;
        }
        if (count == 0) {
            s.error(new IllegalStateException("connection " + core.description
                    + " has receiveQueueSize 0: no receive can be posted"));
            return;
        }
        if (pool == null) {
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
            free = new int[count];
            for (int i = 0; i < count; i++) {
                free[i] = count - 1 - i;
            }
            freeTop = count;
        }
        sink = (FluxSink<Object>) s;
        decoder = dec;
        demand = 0;
    }

    /** Adds demand and posts receives for it. Loop thread. */
    void request(FluxSink<?> s, long n) {
        if (s != sink) {
            return;
        }
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
        repost();
    }

    /** Detaches the subscriber; posted buffers stay posted until they complete. Loop thread. */
    void detach(FluxSink<?> s) {
        if (s == sink) {
            sink = null;
            decoder = null;
            demand = 0;
        }
    }

    private void repost() {
        while (sink != null && core.isOpen() && posted < demand && freeTop > 0) {
            int index = free[--freeTop];
            boolean ok;
            try {
                ok = core.conn.receive(pool, (long) index * bufferSize, bufferSize,
                        PendingTable.RECEIVE_TAG | index);
            } catch (RuntimeException e) {
                free[freeTop++] = index;
                FluxSink<Object> s = sink;
                sink = null;
                s.error(e);
                return;
            }
            if (!ok) {
                free[freeTop++] = index;
                scheduleRetry();
                return;
            }
            posted++;
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

    /** A receive completed. Loop thread. */
    void onCompletion(Completion c) {
        long ctx = c.context();
        int index = (int) (ctx & (PendingTable.MAX_CAPACITY - 1));
        if (pool == null || index >= count) {
            return;
        }
        posted--;
        FluxSink<Object> s = sink;
        try {
            if (!c.isSuccess()) {
                if (s != null && c.status() != CompletionStatus.WR_FLUSH_ERR) {
                    sink = null;
                    s.error(new OperationFailedException(c.snapshot(), Opcode.RECEIVE, core.description));
                }
                // A flushed receive (connection going down) is reported by the connection's end.
                return;
            }
            if (s == null) {
                dropped++;
                return;
            }
            demand = demand == Long.MAX_VALUE ? demand : demand - 1;
            Opcode opcode = c.opcode();
            boolean imm = c.hasImmediate();
            long len = c.byteLength();
            if (opcode == Opcode.RECEIVE && len > bufferSize) {
                len = bufferSize;
            }
            view.set(pool.segment().asSlice((long) index * bufferSize, bufferSize), len, opcode, imm,
                    imm ? c.immediate() : 0);
            Object value;
            try {
                value = decoder.apply(view);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                sink = null;
                s.error(t);
                return;
            } finally {
                view.invalidate();
            }
            if (value == null) {
                Operators.onNextDropped(c.snapshot(), Context.of(s.contextView()));
            } else {
                s.next(value);
            }
        } finally {
            free[freeTop++] = index;
            repost();
        }
    }

    /**
     * A notification that consumed no receive buffer (see {@link ConnectionCore#onCompletion}):
     * it cannot be held back by demand, so the sink buffers it when the subscriber has none.
     * Loop thread.
     */
    void onNotification(Completion c) {
        FluxSink<Object> s = sink;
        if (s == null) {
            dropped++;
            return;
        }
        if (demand > 0 && demand != Long.MAX_VALUE) {
            demand--;
        }
        boolean imm = c.hasImmediate();
        view.set(MemorySegment.NULL, c.byteLength(), c.opcode(), imm, imm ? c.immediate() : 0);
        Object value;
        try {
            value = decoder.apply(view);
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            sink = null;
            s.error(t);
            return;
        } finally {
            view.invalidate();
        }
        if (value != null) {
            s.next(value);
        }
    }

    /** Ends the subscriber when the connection ends. Loop thread. */
    void terminate(Throwable cause) {
        FluxSink<Object> s = sink;
        sink = null;
        if (s == null) {
            return;
        }
        if (cause instanceof ConnectionException ce && ce.event() == ConnectionEvent.CLOSED) {
            s.complete();
        } else {
            s.error(cause);
        }
    }

    /** Frees the pool, after the native connection is closed. */
    void freePool() {
        if (pool != null) {
            pool.close();
            pool = null;
        }
        if (arena != null) {
            arena.close();
            arena = null;
        }
    }

    long dropped() {
        return dropped;
    }
}
