package io.cqflux.reactor.internal.connection;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import reactor.util.Logger;
import reactor.util.Loggers;

/*
 * Design: one receive buffer pool for all of a server's connections to cqflux peers.
 *
 * Why. A connection that receives used to register its own pool of receiveQueueSize buffers
 * (receiveQueueSize x receiveBufferSize bytes) and post as many receives as its subscriber asked for, up to that depth,
 * whether or not its peer ever sent anything. A server with thousands of mostly idle clients paid
 * that for each of them. Here the server registers one pool, for local receive access only
 * (nothing of it is reachable remotely), and every connection takes its receive buffers from it.
 * A connection posts at most its window: INITIAL_WINDOW receives to start with,
 * one more for each message that arrives while the pool is above its low-water mark, one fewer
 * for each message that arrives while it is below it (never under INITIAL_WINDOW), never more
 * than receiveQueueSize, and never more than its subscriber's demand (as before). A busy
 * connection so grows to its full depth within receiveQueueSize messages (one more receive per
 * message received doubles its window each round trip), and an idle one pins its window, not
 * its depth. The server asks for it (AcceptOptions.withSharedReceivePool): with it request(n)
 * posts at most the window, not n, which the reactive contract holds a default server to (a
 * client's burst right after request(n) would start with INITIAL_WINDOW in flight).
 *
 * Who takes part: connections whose peer speaks the credit protocol. A peer with raw private data
 * (a client not written with cqflux, a foreign librpma peer) sends whenever it likes, so its
 * connection keeps a pool of its own and its prefetch, as without the shared pool (Receiver.share
 * refuses it); so does every client-side connection.
 *
 * What must hold: the credit protocol stays exact (PeerControl's design comment). A connection
 * grants its peer exactly the receives it posted on its own queue pair or endpoint, as before;
 * the pool only decides which buffer a receive uses and whether one is posted at all. So no send
 * is ever posted without a receive waiting for it, no message can be dropped, and the
 * hostile-peer checks (receivedBeyondGrant, violation) see the same counts as with a pool of the
 * connection's own. A posted receive cannot be taken back (verbs has no such call, and a granted
 * credit cannot be withdrawn: counts only grow), so a connection that goes idle after a burst
 * keeps its window posted until its next messages shrink it; what an idle connection pins is
 * bounded by receiveQueueSize.
 *
 * Room for every connection. Idle connections hold their windows, so the pool grows with them:
 * it is registered in chunks of S buffers (AcceptOptions.withSharedReceivePool), and before each
 * accept the server registers another chunk while less than half a chunk is free (ensureRoom).
 * A busy connection grows its window only while more than a quarter of a chunk is free (the
 * low-water mark), so busy connections never take the starting windows of the next ones. What a
 * server pins is so its chunks: about INITIAL_WINDOW buffers per idle connection plus the
 * windows of the busy ones and less than a chunk and a half of slack. Accepted connections take
 * their windows only when their subscribers ask, so a burst of accepts whose subscribers come
 * later can still find the pool empty: a connection whose take fails waits for a buffer (await),
 * and its wait asks the pool to grow.
 *
 * What must hold for liveness: no connection waits for a buffer forever while the pool may still
 * grow (capacity below maxBuffers and registration succeeding). So: every failed take of a waiter
 * asks for a chunk (growForWaiters); one grower at a time (a flag taken by compare-and-set, so no
 * loop thread ever blocks on another), and the grower looks again for waiters on an empty pool
 * after it lets the flag go, which covers a waiter whose request found the flag taken; a new
 * chunk wakes as many waiters as it added buffers, a buffer given back wakes one, and a woken
 * connection that took what it needed passes the wake-up on (passOn): to the next waiter while
 * buffers are free, else as a request for a chunk, since woken connections on several loops may
 * take the last buffers before any of them looks (not within a second of a failed registration
 * unless one succeeded since, so that a registration that keeps failing is not retried on every
 * hand-off). Only
 * at the bound (or when registration fails) does a connection with nothing posted wait for a
 * buffer given back; meanwhile it grants nothing and its cqflux peer's messages wait for
 * credits (nothing is lost). A connection that closes while it waits leaves the queue (cancel).
 *
 * Threading: the connections of one server run on several loops, so taking and giving back are
 * lock-free (a loop thread must never block): a count of free buffers reserves one, then a bit of
 * the free-set is claimed by compare-and-set; a buffer given back sets its bit before it is
 * counted, so a reservation always finds a set bit. The pool is freed when the server and every
 * connection that took from it let go (release), after each connection's native objects are
 * closed: a posted receive uses the memory until its queue pair is destroyed.
 *
 * Why not a native shared receive queue (rpma_srq_new(3); libfabric's fi_srx_context(3), which
 * the tcp provider offers: core/fabric/src/test/c/srx_probe.c). The credit protocol grants each
 * peer exactly the receives posted for it, while a receive posted on a shared queue belongs to no
 * connection: whichever peer's message arrives first takes it, so a grant could no longer be
 * backed by a receive that only its grantee can consume, and one peer could use up what others
 * were granted. Telling which connection a shared receive served is possible on verbs (the work
 * completion's qp_num, ibv_poll_cq(3); rpma_conn_get_qp_num(3)), but on libfabric only through
 * the CQ the receiving endpoint is bound to (fi_endpoint(3), "SHARED CONTEXTS": "Completed
 * receive operations are posted to the CQs bound to the endpoint"); each fabric connection here
 * has a CQ of its own (only the EQ is shared), so that would hold, but the per-connection credit
 * would not. Nor would an srx make an idle fabric/tcp connection cheap: the provider allocates
 * its transfer entries per completion queue, on the first operation through any endpoint bound
 * to it, a credit write, a keep-alive read or a peer's incoming write as much as a receive
 * (srx_probe.c, cq_pool_probe.c; the size is in docs/performance.md), so a connection with a CQ
 * of its own pays it with or without an srx.
 */

/**
 * A server's receive buffers, shared by its connections to cqflux peers (see the design comment
 * at the top of this file). Thread-safe.
 */
public final class SharedReceivePool {
    private static final Logger LOG = Loggers.getLogger(SharedReceivePool.class);

    /** Receives a connection posts before its peer sent anything. */
    public static final int INITIAL_WINDOW = 2;
    /** The most buffers a pool grows to, all chunks together. */
    public static final int MAX_BUFFERS = 1 << 19;
    /**
     * The most bytes one chunk may register: a chunk is one allocation and one registration, made
     * on a loop thread when the pool grows, so its size is checked when the server is bound.
     */
    public static final long MAX_CHUNK_BYTES = 1L << 30;

    /** One registration of {@code chunkSize} buffers. */
    private record Chunk(Arena arena, LocalRegion region) {
    }

    private final Transport transport;
    private final int bufferSize;
    private final int chunkSize;
    private final Chunk[] chunks;
    /** The most buffers it grows to: a whole number of chunks, at most {@link #MAX_BUFFERS}. */
    private final int maxBuffers;
    /** Held by the one thread registering a chunk now. */
    private final AtomicBoolean growing = new AtomicBoolean();
    /** Chunks whose allocation or registration failed. */
    private final AtomicLong failedGrowths = new AtomicLong();
    /** Buffer i is {@code buffers[i / chunkSize][i % chunkSize]}; a chunk's row is written before its bits are set. */
    private final ReceiveBuffer[][] buffers;
    /** Chunks registered so far; written by the holder of {@link #growing} only. */
    private volatile int chunkCount;
    /** Bit i set: buffer i is free. */
    private final AtomicLongArray freeBits;
    /** Free buffers not yet reserved by a taker. */
    private final AtomicInteger free = new AtomicInteger();
    private final AtomicInteger hint = new AtomicInteger();
    /** The server and every connection that took part; the memory goes when it reaches 0. */
    private final AtomicInteger refs = new AtomicInteger(1);
    private final ConcurrentLinkedQueue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    private SharedReceivePool(Transport transport, int chunkSize, int bufferSize, int maxBuffers) {
        this.transport = transport;
        this.bufferSize = bufferSize;
        this.chunkSize = chunkSize;
        int max = Math.max(1, maxBuffers / chunkSize);
        this.maxBuffers = max * chunkSize;
        this.chunks = new Chunk[max];
        this.buffers = new ReceiveBuffer[max][];
        this.freeBits = new AtomicLongArray((int) (((long) max * chunkSize + 63) >>> 6));
    }

    /**
     * A pool with its first chunk of {@code chunkSize} buffers of {@code bufferSize} bytes,
     * registered once, for receives only.
     *
     * @param t the transport
     * @param chunkSize the buffers of each registration, 1..{@link #MAX_BUFFERS}
     * @param bufferSize bytes per buffer
     * @return the pool, held once by its creator ({@link #release()})
     * @throws IllegalArgumentException when {@code chunkSize} is outside that range
     */
    public static SharedReceivePool allocate(Transport t, int chunkSize, int bufferSize) {
        return allocate(t, chunkSize, bufferSize, MAX_BUFFERS);
    }

    /** As {@link #allocate(Transport, int, int)}, bounded at {@code maxBuffers} (tests: a bound within reach). */
    static SharedReceivePool allocate(Transport t, int chunkSize, int bufferSize, int maxBuffers) {
        if (chunkSize < 1 || chunkSize > MAX_BUFFERS) {
            throw new IllegalArgumentException("shared receive pool chunk of " + chunkSize + " buffers is outside [1, "
                    + MAX_BUFFERS + "]");
        }
        checkChunkBytes(chunkSize, bufferSize);
        SharedReceivePool p = new SharedReceivePool(t, chunkSize, bufferSize, Math.min(maxBuffers, MAX_BUFFERS));
        p.growing.set(true);
        try {
            p.grow();
        } finally {
            p.growing.set(false);
        }
        return p;
    }

    /**
     * Checks that a chunk's memory stays within {@link #MAX_CHUNK_BYTES}.
     *
     * @param chunkSize buffers per chunk
     * @param bufferSize bytes per buffer
     * @throws IllegalArgumentException naming both values and the bound when it does not
     */
    public static void checkChunkBytes(int chunkSize, int bufferSize) {
        long bytes = (long) chunkSize * bufferSize;
        if (bytes > MAX_CHUNK_BYTES) {
            throw new IllegalArgumentException("shared receive pool chunk of " + chunkSize + " buffers of " + bufferSize
                    + " bytes is " + bytes + " bytes, beyond the bound of " + MAX_CHUNK_BYTES
                    + " bytes a chunk: choose fewer buffers with AcceptOptions.withSharedReceivePool(int)");
        }
    }

    /**
     * Registers one more chunk and wakes as many waiters as it added buffers. Only by the holder of
     * {@link #growing}.
     *
     * @return whether it grew (false: at its bound)
     * @throws IllegalStateException when the memory cannot be allocated or registered (counted)
     */
    private boolean grow() {
        int n = chunkCount;
        if (n == chunks.length) {
            return false;
        }
        Arena a = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after the deregistration: DeferredArena
        LocalRegion region;
        long bytes = (long) chunkSize * bufferSize;
        try {
            MemorySegment mem = a.allocate(bytes, 64);
            region = transport.register(mem, EnumSet.of(RegionAccess.RECV));
        } catch (RuntimeException e) {
            a.close();
            failedGrowths.incrementAndGet();
            throw e;
        } catch (OutOfMemoryError e) {
            // Native memory refused: the pool stays as it is and the caller refuses what needed
            // the room; a loop thread must not end on it (its lifecycle treats errors as fatal).
            a.close();
            failedGrowths.incrementAndGet();
            throw new IllegalStateException("the shared receive pool could not allocate another chunk of " + bytes
                    + " bytes: " + e.getMessage(), e);
        } catch (Error e) {
            a.close();
            failedGrowths.incrementAndGet();
            throw e;
        }
        int base = n * chunkSize;
        ReceiveBuffer[] row;
        try {
            row = new ReceiveBuffer[chunkSize];
            for (int i = 0; i < chunkSize; i++) {
                row[i] = new ReceiveBuffer(base + i, region, (long) i * bufferSize);
            }
        } catch (RuntimeException | Error e) {
            // Not stored yet: nothing else would ever deregister and free it.
            try {
                region.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            } finally {
                a.close();
            }
            failedGrowths.incrementAndGet();
            if (e instanceof OutOfMemoryError oom) {
                throw new IllegalStateException("the shared receive pool could not make the buffers of another chunk: "
                        + oom.getMessage(), oom);
            }
            throw e;
        }
        chunks[n] = new Chunk(a, region);
        buffers[n] = row;
        chunkCount = n + 1; // published before any of its bits: a taker that claims one sees the row
        for (int i = 0; i < chunkSize; i++) {
            int g = base + i;
            freeBits.getAndAccumulate(g >>> 6, 1L << g, SharedReceivePool::or);
        }
        free.addAndGet(chunkSize);
        lastFailedGrowth = System.nanoTime() - GROWTH_RETRY_NANOS; // registering works again
        for (int i = 0; i < chunkSize; i++) {
            Runnable w = waiters.poll();
            if (w == null) {
                break;
            }
            w.run();
        }
        return true;
    }

    /**
     * Registers one more chunk unless another thread is registering one now.
     *
     * @return whether it grew (false: at its bound, or another thread grows it)
     */
    private boolean tryGrow() {
        if (!growing.compareAndSet(false, true)) {
            return false;
        }
        try {
            return grow();
        } finally {
            growing.set(false);
        }
    }

    /**
     * Passes a wake-up on after a woken connection took what it needed: to the next waiter while
     * buffers are free, else to a growth for the waiters (the liveness rule: a chunk's wake-ups
     * may all be taken by connections that each needed one buffer, leaving later waiters with an
     * empty pool and nobody to grow it). Any thread.
     */
    public void passOn() {
        if (waiters.isEmpty()) {
            return;
        }
        if (free.get() > 0) {
            signal();
        } else if (System.nanoTime() - lastFailedGrowth >= GROWTH_RETRY_NANOS) {
            growForWaiters();
        }
    }

    /** How long passOn leaves the pool as it is after a failed registration. */
    private static final long GROWTH_RETRY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /** When a registration for waiters last failed ({@link System#nanoTime()}). */
    private volatile long lastFailedGrowth = System.nanoTime() - GROWTH_RETRY_NANOS;

    /**
     * Keeps room for a connection about to be accepted: while fewer than half a chunk of buffers
     * is free, registers another chunk (up to its bound), so that connections accepted one after
     * another find their starting windows however many idle ones hold theirs. Any thread.
     *
     * @throws RuntimeException when a registration fails (the request is refused)
     */
    public void ensureRoom() {
        while (free.get() < Math.max(INITIAL_WINDOW, chunkSize / 2) && tryGrow()) {
            // one more chunk
        }
        growForWaiters();
    }

    /**
     * Registers chunks while connections wait on an empty pool, up to its bound (the design
     * comment's liveness rule). A thread that finds another growing leaves it to that one, which
     * looks again once it is done. A failed registration is counted and logged; the waiters then
     * wait for buffers given back. Any thread.
     */
    private void growForWaiters() {
        while (free.get() == 0 && !waiters.isEmpty() && chunkCount < chunks.length) {
            if (!growing.compareAndSet(false, true)) {
                return; // the grower looks again after it lets go
            }
            boolean grew;
            try {
                grew = grow();
            } catch (RuntimeException e) {
                lastFailedGrowth = System.nanoTime();
                LOG.warn("a connection waits for a receive buffer: the shared receive pool could not grow", e);
                return;
            } finally {
                growing.set(false);
            }
            if (!grew) {
                return;
            }
        }
    }

    /** {@return how many chunks failed to be allocated or registered} */
    public long failedGrowths() {
        return failedGrowths.get();
    }

    /** {@return the most buffers it grows to} */
    public int maxBuffers() {
        return maxBuffers;
    }

    /** {@return bytes per buffer} */
    public int bufferSize() {
        return bufferSize;
    }

    /** {@return how many buffers it has registered} */
    public int capacity() {
        return chunkCount * chunkSize;
    }

    /** {@return how many are free now (a snapshot)} */
    public int free() {
        return free.get();
    }

    /** {@return whether a connection's window may grow: more than a quarter of a chunk is free} */
    boolean roomToGrow() {
        return free.get() > chunkSize / 4;
    }

    /** {@return a free buffer, now taken, or {@code null} when none is free} Any thread. */
    ReceiveBuffer take() {
        int f;
        do {
            f = free.get();
            if (f == 0) {
                return null;
            }
        } while (!free.compareAndSet(f, f - 1));
        // Reserved: some bit is set for this taker (give and grow set bits before counting them).
        while (true) {
            int words = (int) (((long) chunkCount * chunkSize + 63) >>> 6);
            int start = Math.floorMod(hint.get(), words);
            for (int k = 0; k < words; k++) {
                int w = start + k < words ? start + k : start + k - words;
                long bits = freeBits.get(w);
                while (bits != 0) {
                    long low = Long.lowestOneBit(bits);
                    long seen = freeBits.compareAndExchange(w, bits, bits & ~low);
                    if (seen == bits) {
                        hint.set(w);
                        int g = (w << 6) + Long.numberOfTrailingZeros(low);
                        return buffers[g / chunkSize][g % chunkSize];
                    }
                    bits = seen;
                }
            }
            Thread.onSpinWait(); // a giver set its bit after another taker claimed one this scan passed
        }
    }

    /** Gives a buffer back and wakes one connection waiting for one. Any thread. */
    void give(ReceiveBuffer b) {
        int i = b.index;
        long old = freeBits.getAndAccumulate(i >>> 6, 1L << i, SharedReceivePool::or);
        if ((old & (1L << i)) != 0) {
            throw new IllegalStateException("receive buffer " + i + " of the shared pool was given back twice");
        }
        free.incrementAndGet();
        if (!waiters.isEmpty()) {
            signal();
        }
    }

    /**
     * Asks to be woken (on any thread) when a buffer is free; once. Asks the pool to grow when it
     * is empty (the design comment's liveness rule), which may wake {@code wake} on this thread.
     *
     * @param wake what to run; it must hand over to its loop and, once its connection took what
     *     it needed, call {@link #passOn()}
     */
    void await(Runnable wake) {
        waiters.add(wake);
        if (free.get() > 0) {
            signal(); // given back between the failed take and the add
        } else {
            growForWaiters();
        }
    }

    /**
     * Withdraws a wait of {@link #await} (its connection closed); a wake-up already under way
     * still runs. Any thread.
     *
     * @param wake what was passed to {@link #await}
     */
    void cancel(Runnable wake) {
        waiters.remove(wake);
    }

    /** {@return how many connections wait for a buffer (a snapshot; tests)} */
    int waiting() {
        return waiters.size();
    }

    /** Wakes one waiting connection, if there is one. Any thread. */
    void signal() {
        Runnable w = waiters.poll();
        if (w != null) {
            w.run();
        }
    }

    private static long or(long a, long b) {
        return a | b;
    }

    /**
     * A connection takes part, or an accept in flight holds the pool for the connection it
     * builds: the pool stays until that holder {@link #release()}s.
     */
    public void retain() {
        for (int n = refs.get(); ; n = refs.get()) {
            if (n <= 0) {
                // A freed pool's chunks are gone: holding it again would hand out freed memory.
                throw new IllegalStateException("the shared receive pool is released");
            }
            if (refs.compareAndSet(n, n + 1)) {
                return;
            }
        }
    }

    /** Lets go; the last one frees every chunk (after every user's native objects are closed). */
    public void release() {
        if (refs.decrementAndGet() != 0) {
            return;
        }
        RuntimeException failed = null;
        for (int i = 0; i < chunkCount; i++) {
            try {
                chunks[i].region().close();
            } catch (RuntimeException e) {
                failed = failed == null ? e : failed;
            } finally {
                chunks[i].arena().close();
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** {@return whether its memory is still registered} (tests) */
    public boolean isOpen() {
        return chunkCount > 0 && chunks[0].region().isOpen();
    }
}
