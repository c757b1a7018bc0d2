package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.NativeCallException;
import io.cqflux.epoll.ffm.epoll_event;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The errno-capturing wrapper: results, "again" as a value, checks before the native call. */
class LibcTest {

    private final MemorySegment errno = Libc.threadErrno();

    @Test
    void eventfd_readWhenZero_returnsZeroInsteadOfEagain_andReadResetsTheCounter() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(8, 8);
            int fd = Libc.eventfd(errno);
            try {
                assertEquals(0, Libc.readEventfd(errno, fd, buf));
                Libc.signalEventfd(errno, fd);
                Libc.signalEventfd(errno, fd);
                Libc.signalEventfd(errno, fd);
                assertEquals(3, Libc.readEventfd(errno, fd, buf));
                assertEquals(0, Libc.readEventfd(errno, fd, buf));
            } finally {
                assertEquals(0, Libc.close(errno, fd));
            }
        }
    }

    @Test
    void epollWait_reportsTheDataOfEachReadyFd_unaligned() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment events = epoll_event.allocateArray(4, a);
            MemorySegment ev = epoll_event.allocate(a);
            int ep = Libc.epollCreate(errno);
            int fd1 = Libc.eventfd(errno);
            int fd2 = Libc.eventfd(errno);
            try {
                epoll_event.events(ev, libc_h.EPOLLIN());
                ev.set(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET, 0x1234_5678_9abc_def0L);
                assertEquals(0, Libc.epollCtl(errno, ep, libc_h.EPOLL_CTL_ADD(), fd1, ev));
                ev.set(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET, -2L);
                assertEquals(0, Libc.epollCtl(errno, ep, libc_h.EPOLL_CTL_ADD(), fd2, ev));
                assertEquals(0, Libc.epollWait(errno, ep, events, 4, 0));
                Libc.signalEventfd(errno, fd1);
                Libc.signalEventfd(errno, fd2);
                assertEquals(2, Libc.epollWait(errno, ep, events, 4, 0));
                long d0 = events.get(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET);
                long d1 = events.get(Libc.EVENT_DATA, Libc.EVENT_SIZE + Libc.EVENT_DATA_OFFSET);
                assertTrue((d0 == 0x1234_5678_9abc_def0L && d1 == -2L) || (d1 == 0x1234_5678_9abc_def0L && d0 == -2L),
                        "data " + Long.toHexString(d0) + ", " + Long.toHexString(d1));
                assertEquals(libc_h.EPOLLIN(), events.get(Libc.EVENT_EVENTS, Libc.EVENT_SIZE + Libc.EVENT_EVENTS_OFFSET));
            } finally {
                Libc.close(errno, fd1);
                Libc.close(errno, fd2);
                Libc.close(errno, ep);
            }
        }
    }

    @Test
    void epollCtl_onAClosedFd_returnsEbadf() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ev = epoll_event.allocate(a);
            int ep = Libc.epollCreate(errno);
            int fd = Libc.eventfd(errno);
            Libc.close(errno, fd);
            try {
                assertEquals(9, Libc.epollCtl(errno, ep, libc_h.EPOLL_CTL_ADD(), fd, ev)); // EBADF
            } finally {
                Libc.close(errno, ep);
            }
        }
    }

    @Test
    void epollWait_onANonEpollFd_throwsWithTheErrnoName() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment events = epoll_event.allocateArray(1, a);
            int fd = Libc.eventfd(errno);
            try {
                NativeCallException e = assertThrows(NativeCallException.class, () -> Libc.epollWait(errno, fd, events, 1, 0));
                assertEquals("EINVAL", e.codeName());
                assertEquals("epoll_wait", e.call());
            } finally {
                Libc.close(errno, fd);
            }
        }
    }

    @Test
    void badArguments_areRejectedBeforeTheNativeCall() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment small = a.allocate(12);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Libc.epollWait(errno, 0, small, 2, 0));
            assertTrue(e.getMessage().contains("12 bytes") && e.getMessage().contains("24"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> Libc.epollWait(errno, 0, small, 0, 0));
            assertThrows(IllegalArgumentException.class, () -> Libc.readEventfd(errno, -1, small));
            assertThrows(IllegalArgumentException.class, () -> Libc.readEventfd(errno, 0, a.allocate(4)));
            assertThrows(IllegalArgumentException.class, () -> Libc.epollCtl(errno, 0, 1, 0, MemorySegment.NULL));
        }
    }
}
