package io.cqflux.transport.fabric.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.testing.CProbe;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link socket_h}, kept by hand in jextract's shape, against the installed glibc headers. */
class SocketBindingTest {

    @Test
    void constantsAndTimeval_matchTheHeaders_andTheFunctionsResolve() {
        Map<String, Long> c = CProbe.run("socket_h", """
                #include <stddef.h>
                #include <stdio.h>
                #include <sys/socket.h>
                #include <sys/time.h>
                #define P(n, v) printf("%s %lld\\n", n, (long long) (v))
                int main(void) {
                    P("SOL_SOCKET", SOL_SOCKET);
                    P("SO_RCVTIMEO", SO_RCVTIMEO);
                    P("SO_ACCEPTCONN", SO_ACCEPTCONN);
                    P("sizeof_timeval", sizeof(struct timeval));
                    P("offsetof_tv_sec", offsetof(struct timeval, tv_sec));
                    P("offsetof_tv_usec", offsetof(struct timeval, tv_usec));
                    P("sizeof_tv_usec", sizeof(((struct timeval *) 0)->tv_usec));
                    P("sizeof_socklen_t", sizeof(socklen_t));
                    return 0;
                }
                """);
        assertEquals(c.get("SOL_SOCKET"), (long) socket_h.SOL_SOCKET());
        assertEquals(c.get("SO_RCVTIMEO"), (long) socket_h.SO_RCVTIMEO());
        assertEquals(c.get("SO_ACCEPTCONN"), (long) socket_h.SO_ACCEPTCONN());
        assertEquals(c.get("sizeof_timeval"), socket_h.timeval$LAYOUT.byteSize());
        assertEquals(c.get("offsetof_tv_sec"), socket_h.timeval$LAYOUT.byteOffset(
                java.lang.foreign.MemoryLayout.PathElement.groupElement("tv_sec")));
        assertEquals(c.get("offsetof_tv_usec"), socket_h.timeval$LAYOUT.byteOffset(
                java.lang.foreign.MemoryLayout.PathElement.groupElement("tv_usec")));
        assertEquals(c.get("sizeof_tv_usec"), fabric_h.C_LONG.byteSize());
        assertEquals(4L, c.get("sizeof_socklen_t"), "socklen_t is passed as a 4-byte int");
        assertTrue(socket_h.getsockname$address().address() != 0);
        assertTrue(socket_h.getsockopt$address().address() != 0);
        assertTrue(socket_h.setsockopt$address().address() != 0);
    }
}
