package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.transport.fabric.ffm.fi_eq_cm_entry;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Reads a tcp listener's event queue on a thread of its own, so that a client that stops in the
 * middle of its connection request holds that thread, not the server's event loop.
 *
 * <p><b>Why.</b> libfabric 1.17's tcp provider reads a connection request inside
 * {@code fi_eq_read} of the listener's queue, with a blocking {@code recv} on the accepted socket
 * ({@code core/fabric/src/test/c/cm_stall_probe.c}). RequestReadBound bounds each such read to a
 * few milliseconds, but a few hundred such sockets a second would still hold a loop that read the
 * queue about all the time, and every connection of that loop with it. Read here, they delay only
 * the requests behind them.
 *
 * <p><b>How.</b> The thread waits in {@code fi_eq_sread} on the passive endpoint's queue (the
 * only thread that reads it until {@link #stop()}), and for each {@code FI_CONNREQ} queues the
 * request's info and private data ({@link Item}, an MPSC hand-over: this thread adds, the loop
 * takes) and writes one {@code FI_NOTIFY} entry into a second queue, the signal queue, whose fd
 * the loop watches in the listener's stead ({@link #fd()}, {@link #prepareToSleep()}): one entry
 * per item, written after the item, so the loop that reads an entry finds its item
 * ({@link #next()}). At most {@link #MAX_READY} requests wait so; beyond them the thread waits for
 * the loop to take one. A failure of the thread is handed over the same way: {@link #next()} throws
 * it on the loop, which closes the server, as a failing read on the loop did. A signal that ends
 * the thread's wait is no failure ({@link FabricEventQueue#sread}).
 *
 * <p>Facts the code depends on (libfabric 1.17, tcp; {@code core/fabric/src/test/c/eq_sread_probe.c}):
 * {@code fi_eq_sread} on a passive endpoint's queue returns a client's {@code FI_CONNREQ}, and
 * {@code -FI_EAGAIN} after its timeout with nothing; {@code fi_eq_write} of an entry into that
 * queue from another thread wakes it at once; a written entry makes a queue's fd readable and its
 * {@code fi_trywait} {@code -FI_EAGAIN} until it is read, and after that read {@code fi_trywait}
 * says 0 and the fd is quiet again. Reads beside the answers (accepts, rejects) on other threads
 * are allowed because the domain is {@code FI_THREAD_SAFE} (FabricListener's class comment).
 *
 * <p>Lifetime: started by its listener; {@link #stop()} wakes and joins the thread, then the
 * listener rejects what is still queued ({@link #drain()}) and, after the passive endpoint,
 * closes the signal queue ({@link #close()}).
 */
final class RequestReader {

    /** How long one {@code fi_eq_sread} waits before the thread looks at {@link #stopping} again. */
    static final int WAIT_MILLIS = 1_000;
    /**
     * The most requests read and not yet taken. Each holds the socket the provider accepted for it;
     * beyond this the thread reads no more until the loop takes one, and new clients wait in the
     * kernel's listen backlog, as they did when the loop read the queue itself.
     */
    static final int MAX_READY = 256;

    /** A connection request read from the listener's queue: its info (owned until answered) and private data. */
    record Item(MemorySegment info, byte[] data) {
    }

    private static final System.Logger LOG = System.getLogger(RequestReader.class.getName());

    private final FabricEventQueue source;
    private final FabricEventQueue signal;
    private final InetSocketAddress bound;
    /** Requests read and not yet taken: the reader adds, the loop takes ({@link #next()}), the close drains. */
    private final ConcurrentLinkedQueue<Item> ready = new ConcurrentLinkedQueue<>();
    /** How many {@link #ready} holds: the reader waits at {@link #MAX_READY}, the loop's take wakes it. */
    private final java.util.concurrent.atomic.AtomicInteger readyCount = new java.util.concurrent.atomic.AtomicInteger();
    private final Thread thread;
    private volatile boolean stopping;
    /** What ended the thread other than {@link #stop()}, for the loop to throw ({@link #next()}). */
    private volatile RuntimeException failure;

    /**
     * @param transport the fabric, for the signal queue
     * @param source the passive endpoint's queue: read by this reader's thread alone from
     *     {@link #start()} to {@link #stop()}
     * @param bound the listener's address, for the thread's name and messages
     */
    RequestReader(FabricTransport transport, FabricEventQueue source, InetSocketAddress bound) {
        this.source = source;
        this.bound = bound;
        this.signal = new FabricEventQueue(transport);
        this.thread = Thread.ofPlatform().daemon().name("cqflux-fabric-listener-" + bound.getPort())
                .unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    /** {@return the fd the loop watches for requests: the signal queue's} */
    int fd() {
        return signal.fd();
    }

    /** {@return whether the loop may sleep: no signal entry is waiting ({@code fi_trywait(3)})} */
    boolean prepareToSleep() {
        return signal.trywait();
    }

    /**
     * Loop thread: takes the next request read, or {@code null} when none is waiting.
     *
     * @throws RuntimeException what ended the reader's thread, once it ended so
     */
    Item next() {
        if (signal.read() == FabricEventQueue.NONE) {
            return null;
        }
        Item it = ready.poll();
        if (it == null) {
            RuntimeException f = failure;
            if (f != null) {
                throw f;
            }
            return null;
        }
        if (readyCount.getAndDecrement() == MAX_READY) {
            java.util.concurrent.locks.LockSupport.unpark(thread); // room again
        }
        if (failure != null && ready.isEmpty()) {
            // The thread ended after queueing this one: the next call throws its failure.
            signal.write();
        }
        return it;
    }

    private void run() {
        try {
            while (!stopping) {
                if (readyCount.get() >= MAX_READY) {
                    // Full: the loop's next take unparks (stop() too); the timeout is a backstop.
                    java.util.concurrent.locks.LockSupport.parkNanos(this, WAIT_MILLIS * 1_000_000L);
                    continue;
                }
                int ev = source.sread(WAIT_MILLIS);
                if (ev == FI_CONNREQ()) {
                    ready.add(new Item(fi_eq_cm_entry.info(source.entry()), source.cmData()));
                    readyCount.incrementAndGet();
                    signal.write();
                } else if (ev == FabricEventQueue.ERROR) {
                    LOG.log(System.Logger.Level.DEBUG, "listener {0}: event queue error {1}", bound, source.lastError());
                } else if (ev != FabricEventQueue.NONE && ev != FI_NOTIFY()) {
                    LOG.log(System.Logger.Level.DEBUG, "listener {0}: ignoring event {1}", bound, ev);
                }
            }
        } catch (RuntimeException e) {
            fail(e);
        } catch (Error e) {
            fail(new IllegalStateException("the reader of listener " + bound + "'s requests failed", e));
            throw e;
        }
    }

    private void fail(RuntimeException e) {
        if (stopping) {
            LOG.log(System.Logger.Level.DEBUG, "listener " + bound + ": reading requests while closing failed", e);
            return;
        }
        failure = e;
        try {
            signal.write(); // the loop's next read finds no item and throws the failure
        } catch (RuntimeException w) {
            e.addSuppressed(w);
            LOG.log(System.Logger.Level.ERROR, "listener " + bound + ": its request reader failed, and telling the loop"
                    + " failed too; the listener accepts nothing more", e);
        }
    }

    /**
     * Stops the thread: wakes its {@code fi_eq_sread} with an entry of its own (or its wait for
     * room) and waits for it to end: the read in progress, which on tcp takes every request that is
     * ready, each bounded by RequestReadBound, so a flood of partial requests can hold this call
     * (the listener's close) tens of milliseconds. The listener reads its queue itself afterwards.
     */
    void stop() {
        stopping = true;
        java.util.concurrent.locks.LockSupport.unpark(thread);
        try {
            source.write();
        } catch (RuntimeException e) {
            // It still ends within WAIT_MILLIS.
            LOG.log(System.Logger.Level.DEBUG, "listener " + bound + ": waking its request reader failed", e);
        }
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true; // the queue must not close under the reader: wait on, then restore
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** After {@link #stop()}: {@return the requests read and never taken} */
    java.util.List<Item> drain() {
        java.util.List<Item> left = new java.util.ArrayList<>();
        for (Item it; (it = ready.poll()) != null; ) {
            left.add(it);
        }
        return left;
    }

    /** After {@link #stop()} (or a thread that never started): closes the signal queue; idempotent. */
    void close() {
        signal.close();
    }

    /** {@return how many requests wait to be taken (tests)} */
    int waiting() {
        return readyCount.get();
    }

    /** {@return the reader's thread (tests)} */
    Thread thread() {
        return thread;
    }
}
