package io.cqflux.epoll.loop;

import io.cqflux.core.internal.NativeErrors;
import io.cqflux.epoll.ffm.epoll_event;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The hand-written layer over {@link libc_h}: every call captures errno
 * ({@link Linker.Option#captureCallState}), checks its arguments before the native call, and maps a
 * failure through {@link NativeErrors#errno}. "Again" and "interrupted" are return values, not
 * exceptions. Stateless; the errno capture segment is the caller's (one per thread, allocated once).
 */
@SuppressWarnings("restricted") // the downcalls below are the module's one use of native access
final class Libc {

    /** The capture-state layout holding {@code errno}. */
    static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    /** {@code sizeof(struct epoll_event)}: 12 on x86-64, where the struct is packed. */
    static final long EVENT_SIZE = epoll_event.sizeof();
    /** Offset of {@code events} in {@code struct epoll_event}. */
    static final long EVENT_EVENTS_OFFSET = epoll_event.events$offset();
    /** Offset of {@code data} in {@code struct epoll_event}: 4, so {@code data.u64} is misaligned. */
    static final long EVENT_DATA_OFFSET = epoll_event.data$offset();
    /**
     * {@code data.u64} read in place. epoll_event is {@code __EPOLL_PACKED} on x86-64
     * ({@code <bits/epoll.h>}), so in an array every other {@code data} sits at 4 mod 8: the union's
     * own 8-byte-aligned layout would throw, hence byte alignment 1.
     */
    static final ValueLayout.OfLong EVENT_DATA = libc_h.C_LONG_LONG.withByteAlignment(1);
    /** {@code events} read in place (byte alignment 1 like every member of the packed struct). */
    static final ValueLayout.OfInt EVENT_EVENTS = epoll_event.events$layout();

    private static final ThreadLocal<MemorySegment> THREAD_ERRNO =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(CAPTURE_LAYOUT));

    private static final MethodHandle EPOLL_CREATE1 = capturing(libc_h.epoll_create1$address(), libc_h.epoll_create1$descriptor());
    private static final MethodHandle EPOLL_CTL = capturing(libc_h.epoll_ctl$address(), libc_h.epoll_ctl$descriptor());
    private static final MethodHandle EPOLL_WAIT = capturing(libc_h.epoll_wait$address(), libc_h.epoll_wait$descriptor());
    private static final MethodHandle EVENTFD = capturing(libc_h.eventfd$address(), libc_h.eventfd$descriptor());
    private static final MethodHandle READ = capturing(libc_h.read$address(), libc_h.read$descriptor());
    private static final MethodHandle WRITE = capturing(libc_h.write$address(), libc_h.write$descriptor());
    private static final MethodHandle CLOSE = capturing(libc_h.close$address(), libc_h.close$descriptor());
    private static final MethodHandle NICE = capturing(libc_h.nice$address(), libc_h.nice$descriptor());

    private Libc() {
    }

    private static MethodHandle capturing(MemorySegment address, FunctionDescriptor descriptor) {
        // The descriptor stays the plain C signature; the capture segment becomes a leading argument.
        return Linker.nativeLinker().downcallHandle(address, descriptor, Linker.Option.captureCallState("errno"));
    }

    /**
     * A view of {@code s} with the global scope, for the loop's own buffers (the batch scratch,
     * the epoll event array, the loop thread's errno segment). A downcall that takes a segment of
     * a shared arena acquires and releases that arena around the call, two atomic updates, and
     * every access to such a segment checks the arena's state: 22 ns more per store and call on
     * the project's VM, more than the whole call of a trivial C function (DowncallBenchmarks;
     * benchmarks/results/README.md, "Two costs at the native boundary"). These buffers are used by the loop
     * thread only, and their arena is closed after the loop's last native call, so neither check
     * can fail; the view skips both. It must not reach code that could use it after the arena is
     * closed: it would read freed memory instead of throwing.
     *
     * @param s a segment of the loop's arena
     * @return the same memory, unscoped
     */
    static MemorySegment unscoped(MemorySegment s) {
        return MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    /** {@return a capture segment for the calling thread, allocated once per thread} */
    static MemorySegment threadErrno() {
        return THREAD_ERRNO.get();
    }

    /**
     * @param capture a capture segment
     * @return the errno the last call through it captured
     */
    static int errno(MemorySegment capture) {
        return (int) ERRNO.get(capture, 0L);
    }

    /**
     * Creates an epoll instance with {@code EPOLL_CLOEXEC} ({@code epoll_create1(2)}).
     *
     * @param capture errno capture segment
     * @return the epoll fd
     */
    static int epollCreate(MemorySegment capture) {
        int fd;
        try {
            fd = (int) EPOLL_CREATE1.invokeExact(capture, libc_h.EPOLL_CLOEXEC());
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (fd < 0) {
            throw NativeErrors.errno("epoll_create1", errno(capture), "EPOLL_CLOEXEC");
        }
        return fd;
    }

    /**
     * Creates a non-blocking, close-on-exec eventfd with counter 0 ({@code eventfd(2)}).
     *
     * @param capture errno capture segment
     * @return the eventfd
     */
    static int eventfd(MemorySegment capture) {
        int fd;
        try {
            fd = (int) EVENTFD.invokeExact(capture, 0, libc_h.EFD_NONBLOCK() | libc_h.EFD_CLOEXEC());
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (fd < 0) {
            throw NativeErrors.errno("eventfd", errno(capture), "EFD_NONBLOCK|EFD_CLOEXEC");
        }
        return fd;
    }

    /**
     * {@code epoll_ctl(2)}.
     *
     * @param capture errno capture segment
     * @param epfd the epoll fd
     * @param op {@code EPOLL_CTL_ADD}, {@code _MOD} or {@code _DEL}
     * @param fd the target fd
     * @param event one {@code struct epoll_event} (ignored by {@code DEL} but still passed: kernels
     *     before 2.6.9 required it, see BUGS in {@code epoll_ctl(2)})
     * @return 0, or the errno of the failure
     */
    static int epollCtl(MemorySegment capture, int epfd, int op, int fd, MemorySegment event) {
        requireFd(epfd, "epfd");
        requireFd(fd, "fd");
        requireSize(event, EVENT_SIZE, "epoll_event");
        int rc;
        try {
            rc = (int) EPOLL_CTL.invokeExact(capture, epfd, op, fd, event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return rc == 0 ? 0 : errno(capture);
    }

    /**
     * {@code epoll_wait(2)}.
     *
     * @param capture errno capture segment
     * @param epfd the epoll fd
     * @param events the array, at least {@code max} entries
     * @param max capacity in entries, at least 1
     * @param timeoutMillis -1 to block, 0 to return at once
     * @return the number of ready entries, or -1 when interrupted by a signal ({@code EINTR})
     */
    static int epollWait(MemorySegment capture, int epfd, MemorySegment events, int max, int timeoutMillis) {
        requireFd(epfd, "epfd");
        if (max < 1) {
            throw new IllegalArgumentException("maxevents " + max + " must be at least 1");
        }
        // A constant message: this runs on every loop turn, and a built string would allocate there.
        requireSize(events, max * EVENT_SIZE, "epoll_event array");
        int n;
        try {
            n = (int) EPOLL_WAIT.invokeExact(capture, epfd, events, max, timeoutMillis);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (n >= 0) {
            return n;
        }
        int e = errno(capture);
        if (e == libc_h.EINTR()) {
            return -1;
        }
        throw NativeErrors.errno("epoll_wait", e, "epfd " + epfd + ", maxevents " + max);
    }

    /**
     * Reads and resets an eventfd's counter without blocking ({@code eventfd(2)}: a read returns the
     * 8-byte counter and sets it to 0, or fails with {@code EAGAIN} when it is 0).
     *
     * @param capture errno capture segment
     * @param fd a non-blocking eventfd
     * @param buf 8 bytes of scratch
     * @return the counter value, 0 when it was 0
     */
    static long readEventfd(MemorySegment capture, int fd, MemorySegment buf) {
        requireFd(fd, "fd");
        requireSize(buf, Long.BYTES, "eventfd buffer");
        long n;
        try {
            n = (long) READ.invokeExact(capture, fd, buf, (long) Long.BYTES);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (n == Long.BYTES) {
            return buf.get(ValueLayout.JAVA_LONG, 0);
        }
        int e = n < 0 ? errno(capture) : 0;
        if (e == libc_h.EAGAIN() || e == libc_h.EINTR()) {
            return 0;
        }
        throw NativeErrors.errno("read", e, "eventfd " + fd + " returned " + n);
    }

    /**
     * Adds 1 to an eventfd's counter. {@code EAGAIN} (the counter would exceed 2^64-2) means it is
     * already signalled, which is as good.
     *
     * @param capture errno capture segment of the calling thread
     * @param fd a non-blocking eventfd
     */
    static void signalEventfd(MemorySegment capture, int fd) {
        requireFd(fd, "fd");
        long n;
        try {
            n = (long) WRITE.invokeExact(capture, fd, ONE_SEGMENT, (long) Long.BYTES);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (n == Long.BYTES) {
            return;
        }
        int e = n < 0 ? errno(capture) : 0;
        if (e == libc_h.EAGAIN() || e == libc_h.EINTR()) {
            return;
        }
        throw NativeErrors.errno("write", e, "eventfd " + fd + " returned " + n);
    }

    /**
     * {@code close(2)}. Per the man page the fd is released even when close fails (notably with
     * {@code EINTR} on Linux), so it is never retried.
     *
     * @param capture errno capture segment
     * @param fd the fd
     * @return 0, or the errno of the failure
     */
    static int close(MemorySegment capture, int fd) {
        requireFd(fd, "fd");
        int rc;
        try {
            rc = (int) CLOSE.invokeExact(capture, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        return rc == 0 ? 0 : errno(capture);
    }

    /**
     * nice(2): adds {@code increment} to the calling thread's nice value (on Linux a per-thread
     * attribute, setpriority(2) NOTES; glibc's nice is getpriority then setpriority with
     * {@code PRIO_PROCESS, 0}, the calling thread). The kernel caps the result at 19.
     *
     * <p>Its result is ambiguous by design (nice(2) RETURN VALUE): -1 is both a legitimate new
     * value and the failure, and glibc restores errno on success, so the errno captured then is
     * whatever the thread held before. Only {@code EPERM} (an increment that raises the priority
     * without the right to) is a failure, and a non-negative increment never asks for that.
     *
     * @param capture the caller's errno segment
     * @param increment what to add, in [0, 39]: only ever lowers the priority, which needs no privilege
     * @return nice(2)'s result: the new nice value, or -1 (see above)
     * @throws IllegalArgumentException when the increment is outside [0, 39]
     */
    static int nice(MemorySegment capture, int increment) {
        if (increment < 0 || increment > 39) {
            throw new IllegalArgumentException("nice increment " + increment + " is outside [0, 39]: a thread only"
                    + " ever lowers its own priority here");
        }
        try {
            return (int) NICE.invokeExact(capture, increment);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** An eventfd increment of 1 shared by every writer thread; written once here, only read by write(2). */
    private static final MemorySegment ONE_SEGMENT = one();

    private static MemorySegment one() {
        MemorySegment s = Arena.global().allocate(ValueLayout.JAVA_LONG);
        s.set(ValueLayout.JAVA_LONG, 0, 1L);
        return s.asReadOnly(); // a downcall accepts a read-only segment; write(2) only reads it
    }

    private static void requireFd(int fd, String what) {
        if (fd < 0) {
            throw new IllegalArgumentException(what + " " + fd + " is not a file descriptor (must be >= 0)");
        }
    }

    private static void requireSize(MemorySegment s, long bytes, String what) {
        if (s == null || s.equals(MemorySegment.NULL) || s.byteSize() < bytes) {
            throw new IllegalArgumentException(what + " segment of " + (s == null ? "null" : s.byteSize() + " bytes")
                    + " is smaller than " + bytes + " bytes");
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError("should not reach here", t);
    }
}
