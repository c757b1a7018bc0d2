package io.cqflux.reactor.internal.connection;

import io.cqflux.epoll.loop.EventLoop;

/**
 * One connection's share of a server's {@link SharedReceivePool}: the window of receives it may
 * have posted at once, which follows its use, and its wait for a buffer when the pool has none
 * free (that class's design comment). The credit protocol is the {@link Receiver}'s: a share only
 * decides which buffer a receive uses and whether one is posted at all. Loop-confined, but for
 * the wake-up of a wait, which any thread may run and which only hands over to the loop.
 */
final class PoolShare {
    private final SharedReceivePool pool;
    /** The connection's receive queue depth: the most its window grows to. */
    private final int depth;
    private final EventLoop loop;
    /** Posts again once a buffer was given back: the receiver's repost, which does nothing after the end. */
    private final Runnable repost;
    /** The most receives posted at once. */
    private int window;
    /** Waiting for a buffer to be given back. */
    private boolean awaiting;
    /** The wake-up this connection waits with, withdrawn when it closes; null: none. */
    private volatile Runnable waitingWith;
    /** This connection let go of the pool ({@link #release()}). */
    private boolean released;

    /**
     * Takes part in {@code pool}, held until {@link #release()}, with a window that starts at
     * {@link SharedReceivePool#INITIAL_WINDOW}.
     *
     * @param pool the server's pool
     * @param depth the connection's receive queue depth, at least 1
     * @param loop the connection's loop
     * @param repost what posts the connection's receives again, on its loop
     */
    PoolShare(SharedReceivePool pool, int depth, EventLoop loop, Runnable repost) {
        this.pool = pool;
        this.depth = depth;
        this.loop = loop;
        this.repost = repost;
        pool.retain();
        window = Math.min(SharedReceivePool.INITIAL_WINDOW, depth);
    }

    /** {@return the receives this connection may have posted at once} */
    int window() {
        return window;
    }

    /** {@return a free buffer of the pool, taken, or null} */
    ReceiveBuffer take() {
        return pool.take();
    }

    /**
     * Gives a buffer back to the pool; another connection may use it now.
     *
     * @param b the buffer, no longer posted nor holding anything undelivered
     */
    void give(ReceiveBuffer b) {
        pool.give(b);
    }

    /**
     * A message arrived: the window follows use, one more receive per message while the pool has
     * room, one fewer while it is short, never under the starting window nor over the depth.
     */
    void messageArrived() {
        if (pool.roomToGrow()) {
            window = Math.min(depth, window + 1);
        } else {
            window = Math.max(Math.min(SharedReceivePool.INITIAL_WINDOW, depth), window - 1);
        }
    }

    /** Waits (once) for the pool to give a buffer back, then posts again on the loop. */
    void awaitBuffer() {
        if (awaiting) {
            return;
        }
        awaiting = true;
        Runnable wake = () -> {
            try {
                loop.execute(this::givenBack);
            } catch (RuntimeException e) {
                pool.signal(); // this loop is gone: the buffer is for another waiter
            }
        };
        waitingWith = wake;
        pool.await(wake); // may run wake now (the pool grew): it only hands over to this loop
    }

    private void givenBack() {
        awaiting = false;
        waitingWith = null;
        repost.run();
        // Pass the wake-up on: to the next waiter while buffers are free, else to a growth for
        // the waiters (SharedReceivePool.passOn; a chunk's wake-ups may be fewer than its waiters).
        if (!awaiting) {
            pool.passOn();
        }
    }

    /** {@return whether this connection let go of the pool: what it still holds is no longer its to give back} */
    boolean released() {
        return released;
    }

    /**
     * Lets go of the pool, after the native connection is closed: a wait is withdrawn (closed while
     * waiting: it leaves the queue, and its connection with it), and the pool is released once.
     */
    void release() {
        Runnable w = waitingWith;
        if (w != null) {
            waitingWith = null;
            pool.cancel(w);
        }
        if (!released) {
            released = true;
            pool.release();
        }
    }
}
