package io.cqflux.reactor.internal.connection;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/*
 * Design: one receive buffer pool for all of a server's connections to cqflux peers.
 *
 * Why. A connection that receives used to register its own pool of receiveQueueSize buffers
 * (512 KiB by default) and post as many receives as its subscriber asked for, up to that depth,
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
 * windows of the busy ones and less than a chunk and a half of slack. Should the pool still run dry (at
 * MAX_BUFFERS, or between accepts), a connection with nothing posted grants nothing and its
 * cqflux peer's messages wait for credits (nothing is lost); the connection waits for a buffer
 * (await), and each buffer given back wakes one waiter.
 *
 * Threading: the connections of one server run on several loops, so taking and giving back are
 * lock-free (a loop thread must never block): a count of free buffers reserves one, then a bit of
 * the free-set is claimed by compare-and-set; a buffer given back sets its bit before it is
 * counted, so a reservation always finds a set bit. The pool is freed when the server and every
 * connection that took from it let go (release), after each connection's native objects are
 * closed: a posted receive uses the memory until its queue pair is destroyed.
 *
 * Native shared receive queues (rpma_srq_new(3); libfabric's fi_srx_context(3), which the tcp
 * provider offers: core/fabric/src/test/c/srx_probe.c) would let the grants be reservations in
 * one queue rather than receives posted per connection. Their completions do not name the
 * connection by their context (it is the receive's, and a shared receive is taken by whichever
 * message arrives first): on verbs the work completion's qp_num names the queue pair
 * (ibv_poll_cq(3); rpma_conn_get_qp_num(3) gives a connection's), on libfabric only the CQ the
 * receiving endpoint is bound to does (fi_endpoint(3), "SHARED CONTEXTS": "Completed receive
 * operations are posted to the CQs bound to the endpoint"), which endpoints sharing one CQ per
 * loop cannot tell apart. That is not built here. Nor would an srx make an idle fabric/tcp
 * connection cheap: the provider allocates about 452 KiB of transfer entries per endpoint on its
 * first post of anything, a credit write or keep-alive read as much as a receive (srx_probe.c),
 * so an endpoint that writes pays it with or without an srx.
 */

/**
 * A server's receive buffers, shared by its connections to cqflux peers (see the design comment
 * at the top of this file). Thread-safe; {@link #ensureRoom} on the server's loop only.
 */
public final class SharedReceivePool {
    /** Receives a connection posts before its peer sent anything. */
    public static final int INITIAL_WINDOW = 2;
    /** The most buffers a pool grows to, all chunks together. */
    public static final int MAX_BUFFERS = 1 << 19;

    /** One registration of {@code chunkSize} buffers. */
    private record Chunk(Arena arena, LocalRegion region) {
    }

    private final Transport transport;
    private final int bufferSize;
    private final int chunkSize;
    private final Chunk[] chunks;
    /** Buffer i is {@code buffers[i / chunkSize][i % chunkSize]}; a chunk's row is written before its bits are set. */
    private final Receiver.Buffer[][] buffers;
    /** Chunks registered so far; written by the server's loop only. */
    private volatile int chunkCount;
    /** Bit i set: buffer i is free. */
    private final AtomicLongArray freeBits;
    /** Free buffers not yet reserved by a taker. */
    private final AtomicInteger free = new AtomicInteger();
    private final AtomicInteger hint = new AtomicInteger();
    /** The server and every connection that took part; the memory goes when it reaches 0. */
    private final AtomicInteger refs = new AtomicInteger(1);
    private final ConcurrentLinkedQueue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    private SharedReceivePool(Transport transport, int chunkSize, int bufferSize) {
        this.transport = transport;
        this.bufferSize = bufferSize;
        this.chunkSize = chunkSize;
        int max = Math.max(1, MAX_BUFFERS / chunkSize);
        this.chunks = new Chunk[max];
        this.buffers = new Receiver.Buffer[max][];
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
        if (chunkSize < 1 || chunkSize > MAX_BUFFERS) {
            throw new IllegalArgumentException("shared receive pool chunk of " + chunkSize + " buffers is outside [1, "
                    + MAX_BUFFERS + "]");
        }
        SharedReceivePool p = new SharedReceivePool(t, chunkSize, bufferSize);
        p.grow();
        return p;
    }

    /**
     * Registers one more chunk. The server's loop only (one grower).
     *
     * @return whether it grew (false: at {@link #MAX_BUFFERS})
     */
    private boolean grow() {
        int n = chunkCount;
        if (n == chunks.length) {
            return false;
        }
        Arena a = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after the deregistration: DeferredArena
        LocalRegion region;
        try {
            MemorySegment mem = a.allocate((long) chunkSize * bufferSize, 64);
            region = transport.register(mem, EnumSet.of(RegionAccess.RECV));
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
        chunks[n] = new Chunk(a, region);
        Receiver.Buffer[] row = new Receiver.Buffer[chunkSize];
        int base = n * chunkSize;
        for (int i = 0; i < chunkSize; i++) {
            row[i] = new Receiver.Buffer(base + i, region, (long) i * bufferSize);
        }
        buffers[n] = row;
        chunkCount = n + 1; // published before any of its bits: a taker that claims one sees the row
        for (int i = 0; i < chunkSize; i++) {
            int g = base + i;
            freeBits.getAndAccumulate(g >>> 6, 1L << g, SharedReceivePool::or);
        }
        free.addAndGet(chunkSize);
        signal();
        return true;
    }

    /**
     * Keeps room for a connection about to be accepted: while fewer than half a chunk of buffers
     * is free, registers another chunk (up to {@link #MAX_BUFFERS}), so that every connection
     * finds its starting window however many idle ones hold theirs. The server's loop only.
     *
     * @throws RuntimeException when a registration fails (the request is refused)
     */
    public void ensureRoom() {
        while (free.get() < Math.max(INITIAL_WINDOW, chunkSize / 2) && grow()) {
            // one more chunk
        }
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
    Receiver.Buffer take() {
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
    void give(Receiver.Buffer b) {
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
     * Asks to be woken (on any thread) when a buffer is given back; once, for one buffer.
     *
     * @param wake what to run; it must hand over to its loop and, if it took nothing, {@link #signal()}
     */
    void await(Runnable wake) {
        waiters.add(wake);
        if (free.get() > 0) {
            signal(); // given back between the failed take and the add
        }
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

    /** A connection takes part: the pool stays until it {@link #release()}s. */
    void retain() {
        refs.incrementAndGet();
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
