package io.cqflux.epoll.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.cqflux.core.testing.CProbe;
import io.cqflux.epoll.ffm.epoll_data;
import io.cqflux.epoll.ffm.epoll_event;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every layout and constant of io.cqflux.epoll.ffm against the installed glibc headers. */
class LibcBindingTest {

    private static Map<String, Long> c;

    @BeforeAll
    static void probe() {
        c = CProbe.run("libc_epoll", """
                #include <errno.h>
                #include <stddef.h>
                #include <stdio.h>
                #include <sys/epoll.h>
                #include <sys/eventfd.h>
                #define P(n, v) printf("%s %lld\\n", n, (long long) (v))
                int main(void) {
                    P("sizeof_epoll_event", sizeof(struct epoll_event));
                    P("offsetof_events", offsetof(struct epoll_event, events));
                    P("offsetof_data", offsetof(struct epoll_event, data));
                    P("alignof_epoll_event", _Alignof(struct epoll_event));
                    P("sizeof_epoll_data", sizeof(epoll_data_t));
                    P("sizeof_ssize_t", sizeof(ssize_t));
                    P("EPOLL_CLOEXEC", EPOLL_CLOEXEC);
                    P("EPOLLIN", EPOLLIN);
                    P("EPOLLERR", EPOLLERR);
                    P("EPOLLHUP", EPOLLHUP);
                    P("EPOLL_CTL_ADD", EPOLL_CTL_ADD);
                    P("EPOLL_CTL_DEL", EPOLL_CTL_DEL);
                    P("EPOLL_CTL_MOD", EPOLL_CTL_MOD);
                    P("EFD_CLOEXEC", EFD_CLOEXEC);
                    P("EFD_NONBLOCK", EFD_NONBLOCK);
                    P("EINTR", EINTR);
                    P("EAGAIN", EAGAIN);
                    return 0;
                }
                """);
    }

    @Test
    void epollEvent_isPacked12BytesWithDataAtOffset4() {
        assertEquals(c.get("sizeof_epoll_event"), epoll_event.sizeof());
        assertEquals(12L, epoll_event.sizeof());
        assertEquals(c.get("offsetof_events"), epoll_event.events$offset());
        assertEquals(c.get("offsetof_data"), epoll_event.data$offset());
        assertEquals(4L, epoll_event.data$offset());
        assertEquals(c.get("alignof_epoll_event"), epoll_event.layout().byteAlignment());
        assertEquals(c.get("sizeof_epoll_data"), epoll_data.sizeof());
        assertEquals(c.get("sizeof_epoll_data"), epoll_event.data$layout().byteSize());
        assertEquals(c.get("sizeof_ssize_t"), libc_h.C_LONG.byteSize());
        assertEquals(Libc.EVENT_SIZE, epoll_event.sizeof());
        assertEquals(1L, Libc.EVENT_DATA.byteAlignment());
    }

    @Test
    void packedData_defeatsTheUnionsAlignedAccessor_soTheLoopReadsItUnaligned() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment array = epoll_event.allocateArray(2, a); // 8-aligned base: data[0] at 4 mod 8
            // jextract's union accessor assumes 8-byte alignment: misaligned for every other entry
            assertThrows(IllegalArgumentException.class, () -> epoll_data.u64(epoll_event.data(array)));
            array.set(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET, 0x0102_0304_0506_0708L);
            array.set(Libc.EVENT_DATA, Libc.EVENT_SIZE + Libc.EVENT_DATA_OFFSET, -3L);
            assertEquals(0x0102_0304_0506_0708L, array.get(Libc.EVENT_DATA, Libc.EVENT_DATA_OFFSET));
            assertEquals(-3L, epoll_data.u64(epoll_event.data(epoll_event.asSlice(array, 1))));
        }
    }

    @Test
    void constants_matchTheHeaders() {
        assertEquals(c.get("EPOLL_CLOEXEC"), (long) libc_h.EPOLL_CLOEXEC());
        assertEquals(c.get("EPOLLIN"), (long) libc_h.EPOLLIN());
        assertEquals(c.get("EPOLLERR"), (long) libc_h.EPOLLERR());
        assertEquals(c.get("EPOLLHUP"), (long) libc_h.EPOLLHUP());
        assertEquals(c.get("EPOLL_CTL_ADD"), (long) libc_h.EPOLL_CTL_ADD());
        assertEquals(c.get("EPOLL_CTL_DEL"), (long) libc_h.EPOLL_CTL_DEL());
        assertEquals(c.get("EPOLL_CTL_MOD"), (long) libc_h.EPOLL_CTL_MOD());
        assertEquals(c.get("EFD_CLOEXEC"), (long) libc_h.EFD_CLOEXEC());
        assertEquals(c.get("EFD_NONBLOCK"), (long) libc_h.EFD_NONBLOCK());
        assertEquals(c.get("EINTR"), (long) libc_h.EINTR());
        assertEquals(c.get("EAGAIN"), (long) libc_h.EAGAIN());
    }
}
