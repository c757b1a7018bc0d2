package io.cqflux.core.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.UnsupportedCapabilityException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Test fixture shared by {@link TransportContract} and transport-specific tests: a server and a
 * client transport per test, native memory and regions, a connected pair, the
 * {@link TransportPump}, and the transport-specific hooks of the contract. Resources registered
 * with {@link #closeLater} are closed after each test, last first, then both transports.
 */
public abstract class TransportFixture {

    /** Deadline of every wait. */
    protected static final Duration DEADLINE = Duration.ofSeconds(15);
    /** The server region's size. */
    protected static final int REGION = 1 << 20;

    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    /** The pump of the current test. */
    protected TransportPump pump;
    /** The server's transport. */
    protected Transport server;
    /** The client's transport. */
    protected Transport client;
    /** Native memory of the current test. */
    protected Arena arena;

    /** {@return a newly opened transport; called once for the server and once for the client} */
    protected abstract Transport openTransport();

    /**
     * {@return where the server listens: port 0 when the transport reports the bound port
     * ({@link Listener#address()}), else a free port the subclass picked}
     */
    protected abstract InetSocketAddress listenAddress();

    /** {@return the configuration of both sides' connections} */
    protected ConnectionConfig config() {
        return ConnectionConfig.DEFAULT;
    }

    /**
     * Checks the outcome of a signaled write to a region the peer has deregistered (a bad key).
     * Default (verbs RC / librpma): the write alone fails with {@code REM_ACCESS_ERR} and the
     * connection is then in error (on verbs the QP moves to the error state, so the event may be
     * LOST or nothing yet). fabric/tcp overrides: the target drops the connection, the write
     * fails with a flush/cancel status and the event is {@code LOST}.
     *
     * @param failed the write's completion
     * @param events the client's events after it
     */
    protected void checkBadKeyOutcome(CompletionRecord failed, List<ConnectionEvent> events) {
        assertEquals(CompletionStatus.REM_ACCESS_ERR, failed.status(), failed.toString());
    }

    /** {@return whether the bad-key outcome includes a terminal event on the client (see {@link #checkBadKeyOutcome})} */
    protected boolean badKeyEndsConnection() {
        return false;
    }

    /**
     * {@return whether a write with immediate consumes one of the target's posted receives (verbs:
     * always; libfabric: only with FI_RX_CQ_DATA mode, see the fabric subclass)}
     */
    protected boolean writeWithImmediateConsumesReceive() {
        return true;
    }

    /** The two connected ends and the server's region descriptor. */
    protected record Pair(TransportPump.Side clientSide, TransportPump.Side serverSide, Listener listener,
                          byte[] rawRequestData, byte[] rawAcceptData, int sentRequest, int sentAccept) {
        /** {@return the request data as sent: the received bytes without the transport's padding} */
        public byte[] requestData() {
            return java.util.Arrays.copyOf(rawRequestData, Math.min(sentRequest, rawRequestData.length));
        }

        /** {@return the accept data as sent: the received bytes without the transport's padding} */
        public byte[] acceptData() {
            return java.util.Arrays.copyOf(rawAcceptData, Math.min(sentAccept, rawAcceptData.length));
        }

        /** {@return the client connection} */
        public Connection client() {
            return clientSide.connection();
        }

        /** {@return the server connection} */
        public Connection server() {
            return serverSide.connection();
        }
    }

    @BeforeEach
    void openTransports() {
        arena = Arena.ofShared();
        pump = new TransportPump();
        server = openTransport();
        client = openTransport();
    }

    @AfterEach
    void closeEverything() {
        while (!resources.isEmpty()) {
            try {
                resources.pop().close();
            } catch (Exception e) {
                // keep closing
            }
        }
        client.close();
        server.close();
        pump.close();
        arena.close();
    }

    /**
     * Registers a resource to close after the test (last registered, first closed).
     *
     * @param <T> its type
     * @param c the resource
     * @return {@code c}
     */
    protected <T extends AutoCloseable> T closeLater(T c) {
        resources.push(c);
        return c;
    }

    /**
     * Registers {@code size} bytes of fresh native memory.
     *
     * @param t the transport
     * @param size bytes
     * @param access accesses
     * @return the region
     */
    protected LocalRegion region(Transport t, long size, RegionAccess... access) {
        MemorySegment m = arena.allocate(size, 4096);
        return closeLater(t.register(m, EnumSet.copyOf(List.of(access))));
    }

    /**
     * Connects the client to a new listener on the server and waits until both ends are established.
     *
     * @param requestData the client's private data
     * @param acceptData the server's private data
     * @return the pair
     */
    protected Pair connect(byte[] requestData, byte[] acceptData) {
        return connect(requestData, acceptData, config());
    }

    /**
     * Connects with a given configuration on both ends.
     *
     * @param requestData the client's private data
     * @param acceptData the server's private data
     * @param cfg the configuration
     * @return the pair
     */
    protected Pair connect(byte[] requestData, byte[] acceptData, ConnectionConfig cfg) {
        Listener l = closeLater(server.listen(listenAddress(), cfg));
        Deque<ConnectionRequest> reqs = pump.add(l);
        InetSocketAddress target = l.address();
        assertNotEquals(0, target.getPort(), "listener must report the port it is bound to");
        Connection c = closeLater(client.connect(target, cfg, requestData));
        TransportPump.Side cs = pump.add("client", c);
        pump.until("a connection request", DEADLINE, () -> !reqs.isEmpty());
        ConnectionRequest r = reqs.poll();
        byte[] got = r.privateData();
        Connection s = closeLater(r.accept(acceptData));
        TransportPump.Side ss = pump.add("server", s);
        pump.until("both ends established", DEADLINE,
                () -> cs.events.contains(ConnectionEvent.ESTABLISHED) && ss.events.contains(ConnectionEvent.ESTABLISHED));
        return new Pair(cs, ss, l, got, c.peerPrivateData(), requestData == null ? 0 : requestData.length,
                acceptData == null ? 0 : acceptData.length);
    }

    /**
     * Waits for the completion with a context on one side and takes it.
     *
     * @param s the side
     * @param context the context
     * @return the completion
     */
    protected CompletionRecord await(TransportPump.Side s, long context) {
        pump.until("completion 0x" + Long.toHexString(context), DEADLINE,
                () -> s.completions.stream().anyMatch(c -> c.context() == context));
        for (int i = 0; i < s.completions.size(); i++) {
            if (s.completions.get(i).context() == context) {
                return s.completions.remove(i);
            }
        }
        throw new AssertionError("unreachable");
    }

    /** Posts until the transport accepts (a full queue returns false, which is legal).
     *
     * @param what for the failure message
     * @param op the post
     */
    protected static void post(String what, java.util.function.BooleanSupplier op) {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!op.getAsBoolean()) {
            if (System.nanoTime() > end) {
                fail(what + " was never accepted");
            }
        }
    }

    /** @param s text @return its UTF-8 bytes */
    protected static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
