package io.cqflux.benchmarks;

import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Queue;

/** An eventfd that other threads write to wake the loop; writes after close are dropped. */
final class SynSignal {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment one;
    private final MemorySegment sink;
    private final int fd;
    private boolean closed;

    SynSignal() {
        // eventfd(2): a write adds to the counter and makes the fd readable, a read resets it.
        fd = libc_h.eventfd(0, libc_h.EFD_NONBLOCK() | libc_h.EFD_CLOEXEC());
        if (fd < 0) {
            arena.close();
            throw new IllegalStateException("eventfd(0, EFD_NONBLOCK|EFD_CLOEXEC) returned " + fd);
        }
        one = arena.allocate(ValueLayout.JAVA_LONG);
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        sink = arena.allocate(ValueLayout.JAVA_LONG);
    }

    int fd() {
        return fd;
    }

    /** Any thread; under the lock so that a closed (and perhaps reused) fd is never written. */
    synchronized void signal() {
        if (!closed) {
            libc_h.write(fd, one, 8L);
        }
    }

    /** Resets the counter; EAGAIN when nothing was written is fine. */
    synchronized void clear() {
        if (!closed) {
            libc_h.read(fd, sink, 8L);
        }
    }

    /**
     * Takes the head of {@code queue}, which producers add to before they {@link #signal()}; when
     * it is empty, resets the counter and looks once more, for an element added in between.
     * The loop thread.
     */
    <T> T poll(Queue<T> queue) {
        T e = queue.poll();
        if (e == null) {
            clear();
            e = queue.poll(); // one added between the poll and the clear
        }
        return e;
    }

    synchronized void close() {
        if (!closed) {
            closed = true;
            libc_h.close(fd);
            arena.close();
        }
    }
}
