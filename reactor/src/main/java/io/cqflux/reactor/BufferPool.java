package io.cqflux.reactor;

import io.cqflux.core.QueueFullException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.internal.op.LoopSafeMono;
import io.cqflux.reactor.internal.op.OpMono;
import io.cqflux.reactor.internal.op.StagedMono;
import io.cqflux.reactor.internal.resources.LeaseTaker;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: a fixed set of registered staging buffers per Cqflux.
 *
 * One region (registered on first use: an instance that never stages data registers nothing) is
 * cut into `buffers` slots of `bufferSize` bytes, each starting on a 64-byte boundary. The set
 * never grows. A taker (a subscriber of acquire(), or an operation of the byte[]/ByteBuffer
 * forms) gets a free slot at once or waits in a FIFO queue of at most `maxWaiters`; beyond that
 * it fails with QueueFullException. There is no timeout of the pool's own: the caller's applies,
 * and cancelling a wait leaves the queue.
 *
 * A staged operation checks its arguments before it asks for a buffer, against the region as it
 * will be registered (describedRegion: its size and access, registered nowhere), so that one the
 * check refuses registers nothing either; the operation that gets a lease is checked again, by
 * OpMono, against the registered region.
 *
 * A slot comes back only from its lease: BufferLease.release() (a lease nobody handed on), or
 * BufferLease.releaseFromOperation(), which OpMono.releaseRegions calls, the one place where an
 * operation's local references are released once the operation is terminal at the NIC (its
 * completion arrived, or the queue pair was destroyed). A cancelled subscriber never gives a slot
 * back: the NIC may still read or write it.
 *
 * A returned slot goes to the oldest waiter. Grants run outside the lock, on the returning thread
 * (often an event loop: a grant copies the waiter's data and enqueues its operation), through a
 * work-in-progress counter, so that a grant which at once returns a slot (its operation failed
 * before posting) never recurses.
 *
 * close() (Cqflux's dispose) refuses new takers, fails the waiting ones with
 * ResourceClosedException and closes the region, which deregisters once the last operation using
 * it is released (Region's rule); only then is the memory freed. A taker the grant took out of the
 * queue just before the close is still offered its lease, with the region the grant gave it under
 * the lock: its operation then fails with ResourceClosedException on the closed region (or, the
 * memory being freed already, on the copy), and the lease comes back.
 */

/**
 * A fixed set of registered staging buffers, one per {@link Cqflux} ({@link Cqflux#buffers()}),
 * sized by {@link Cqflux.Builder#bufferPool(int, int)}. The {@code byte[]} and {@code ByteBuffer}
 * forms of {@link RdmaConnection}'s operations copy through it; {@link #acquire()} leases a buffer
 * to fill in place and hand to an operation.
 *
 * <p><b>Lifetime of a buffer.</b> A buffer used by an operation comes back to the pool when the
 * operation terminates at the NIC (its completion arrived, or the connection's native objects were
 * destroyed after its end), never when the operation's subscriber cancels: the NIC may still be
 * reading it. So a cancelled operation holds its buffer ({@link #leased()}) until then.
 *
 * <p><b>Waiting.</b> When every buffer is leased, takers wait in FIFO order, at most
 * {@link #maxWaiters()}; one more fails with {@link QueueFullException}. There is no timeout of the
 * pool's own: put one on the Mono ({@code timeout(...)}); cancelling leaves the queue.
 *
 * <p><b>Thread safety and lifetime.</b> Thread-safe. The memory is allocated and registered on the
 * first lease. Disposing the {@link Cqflux} closes the pool: waiting and new takers fail with
 * {@link ResourceClosedException}, and the memory is deregistered and freed once no operation uses
 * it any more.
 */
public final class BufferPool {
    private static final Logger LOG = Loggers.getLogger(BufferPool.class);

    /** The default number of buffers of {@link Cqflux.Builder#bufferPool(int, int)}: 64. */
    public static final int DEFAULT_BUFFERS = 64;
    /** The default buffer size of {@link Cqflux.Builder#bufferPool(int, int)}: 64 KiB. */
    public static final int DEFAULT_BUFFER_SIZE = 64 * 1024;
    /** The default of {@link #maxWaiters()}: 4096. */
    public static final int DEFAULT_MAX_WAITERS = 4096;
    /** The most buffers a pool may have: 65,536. */
    public static final int MAX_BUFFERS = 1 << 16;
    /** The largest buffer size: 1 GiB. */
    public static final int MAX_BUFFER_SIZE = 1 << 30;
    /** The most bytes a pool may register in all: 16 GiB. */
    public static final long MAX_POOL_BYTES = 1L << 34;
    /** The most waiters a pool may queue: 1,048,576. */
    public static final int MAX_WAITERS = 1 << 20;

    /** Slots start on this boundary (a cache line). */
    private static final int ALIGNMENT = 64;

    /** What {@link #region()} registers the memory for. */
    private static final RegionAccess[] ACCESS = {RegionAccess.WRITE_SRC, RegionAccess.READ_DST, RegionAccess.SEND};

    private final Cqflux owner;
    /** The region {@link #region()} registers, described and not registered ({@link #describedRegion()}). */
    private final Region described;
    private final int buffers;
    private final int bufferSize;
    private final long stride;
    private final int maxWaiters;
    private final Object lock = new Object();
    /** Free slots, a stack; guarded by {@link #lock}. */
    private final int[] free;
    private int freeTop;
    private final ArrayDeque<LeaseTaker> waiting = new ArrayDeque<>();
    private boolean closed;
    private Region region;
    private MemorySegment memory;
    private volatile int leasedMirror;
    private volatile int waitingMirror;
    private final AtomicInteger wip = new AtomicInteger();

    BufferPool(Cqflux owner, Transport transport, int buffers, int bufferSize, int maxWaiters) {
        checkConfig(buffers, bufferSize, maxWaiters);
        this.owner = owner;
        this.buffers = buffers;
        this.bufferSize = bufferSize;
        this.stride = (bufferSize + ALIGNMENT - 1L) & -ALIGNMENT;
        this.described = new Region(new Unregistered(stride * buffers, Set.of(ACCESS)), transport);
        this.maxWaiters = maxWaiters;
        this.free = new int[buffers];
        for (int i = 0; i < buffers; i++) {
            free[i] = buffers - 1 - i;
        }
        this.freeTop = buffers;
    }

    /**
     * Checks a pool configuration.
     *
     * @throws IllegalArgumentException naming the value and its bound
     */
    static void checkConfig(int buffers, int bufferSize, int maxWaiters) {
        Checks.inRange("buffer pool buffers", buffers, 1, MAX_BUFFERS);
        Checks.inRange("buffer pool bufferSize", bufferSize, 1, MAX_BUFFER_SIZE);
        long total = (long) buffers * ((bufferSize + ALIGNMENT - 1L) & -ALIGNMENT);
        if (total > MAX_POOL_BYTES) {
            throw new IllegalArgumentException("buffer pool of " + buffers + " buffers of " + bufferSize + " bytes needs "
                    + total + " bytes, above the limit " + MAX_POOL_BYTES);
        }
        Checks.inRange("buffer pool maxWaiters", maxWaiters, 0, MAX_WAITERS);
    }

    /** {@return the number of buffers; fixed} */
    public int size() {
        return buffers;
    }

    /** {@return the size of each buffer in bytes: the most one {@code byte[]}/{@code ByteBuffer} operation carries} */
    public int bufferSize() {
        return bufferSize;
    }

    /**
     * {@return the buffers leased right now: held by a taker of {@link #acquire()} or by an
     * operation not yet terminal at the NIC (cancelled ones included); for metrics, any thread}
     */
    public int leased() {
        return leasedMirror;
    }

    /** {@return the takers waiting right now for a buffer; for metrics, any thread} */
    public int waiters() {
        return waitingMirror;
    }

    /** {@return the most takers that may wait; one more fails with {@link QueueFullException}} */
    public int maxWaiters() {
        return maxWaiters;
    }

    /** {@return whether the pool is closed (its {@link Cqflux} is disposed)} */
    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /**
     * Leases one buffer. The lease is requested on the subscriber's first demand and delivered as
     * soon as a buffer is free, in FIFO order with every other taker (on the thread that gave a
     * buffer back, often an event loop: move heavy work off it). Cancelling before delivery leaves
     * the queue. Hand the lease to an operation
     * ({@link RdmaConnection#write(PeerRegion, long, BufferLease, int)} and its siblings) or
     * {@link BufferLease#release()} it.
     *
     * @return a cold Mono of one lease; it fails with {@link QueueFullException} when
     *     {@link #maxWaiters()} takers already wait, and with {@link ResourceClosedException} when
     *     the pool is closed
     */
    public Mono<BufferLease> acquire() {
        // A lease that reaches a subscriber which has just cancelled (a timeout on acquire()) goes
        // back to the pool instead of shrinking it for good (LoopSafeMono's hand-over).
        return LoopSafeMono.of(new AcquireMono(this), BufferLease.class, BufferLease::release);
    }

    @Override
    public String toString() {
        return "BufferPool[" + buffers + " x " + bufferSize + " bytes, " + leased() + " leased, " + waiters()
                + " waiting" + (isClosed() ? ", closed" : "") + "]";
    }

    // ---------------------------------------------------------------- internals

    /**
     * {@return the pool's region, registered now if this is its first use}
     *
     * @throws ResourceClosedException when the pool is closed
     */
    Region region() {
        synchronized (lock) {
            if (closed) {
                throw closedError();
            }
            if (region == null) {
                Arena arena = Arena.ofShared();
                try {
                    MemorySegment m = arena.allocate(stride * buffers, 4096);
                    Region r = owner.register(m, ACCESS);
                    // Freed only once deregistered: no operation, and so no NIC, can touch it then.
                    r.onClose().subscribe(null, e -> arena.close(), arena::close);
                    memory = m;
                    region = r;
                } catch (RuntimeException | Error e) {
                    arena.close();
                    throw e;
                }
            }
            return region;
        }
    }

    /**
     * {@return the pool's region as {@link #region()} registers it (its size, its access, this
     * instance's transport), registered nowhere: what a staged operation's argument check runs
     * against before it asks for a buffer ({@link StagedMono}), so that an operation the check
     * refuses costs no registered memory}
     *
     * @throws ResourceClosedException when the pool is closed, as {@link #region()} does
     */
    Region describedRegion() {
        synchronized (lock) {
            if (closed) {
                throw closedError();
            }
        }
        return described;
    }

    /**
     * The pool's memory before its registration, as an argument check sees a local region: its
     * size and access. It is never posted, exposed or closed; what only a registration has (its
     * memory, its descriptors) it does not have.
     *
     * @param size the bytes {@link #region()} registers
     * @param access what it registers them for
     */
    private record Unregistered(long size, Set<RegionAccess> access) implements LocalRegion {
        @Override
        public MemorySegment segment() {
            return MemorySegment.NULL; // the checks ask only whether its scope is alive: the global one is
        }

        @Override
        public byte[] descriptor() {
            throw new IllegalStateException("the buffer pool's region is not registered");
        }

        @Override
        public byte[] rawDescriptor() {
            throw new IllegalStateException("the buffer pool's region is not registered");
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
            // nothing registered, nothing to release
        }
    }

    long offsetOf(int slot) {
        return slot * stride;
    }

    /**
     * Queues a taker; it is offered a lease when one is free and it is first in line, or refused.
     *
     * @param t the taker
     */
    void request(LeaseTaker t) {
        Throwable refusal = null;
        synchronized (lock) {
            if (closed) {
                refusal = closedError();
            } else if (waiting.size() >= maxWaiters && (freeTop == 0 || !waiting.isEmpty())) {
                refusal = new QueueFullException("buffer pool of " + owner + ": all " + buffers + " buffers are leased"
                        + " and " + waiting.size() + " takers already wait (maxWaiters " + maxWaiters + "); apply"
                        + " backpressure or raise Cqflux.Builder.bufferPool", maxWaiters);
            } else {
                waiting.add(t);
                waitingMirror = waiting.size();
            }
        }
        if (refusal != null) {
            t.refused(refusal);
            return;
        }
        try {
            region();
        } catch (RuntimeException e) {
            if (withdraw(t)) {
                t.refused(e);
            }
            return;
        }
        drain();
    }

    /**
     * Takes a taker out of the queue (its subscriber cancelled).
     *
     * @return whether it was still waiting
     */
    boolean withdraw(LeaseTaker t) {
        synchronized (lock) {
            boolean removed = waiting.remove(t);
            waitingMirror = waiting.size();
            return removed;
        }
    }

    /** A lease's slot comes back (once per lease). */
    void giveBack(int slot) {
        synchronized (lock) {
            free[freeTop++] = slot;
            leasedMirror = buffers - freeTop;
        }
        drain();
    }

    /** Grants free slots to waiters, oldest first, on one thread at a time (see the design comment). */
    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        for (;;) {
            for (;;) {
                LeaseTaker t;
                int slot;
                MemorySegment m;
                Region r;
                synchronized (lock) {
                    if (waiting.isEmpty() || freeTop == 0 || memory == null) {
                        break;
                    }
                    t = waiting.poll();
                    slot = free[--freeTop];
                    leasedMirror = buffers - freeTop;
                    waitingMirror = waiting.size();
                    m = memory;
                    // The region goes with the lease, taken while the pool is open: a close() that
                    // runs before the taker is offered the lease (it no longer sees the taker) then
                    // makes the taker's operation fail on the closed region, never on the pool.
                    r = region;
                }
                BufferLease lease = new BufferLease(this, slot, m.asSlice(offsetOf(slot), bufferSize), r);
                boolean taken;
                try {
                    taken = t.take(lease);
                } catch (Throwable e) {
                    Exceptions.throwIfJvmFatal(e);
                    LOG.warn(this + ": a taker threw on its lease", e);
                    taken = false;
                }
                if (!taken) {
                    lease.release();
                }
            }
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    /**
     * Refuses new takers, fails the waiting ones and closes the region (deregistered, and its
     * memory freed, once no operation uses it). Idempotent.
     */
    void close() {
        List<LeaseTaker> refused;
        Region r;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            refused = new ArrayList<>(waiting);
            waiting.clear();
            waitingMirror = 0;
            r = region;
        }
        ResourceClosedException e = closedError();
        for (LeaseTaker t : refused) {
            t.refused(e);
        }
        if (r != null) {
            r.close();
        }
    }

    ResourceClosedException closedError() {
        return new ResourceClosedException("buffer pool of " + owner + " is closed");
    }

    /** The Mono of {@link #acquire()}. */
    private static final class AcquireMono extends Mono<BufferLease> {
        private final BufferPool pool;

        AcquireMono(BufferPool pool) {
            this.pool = pool;
        }

        @Override
        public void subscribe(CoreSubscriber<? super BufferLease> actual) {
            actual.onSubscribe(new Acquire(pool, actual));
        }
    }

    /** One subscription of {@link #acquire()}: requested on first demand, delivered once. */
    private static final class Acquire implements Subscription, LeaseTaker {
        private static final int NEW = 0;
        private static final int WAITING = 1;
        private static final int DONE = 2;

        private final BufferPool pool;
        private final CoreSubscriber<? super BufferLease> actual;
        private final AtomicInteger state = new AtomicInteger(NEW);

        Acquire(BufferPool pool, CoreSubscriber<? super BufferLease> actual) {
            this.pool = pool;
            this.actual = actual;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                int was = state.getAndSet(DONE);
                if (was == WAITING) {
                    pool.withdraw(this);
                }
                if (was != DONE) { // after the lease, a cancel or an earlier error: a no-op (§3.6)
                    actual.onError(Exceptions.nullOrNegativeRequestException(n));
                }
                return;
            }
            if (state.compareAndSet(NEW, WAITING)) {
                pool.request(this);
            }
        }

        @Override
        public void cancel() {
            if (state.getAndSet(DONE) == WAITING) {
                pool.withdraw(this);
            }
        }

        @Override
        public boolean take(BufferLease lease) {
            if (!state.compareAndSet(WAITING, DONE)) {
                return false;
            }
            actual.onNext(lease);
            actual.onComplete();
            return true;
        }

        @Override
        public void refused(Throwable error) {
            if (state.compareAndSet(WAITING, DONE)) {
                actual.onError(error);
            } else {
                Operators.onErrorDropped(error, actual.currentContext());
            }
        }
    }
}
