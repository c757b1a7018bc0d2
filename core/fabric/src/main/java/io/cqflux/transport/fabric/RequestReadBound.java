package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.socket_h.SOL_SOCKET;
import static io.cqflux.transport.fabric.ffm.socket_h.SO_ACCEPTCONN;
import static io.cqflux.transport.fabric.ffm.socket_h.SO_RCVTIMEO;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import io.cqflux.core.internal.SocketAddresses;
import io.cqflux.transport.fabric.ffm.socket_h;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Bounds how long libfabric 1.17's tcp provider may wait, inside {@code fi_eq_read(3)} of a
 * passive endpoint's event queue, for the bytes of a connection request.
 *
 * <p><b>Facts the code depends on</b> ({@code core/fabric/src/test/c/cm_stall_probe.c},
 * {@code FabricTransportTest.aPartialConnectionRequest_…}):
 * <ul>
 *   <li>The provider accepts an incoming TCP connection itself and reads the request (a 32-byte
 *       header, then the private data it announces) from that blocking socket with
 *       {@code recv(2)} when the listener's event queue is read and the socket is readable. A
 *       client that sends the header and then nothing holds that read, and so the caller of
 *       {@code fi_eq_read}, for as long as it keeps the socket open: in the probe, 2 s until an
 *       alarm cut it. cqflux reads a listener's event queue on the server's event loop, so one
 *       such socket, 32 bytes, stalled every connection of that loop.</li>
 *   <li>A real client's request is one {@code send(2)} (header and private data, at most
 *       32 + 256 bytes; strace of libfabric's client): the bytes arrive together, and the
 *       provider's read of them never waits.</li>
 *   <li>On Linux an accepted socket takes over its listening socket's {@code SO_RCVTIMEO}
 *       (socket(7)). With it set on the passive endpoint's socket, the read above returns after
 *       that time, the provider stops reading that request (the client's connect is never
 *       answered; the socket is closed once the client closes it), and
 *       a well-formed request is still reported.</li>
 * </ul>
 * The provider does not say which fd is its listening socket: it is found among
 * {@code /proc/self/fd} as the socket that listens ({@code SO_ACCEPTCONN}) on the passive
 * endpoint's bound address, once per listener. Where it cannot be found the listener goes on
 * without the bound, and says so.
 */
final class RequestReadBound {
    /**
     * The longest the provider may wait for the rest of a request: a real one arrives in one
     * segment, so this is only what a client that stops mid-request holds the reader for. The
     * kernel counts it in its ticks, rounded up (socket(7)): about 4 ms at 250 Hz; the listener's
     * read was held at most 6.9 ms in FabricTransportTest.
     */
    static final Duration BOUND = Duration.ofMillis(2);

    private static final System.Logger LOG = System.getLogger(RequestReadBound.class.getName());

    private RequestReadBound() {
    }

    /** Sets {@link #BOUND} as the receive timeout of the socket listening on {@code bound}; where it cannot, says so. */
    static void apply(InetSocketAddress bound) {
        int fd = listeningFd(bound);
        if (fd < 0) {
            LOG.log(System.Logger.Level.WARNING, "listener {0}: its listening socket was not found among"
                    + " /proc/self/fd, so a client that sends part of a connection request and then nothing can hold"
                    + " the server''s event loop for as long as it keeps its socket open (libfabric 1.17 tcp reads"
                    + " requests with a blocking recv)", bound);
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment tv = a.allocate(socket_h.timeval$LAYOUT);
            tv.set(ValueLayout.JAVA_LONG, socket_h.timeval$LAYOUT.byteOffset(groupElement("tv_sec")), 0);
            tv.set(ValueLayout.JAVA_LONG, socket_h.timeval$LAYOUT.byteOffset(groupElement("tv_usec")),
                    BOUND.toNanos() / 1_000);
            if (socket_h.setsockopt(fd, SOL_SOCKET(), SO_RCVTIMEO(), tv, (int) tv.byteSize()) != 0) {
                LOG.log(System.Logger.Level.WARNING, "listener {0}: setsockopt(SO_RCVTIMEO) on fd {1} failed; a"
                        + " client that stops mid-request can hold the server''s event loop", bound, fd);
            }
        }
    }

    /** {@return the fd of the socket that listens on {@code bound}'s address and port, or -1} */
    static int listeningFd(InetSocketAddress bound) {
        try (Arena a = Arena.ofConfined();
             DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            MemorySegment addr = a.allocate(128, 8);
            MemorySegment len = a.allocate(ValueLayout.JAVA_INT);
            MemorySegment flag = a.allocate(ValueLayout.JAVA_INT);
            MemorySegment flagLen = a.allocate(ValueLayout.JAVA_INT);
            for (Path p : fds) {
                int fd;
                try {
                    fd = Integer.parseInt(p.getFileName().toString());
                    if (!Files.readSymbolicLink(p).toString().startsWith("socket:")) {
                        continue;
                    }
                } catch (NumberFormatException | IOException e) {
                    continue; // not an fd, or closed meanwhile
                }
                len.set(ValueLayout.JAVA_INT, 0, (int) addr.byteSize());
                if (socket_h.getsockname(fd, addr, len) != 0) {
                    continue;
                }
                InetSocketAddress name = SocketAddresses.decode(addr);
                if (name == null || !name.equals(bound)) {
                    continue;
                }
                flagLen.set(ValueLayout.JAVA_INT, 0, 4);
                if (socket_h.getsockopt(fd, SOL_SOCKET(), SO_ACCEPTCONN(), flag, flagLen) == 0
                        && flag.get(ValueLayout.JAVA_INT, 0) != 0) {
                    return fd;
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }
}
