package io.cqflux.epoll.loop;

import io.cqflux.core.internal.NativeErrors;
import io.cqflux.epoll.ffm.epoll_event;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/*
 * Design.
 *
 * Ownership. The poller holds one loop's native side of waiting: the epoll fd, the wake-up eventfd
 * (registered in the epoll set under id WAKE_ID = 0, a value SourceTable never hands out), the
 * epoll_event array that epoll_wait(2) fills (MAX_EVENTS entries), one epoll_event for
 * epoll_ctl(2), the 8-byte eventfd read buffer and the loop thread's errno capture segment. The
 * segments come from the loop's arena, once, in the constructor; the loop thread closes the fds
 * (close()) and then its arena as the last thing it does. Everything except wakeup() runs on the
 * loop thread.
 *
 * The sleep/wake protocol, native side (wakeState). The loop calls announceSleep() (store
 * SLEEPING), then re-reads its task queue and lifecycle state; only if both are quiet does it call
 * sleep(), which blocks in epoll_wait(2) and stores AWAKE on return (cancelSleep() stores AWAKE
 * when it decided not to block). A producer enqueues, then calls wakeup(): it reads wakeState and
 * only if it is SLEEPING does it CAS it to WOKEN and write(2) the eventfd, so a burst of
 * submissions against a sleeping loop pays for one write and a running loop costs them one
 * volatile read. Both sides do "store, then load" on volatiles, so (Dekker) at least one side sees
 * the other: either the loop sees the task and does not sleep, or the producer sees SLEEPING and
 * writes the eventfd, which is in the epoll set. A producer that read SLEEPING just before the
 * loop woke for another reason leaves a stale count in the eventfd: the next sleep returns at once
 * and counts an empty wake-up, nothing worse.
 *
 * Closing under writers. Writers count themselves in `wakers` around their CAS and write(2).
 * close() first stores DEAD (no new writer gets past the CAS), then waits for `wakers` to reach 0,
 * and only then closes the eventfd: close(2) frees the number at once and the next open() may
 * reuse it, so a late write(2) would land in somebody else's file.
 */

/**
 * The epoll side of one {@link EventLoop}: the epoll instance, the wake-up eventfd and the
 * preallocated {@code epoll_event} array, with the native half of the sleep/wake protocol.
 *
 * <p>Thread safety and lifetime: {@link #wakeup(boolean)} may be called from any thread; every
 * other method from the loop thread only. Not {@link AutoCloseable}: the loop thread calls
 * {@link #close()} once, when it ends; the memory belongs to the loop's arena, which the loop
 * closes after it.
 */
final class EpollPoller {

    /** Ready entries taken per {@code epoll_wait}. */
    static final int MAX_EVENTS = 64;

    /** The {@code epoll_event.data} of the wake-up eventfd; never a source id (slot 0 is never used). */
    static final long WAKE_ID = 0;

    private static final int AWAKE = 0;
    private static final int SLEEPING = 1;
    private static final int WOKEN = 2;
    private static final int DEAD = 3;

    private static final VarHandle WAKE_STATE;
    private static final VarHandle WAKERS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WAKE_STATE = l.findVarHandle(EpollPoller.class, "wakeState", int.class);
            WAKERS = l.findVarHandle(EpollPoller.class, "wakers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final EventLoop loop;
    private final int epfd;
    private final int wakeFd;
    private final MemorySegment events;
    private final MemorySegment ctlEvent;
    private final MemorySegment wakeBuf;
    private final MemorySegment errno;

    @SuppressWarnings("unused")
    private volatile int wakeState = AWAKE;
    @SuppressWarnings("unused")
    private volatile int wakers;

    /**
     * Creates the epoll instance and the wake-up eventfd and adds the eventfd to the set. On
     * failure nothing is left open (the segments stay in {@code arena}, which the caller closes).
     *
     * @param arena the loop's arena; the poller's segments are allocated in it, once
     * @param loop the loop that owns the poller (whose thread may call the loop-only methods)
     * @throws io.cqflux.core.NativeCallException when {@code epoll_create1}, {@code eventfd} or
     *     {@code epoll_ctl} fails
     */
    EpollPoller(Arena arena, EventLoop loop) {
        this.loop = loop;
        MemorySegment capture = Libc.threadErrno();
        int ep = -1;
        int wfd = -1;
        try {
            ep = Libc.epollCreate(capture);
            wfd = Libc.eventfd(capture);
            // Loop-thread buffers, used until close(): unscoped (Libc.unscoped).
            events = Libc.unscoped(epoll_event.allocateArray(MAX_EVENTS, arena));
            ctlEvent = Libc.unscoped(epoll_event.allocate(arena));
            wakeBuf = Libc.unscoped(arena.allocate(Long.BYTES, Long.BYTES));
            errno = Libc.unscoped(arena.allocate(Libc.CAPTURE_LAYOUT));
            epoll_event.events(ctlEvent, libc_h.EPOLLIN());
            ctlEvent.set(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET, WAKE_ID);
            int e = Libc.epollCtl(capture, ep, libc_h.EPOLL_CTL_ADD(), wfd, ctlEvent);
            if (e != 0) {
                throw NativeErrors.errno("epoll_ctl", e, "EPOLL_CTL_ADD of the wake-up eventfd " + wfd);
            }
        } catch (RuntimeException | Error e) {
            if (wfd >= 0) {
                Libc.close(capture, wfd);
            }
            if (ep >= 0) {
                Libc.close(capture, ep);
            }
            throw e;
        }
        this.epfd = ep;
        this.wakeFd = wfd;
    }

    // ---------------------------------------------------------------- the wake-up (any thread)

    /**
     * Makes a sleeping loop return from {@code epoll_wait}; a no-op (one volatile read) when it
     * runs. Call it after publishing the work the loop must see (see the class design comment).
     *
     * @param inLoop whether the caller is the loop thread (it then uses the loop's errno segment)
     */
    void wakeup(boolean inLoop) {
        if ((int) WAKE_STATE.getVolatile(this) != SLEEPING) {
            return;
        }
        WAKERS.getAndAdd(this, 1);
        try {
            if (WAKE_STATE.compareAndSet(this, SLEEPING, WOKEN)) {
                Libc.signalEventfd(inLoop ? errno : Libc.threadErrno(), wakeFd);
            }
        } finally {
            WAKERS.getAndAdd(this, -1);
        }
    }

    // ---------------------------------------------------------------- sleeping (loop thread)

    /**
     * Announces a sleep (stores {@code SLEEPING}). The caller must re-check everything a producer
     * publishes before calling {@link #wakeup} (tasks, the lifecycle state) after this store, then
     * either {@link #sleep()} or {@link #cancelSleep()}.
     */
    void announceSleep() {
        assert loop.inEventLoop();
        WAKE_STATE.setVolatile(this, SLEEPING);
    }

    /** Calls off an announced sleep: work turned up in the re-check. */
    void cancelSleep() {
        assert loop.inEventLoop();
        WAKE_STATE.setVolatile(this, AWAKE);
    }

    /**
     * Blocks in {@code epoll_wait(2)} until an fd of the set is ready or a producer wakes the loop,
     * then stores {@code AWAKE} (a failure that ends the loop leaves the state for {@link #close()}).
     * Only after {@link #announceSleep()}.
     *
     * @return the ready entries, readable with {@link #readyId(int)}; 0 or less when interrupted
     *     by a signal ({@code EINTR})
     * @throws io.cqflux.core.NativeCallException when {@code epoll_wait} fails otherwise
     */
    int sleep() {
        return sleep(-1);
    }

    /**
     * {@link #sleep()} for at most {@code timeoutMillis} (the loop's next timer).
     *
     * @param timeoutMillis the longest wait in ms, or -1 for none
     * @return as {@link #sleep()}; 0 also when the time ran out
     */
    int sleep(int timeoutMillis) {
        assert loop.inEventLoop();
        int n = Libc.epollWait(errno, epfd, events, MAX_EVENTS, timeoutMillis);
        WAKE_STATE.setVolatile(this, AWAKE);
        return n;
    }

    /**
     * {@code epoll_wait(2)} with timeout 0: the fds that are ready now, without blocking.
     *
     * @return the ready entries, readable with {@link #readyId(int)}; 0 or less when none (or
     *     {@code EINTR})
     * @throws io.cqflux.core.NativeCallException when {@code epoll_wait} fails otherwise
     */
    int selectNow() {
        assert loop.inEventLoop();
        return Libc.epollWait(errno, epfd, events, MAX_EVENTS, 0);
    }

    /**
     * @param i index of a ready entry, below what the last wait returned
     * @return its {@code epoll_event.data}: {@link #WAKE_ID} or a source id
     */
    long readyId(int i) {
        assert loop.inEventLoop();
        return events.get(Libc.EVENT_DATA, i * Libc.EVENT_SIZE + Libc.EVENT_DATA_OFFSET);
    }

    /**
     * Resets the wake-up eventfd's counter ({@code eventfd(2)}: a read returns and zeroes it), so
     * that the level-triggered eventfd stops being ready.
     */
    void consumeWakeup() {
        assert loop.inEventLoop();
        Libc.readEventfd(errno, wakeFd, wakeBuf);
    }

    // ---------------------------------------------------------------- the epoll set (loop thread)

    /**
     * Adds an fd, level-triggered {@code EPOLLIN}, with {@code id} as its {@code epoll_event.data}.
     *
     * @param fd the fd
     * @param id the source id ({@link SourceTable})
     * @return 0, or the errno of {@code epoll_ctl(EPOLL_CTL_ADD)}
     */
    int add(int fd, long id) {
        assert loop.inEventLoop();
        epoll_event.events(ctlEvent, libc_h.EPOLLIN());
        ctlEvent.set(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET, id);
        return Libc.epollCtl(errno, epfd, libc_h.EPOLL_CTL_ADD(), fd, ctlEvent);
    }

    /**
     * Removes an fd.
     *
     * @param fd the fd
     * @return 0, or the errno of {@code epoll_ctl(EPOLL_CTL_DEL)}
     */
    int delete(int fd) {
        assert loop.inEventLoop();
        return Libc.epollCtl(errno, epfd, libc_h.EPOLL_CTL_DEL(), fd, ctlEvent);
    }

    /**
     * Closes the epoll fd and the eventfd, once no {@link #wakeup} is between its CAS and its
     * {@code write(2)}; later wake-ups are no-ops. Once: by the loop thread as it ends, or by the
     * thread that built the loop when it could not start (so no loop-thread assertion); failures
     * are logged. The memory stays until the loop closes its arena.
     */
    void close() {
        // No waker may be between its CAS and its write(2) when the eventfd is closed: the number
        // could be reused by another open() at once.
        WAKE_STATE.setVolatile(this, DEAD);
        while ((int) WAKERS.getVolatile(this) != 0) {
            SpinWait.pause();
        }
        int e = Libc.close(errno, epfd);
        if (e != 0) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "close of epoll fd {0} failed: {1}", epfd,
                    NativeErrors.errnoName(e));
        }
        e = Libc.close(errno, wakeFd);
        if (e != 0) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "close of eventfd {0} failed: {1}", wakeFd,
                    NativeErrors.errnoName(e));
        }
    }
}
