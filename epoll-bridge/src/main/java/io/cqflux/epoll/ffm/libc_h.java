// Generated in the shape of jextract (JDK 22+) from <sys/epoll.h>, <sys/eventfd.h>, <unistd.h> and
// <errno.h> (glibc, x86-64) with the symbol list scripts/jextract/libc-epoll.symbols; regenerate with
// scripts/jextract/libc-epoll.sh where jextract is installed. DO NOT EDIT by hand.

package io.cqflux.epoll.ffm;

import java.lang.foreign.*;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.*;

/** jextract-shaped bindings of the libc calls the event loop uses: one holder per function, constants as methods. */
@SuppressWarnings({"unused", "checkstyle:all"})
public class libc_h extends libc_h$shared {

    libc_h() {
        // Should not be called directly
    }
    private static final int EPOLL_CLOEXEC = (int)524288L;
    /**
     * {@snippet lang=c :
     * enum EPOLL_CLOEXEC = 524288
     * }
     */
    public static int EPOLL_CLOEXEC() {
        return EPOLL_CLOEXEC;
    }
    private static final int EPOLLIN = (int)1L;
    /**
     * {@snippet lang=c :
     * enum EPOLL_EVENTS.EPOLLIN = 1
     * }
     */
    public static int EPOLLIN() {
        return EPOLLIN;
    }
    private static final int EPOLLERR = (int)8L;
    /**
     * {@snippet lang=c :
     * enum EPOLL_EVENTS.EPOLLERR = 8
     * }
     */
    public static int EPOLLERR() {
        return EPOLLERR;
    }
    private static final int EPOLLHUP = (int)16L;
    /**
     * {@snippet lang=c :
     * enum EPOLL_EVENTS.EPOLLHUP = 16
     * }
     */
    public static int EPOLLHUP() {
        return EPOLLHUP;
    }
    private static final int EPOLL_CTL_ADD = (int)1L;
    /**
     * {@snippet lang=c :
     * #define EPOLL_CTL_ADD 1
     * }
     */
    public static int EPOLL_CTL_ADD() {
        return EPOLL_CTL_ADD;
    }
    private static final int EPOLL_CTL_DEL = (int)2L;
    /**
     * {@snippet lang=c :
     * #define EPOLL_CTL_DEL 2
     * }
     */
    public static int EPOLL_CTL_DEL() {
        return EPOLL_CTL_DEL;
    }
    private static final int EPOLL_CTL_MOD = (int)3L;
    /**
     * {@snippet lang=c :
     * #define EPOLL_CTL_MOD 3
     * }
     */
    public static int EPOLL_CTL_MOD() {
        return EPOLL_CTL_MOD;
    }
    private static final int EFD_CLOEXEC = (int)524288L;
    /**
     * {@snippet lang=c :
     * enum EFD_CLOEXEC = 524288
     * }
     */
    public static int EFD_CLOEXEC() {
        return EFD_CLOEXEC;
    }
    private static final int EFD_NONBLOCK = (int)2048L;
    /**
     * {@snippet lang=c :
     * enum EFD_NONBLOCK = 2048
     * }
     */
    public static int EFD_NONBLOCK() {
        return EFD_NONBLOCK;
    }
    private static final int EINTR = (int)4L;
    /**
     * {@snippet lang=c :
     * #define EINTR 4
     * }
     */
    public static int EINTR() {
        return EINTR;
    }
    private static final int EAGAIN = (int)11L;
    /**
     * {@snippet lang=c :
     * #define EAGAIN 11
     * }
     */
    public static int EAGAIN() {
        return EAGAIN;
    }

    private static class epoll_create1 {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("epoll_create1");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int epoll_create1(int __flags)
     * }
     */
    public static FunctionDescriptor epoll_create1$descriptor() {
        return epoll_create1.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int epoll_create1(int __flags)
     * }
     */
    public static MethodHandle epoll_create1$handle() {
        return epoll_create1.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int epoll_create1(int __flags)
     * }
     */
    public static MemorySegment epoll_create1$address() {
        return epoll_create1.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int epoll_create1(int __flags)
     * }
     */
    public static int epoll_create1(int __flags) {
        var mh$ = epoll_create1.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("epoll_create1", __flags);
            }
            return (int)mh$.invokeExact(__flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class epoll_ctl {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT,
            libc_h.C_INT,
            libc_h.C_INT,
            libc_h.C_POINTER
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("epoll_ctl");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int epoll_ctl(int __epfd, int __op, int __fd, struct epoll_event *__event)
     * }
     */
    public static FunctionDescriptor epoll_ctl$descriptor() {
        return epoll_ctl.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int epoll_ctl(int __epfd, int __op, int __fd, struct epoll_event *__event)
     * }
     */
    public static MethodHandle epoll_ctl$handle() {
        return epoll_ctl.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int epoll_ctl(int __epfd, int __op, int __fd, struct epoll_event *__event)
     * }
     */
    public static MemorySegment epoll_ctl$address() {
        return epoll_ctl.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int epoll_ctl(int __epfd, int __op, int __fd, struct epoll_event *__event)
     * }
     */
    public static int epoll_ctl(int __epfd, int __op, int __fd, MemorySegment __event) {
        var mh$ = epoll_ctl.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("epoll_ctl", __epfd, __op, __fd, __event);
            }
            return (int)mh$.invokeExact(__epfd, __op, __fd, __event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class epoll_wait {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT,
            libc_h.C_POINTER,
            libc_h.C_INT,
            libc_h.C_INT
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("epoll_wait");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int epoll_wait(int __epfd, struct epoll_event *__events, int __maxevents, int __timeout)
     * }
     */
    public static FunctionDescriptor epoll_wait$descriptor() {
        return epoll_wait.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int epoll_wait(int __epfd, struct epoll_event *__events, int __maxevents, int __timeout)
     * }
     */
    public static MethodHandle epoll_wait$handle() {
        return epoll_wait.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int epoll_wait(int __epfd, struct epoll_event *__events, int __maxevents, int __timeout)
     * }
     */
    public static MemorySegment epoll_wait$address() {
        return epoll_wait.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int epoll_wait(int __epfd, struct epoll_event *__events, int __maxevents, int __timeout)
     * }
     */
    public static int epoll_wait(int __epfd, MemorySegment __events, int __maxevents, int __timeout) {
        var mh$ = epoll_wait.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("epoll_wait", __epfd, __events, __maxevents, __timeout);
            }
            return (int)mh$.invokeExact(__epfd, __events, __maxevents, __timeout);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class eventfd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT,
            libc_h.C_INT
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("eventfd");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int eventfd(unsigned int __count, int __flags)
     * }
     */
    public static FunctionDescriptor eventfd$descriptor() {
        return eventfd.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int eventfd(unsigned int __count, int __flags)
     * }
     */
    public static MethodHandle eventfd$handle() {
        return eventfd.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int eventfd(unsigned int __count, int __flags)
     * }
     */
    public static MemorySegment eventfd$address() {
        return eventfd.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int eventfd(unsigned int __count, int __flags)
     * }
     */
    public static int eventfd(int __count, int __flags) {
        var mh$ = eventfd.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("eventfd", __count, __flags);
            }
            return (int)mh$.invokeExact(__count, __flags);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class read {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_LONG,
            libc_h.C_INT,
            libc_h.C_POINTER,
            libc_h.C_LONG
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("read");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * ssize_t read(int __fd, void *__buf, size_t __nbytes)
     * }
     */
    public static FunctionDescriptor read$descriptor() {
        return read.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * ssize_t read(int __fd, void *__buf, size_t __nbytes)
     * }
     */
    public static MethodHandle read$handle() {
        return read.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * ssize_t read(int __fd, void *__buf, size_t __nbytes)
     * }
     */
    public static MemorySegment read$address() {
        return read.ADDR;
    }

    /**
     * {@snippet lang=c :
     * ssize_t read(int __fd, void *__buf, size_t __nbytes)
     * }
     */
    public static long read(int __fd, MemorySegment __buf, long __nbytes) {
        var mh$ = read.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("read", __fd, __buf, __nbytes);
            }
            return (long)mh$.invokeExact(__fd, __buf, __nbytes);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class write {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_LONG,
            libc_h.C_INT,
            libc_h.C_POINTER,
            libc_h.C_LONG
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("write");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * ssize_t write(int __fd, const void *__buf, size_t __n)
     * }
     */
    public static FunctionDescriptor write$descriptor() {
        return write.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * ssize_t write(int __fd, const void *__buf, size_t __n)
     * }
     */
    public static MethodHandle write$handle() {
        return write.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * ssize_t write(int __fd, const void *__buf, size_t __n)
     * }
     */
    public static MemorySegment write$address() {
        return write.ADDR;
    }

    /**
     * {@snippet lang=c :
     * ssize_t write(int __fd, const void *__buf, size_t __n)
     * }
     */
    public static long write(int __fd, MemorySegment __buf, long __n) {
        var mh$ = write.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("write", __fd, __buf, __n);
            }
            return (long)mh$.invokeExact(__fd, __buf, __n);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class close {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("close");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int close(int __fd)
     * }
     */
    public static FunctionDescriptor close$descriptor() {
        return close.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int close(int __fd)
     * }
     */
    public static MethodHandle close$handle() {
        return close.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int close(int __fd)
     * }
     */
    public static MemorySegment close$address() {
        return close.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int close(int __fd)
     * }
     */
    public static int close(int __fd) {
        var mh$ = close.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("close", __fd);
            }
            return (int)mh$.invokeExact(__fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class nice {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            libc_h.C_INT,
            libc_h.C_INT
        );

        public static final MemorySegment ADDR = libc_h.findOrThrow("nice");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int nice(int __inc)
     * }
     */
    public static FunctionDescriptor nice$descriptor() {
        return nice.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int nice(int __inc)
     * }
     */
    public static MethodHandle nice$handle() {
        return nice.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int nice(int __inc)
     * }
     */
    public static MemorySegment nice$address() {
        return nice.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int nice(int __inc)
     * }
     */
    public static int nice(int __inc) {
        var mh$ = nice.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("nice", __inc);
            }
            return (int)mh$.invokeExact(__inc);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }
}
