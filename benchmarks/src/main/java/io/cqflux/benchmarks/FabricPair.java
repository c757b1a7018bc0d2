package io.cqflux.benchmarks;

import io.cqflux.core.Completion;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import io.cqflux.transport.fabric.Fabric;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopConfig;
import io.cqflux.epoll.loop.Registration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A fabric ({@code tcp} provider) client and server on 127.0.0.1, each with its own transport
 * and its own event loop, connected through the SPI: the Java counterpart of the two threads of
 * {@code c/fabric_rma_bench.c}. The server's loop only drives progress (tcp has no progress
 * thread, {@code fi_cq(3)}); the client's completions go to {@link #clientSink}, which the
 * benchmark sets.
 *
 * <p>Thread safety: build and {@link #close()} from one (benchmark) thread; the connections are
 * confined to their loops. Lifetime: {@link #close()} disconnects, unregisters and frees in the
 * reverse order of construction; idempotent.
 */
final class FabricPair implements AutoCloseable {

    /** Bytes registered on each side: room for a window of 4 KiB operations. */
    static final long REGION_BYTES = 1 << 20;
    /** Bound of every wait: set-up, tear-down, one invocation (generous: busy-polling threads on
     *  an overloaded 2-core machine can starve for whole scheduler slices). */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    final EventLoop serverLoop;
    final EventLoop clientLoop;
    private final Arena arena = Arena.ofShared();
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private Transport serverTransport;
    private Transport clientTransport;
    LocalRegion serverRegion;
    LocalRegion clientRegion;
    Connection server;
    Connection client;
    RemoteRegion remote;
    /** Where the client's completions go; set on the client loop. */
    CompletionSink clientSink = c -> { };
    private boolean closed;

    FabricPair(WaitStrategy strategy, ConnectionConfig config) {
        if (!Fabric.isAvailable()) {
            throw new IllegalStateException("fabric transport unavailable: " + Fabric.unavailabilityCause());
        }
        serverLoop = EventLoop.start(new LoopConfig("bench-fabric-server", strategy, 32, null));
        clientLoop = EventLoop.start(new LoopConfig("bench-fabric-client", strategy, 32, null));
        try {
            InetAddress lo = InetAddress.getLoopbackAddress();
            serverTransport = Fabric.open(lo);
            clientTransport = Fabric.open(lo);
            MemorySegment serverMemory = arena.allocate(REGION_BYTES, 4096);
            MemorySegment clientMemory = arena.allocate(REGION_BYTES, 4096);
            serverRegion = serverTransport.register(serverMemory,
                    EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC));
            clientRegion = clientTransport.register(clientMemory,
                    EnumSet.of(RegionAccess.WRITE_SRC, RegionAccess.READ_DST));
            InetSocketAddress address = new InetSocketAddress(lo, freePort());
            CompletableFuture<Connection> serverUp = new CompletableFuture<>();
            onLoop(serverLoop, () -> {
                Listener listener = serverTransport.listen(address, config);
                toClose.add(listener);
                toClose.add(serverLoop.register(listener, () -> {
                    var request = listener.nextRequest();
                    while (request != null) {
                        Connection c = request.accept(serverRegion.descriptor());
                        for (CompletionQueue cq : c.completionQueues()) {
                            toClose.add(serverLoop.register(cq, this::serverCompletion));
                        }
                        toClose.add(serverLoop.register(c.events(), () -> drainEvents(c, serverUp)));
                        request = listener.nextRequest();
                    }
                }));
                return null;
            });
            CompletableFuture<Connection> clientUp = new CompletableFuture<>();
            onLoop(clientLoop, () -> {
                Connection c = clientTransport.connect(address, config, new byte[0]);
                for (CompletionQueue cq : c.completionQueues()) {
                    toClose.add(clientLoop.register(cq, comp -> clientSink.onCompletion(comp)));
                }
                toClose.add(clientLoop.register(c.events(), () -> drainEvents(c, clientUp)));
                return null;
            });
            client = wait(clientUp, "client connection");
            server = wait(serverUp, "server connection");
            remote = onLoop(clientLoop, () -> clientTransport.remoteRegion(client.peerPrivateData()));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void serverCompletion(Completion c) {
        // The target of an RMA sees no completion; anything here is unexpected.
        if (!c.isSuccess()) {
            System.err.println("server completion error: " + c);
        }
    }

    private static void drainEvents(Connection c, CompletableFuture<Connection> up) {
        ConnectionEvent e = c.events().nextEvent();
        while (e != null) {
            switch (e) {
                case ESTABLISHED -> up.complete(c);
                case CLOSED, LOST, REJECTED, UNREACHABLE -> {
                    if (!up.isDone()) {
                        up.completeExceptionally(new IllegalStateException("connection " + c.description() + ": " + e));
                    }
                }
            }
            e = c.events().nextEvent();
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on the loopback interface", e);
        }
    }

    /** Runs {@code task} on {@code loop} and waits for its result (bounded). */
    static <T> T onLoop(EventLoop loop, java.util.concurrent.Callable<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return wait(f, "task on " + loop.name());
    }

    static <T> T wait(CompletableFuture<T> f, String what) {
        try {
            return f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException(what + " did not finish within " + TIMEOUT, e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(what + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + " interrupted", e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // Unregister and close loop-confined objects on their loops, newest first.
        Runnable closeConfined = () -> {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                AutoCloseable a = toClose.get(i);
                try {
                    a.close();
                } catch (Exception e) {
                    System.err.println("close " + a + ": " + e);
                }
            }
        };
        quietly(() -> onLoop(clientLoop, () -> {
            if (client != null) {
                client.disconnect();
            }
            return null;
        }));
        quietly(() -> onLoop(serverLoop, () -> {
            closeConfined.run();
            if (server != null) {
                server.close();
            }
            return null;
        }));
        quietly(() -> onLoop(clientLoop, () -> {
            if (remote != null) {
                remote.close();
            }
            if (client != null) {
                client.close();
            }
            return null;
        }));
        quietly(() -> clientLoop.shutdownGracefully(TIMEOUT).get(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS));
        quietly(() -> serverLoop.shutdownGracefully(TIMEOUT).get(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS));
        for (AutoCloseable a : new AutoCloseable[] {clientRegion, serverRegion, clientTransport, serverTransport}) {
            if (a != null) {
                quietly(() -> {
                    a.close();
                    return null;
                });
            }
        }
        arena.close();
    }

    private static void quietly(java.util.concurrent.Callable<?> c) {
        try {
            c.call();
        } catch (Exception e) {
            System.err.println("while closing the fabric pair: " + e);
        }
    }
}
