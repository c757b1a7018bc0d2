package io.cqflux.samples.webflux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** A free TCP port on loopback for the embedded storage peer (fabric/tcp listens on TCP). */
final class FreePort {
    private FreePort() {
    }

    static int next() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
