package io.cqflux.transport.rpma;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.Pollable;
import io.cqflux.core.testing.FreePorts;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Test support for the Soft-RoCE lane: the guest's RDMA address, free ports, and a minimal
 * single-threaded driver (waits with {@code poll(2)} and a deadline on the fds the event loop
 * would register; never sleeps). Client and server run in the same JVM on the same address.
 */
final class LaneSupport {

    static final Duration TIMEOUT = Duration.ofSeconds(15);
    private static final MethodHandle POLL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    private LaneSupport() {
    }

    /** {@return the guest's eth0 address with rxe0 on it: env CQFLUX_RPMA_ADDRESS or -Dcqflux.rpma.address; fails loudly without} */
    static InetAddress address() throws IOException {
        String a = System.getProperty("cqflux.rpma.address", System.getenv("CQFLUX_RPMA_ADDRESS"));
        if (a == null || a.isBlank()) {
            throw new AssertionError("rpma lane tests need CQFLUX_RPMA_ADDRESS (or -Dcqflux.rpma.address): run them"
                    + " through scripts/softroce (they are tagged 'rpma' and excluded from the host run)");
        }
        return InetAddress.getByName(a);
    }

    /** {@return an address on {@code a} with a port no listener of this JVM holds ({@link FreePorts})} */
    static InetSocketAddress freePort(InetAddress a) {
        return new InetSocketAddress(a, FreePorts.next(a));
    }

    /** Waits until {@code fd} is readable or the timeout passes. */
    static void awaitReadable(int fd, long deadlineNanos) {
        long ms = Math.max(0, (deadlineNanos - System.nanoTime()) / 1_000_000);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(8, 8);
            pfd.set(ValueLayout.JAVA_INT, 0, fd);
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1);
            int n = (int) POLL.invokeExact(pfd, 1L, (int) Math.min(ms, 1000));
            if (n < 0) {
                throw new AssertionError("poll failed on fd " + fd);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    static <T> T await(Pollable source, Supplier<T> next, String what) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            T t = next.get();
            if (t != null) {
                return t;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + TIMEOUT + " waiting for " + what);
            }
            awaitReadable(source.fd(), deadline);
        }
    }

    static ConnectionEvent awaitEvent(Connection c) {
        return await(c.events(), c.events()::nextEvent, "an event on " + c.description());
    }

    static ConnectionRequest awaitRequest(Listener l) {
        return await(l, l::nextRequest, "a connection request on " + l.address());
    }

    /** Drives a CQ like the loop does (acknowledge, then drain) until {@code n} completions arrived. */
    static List<CompletionRecord> awaitCompletions(CompletionQueue q, MemorySegment scratch, int n, List<Integer> batches) {
        List<CompletionRecord> got = new ArrayList<>();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            q.acknowledge();
            int k;
            do {
                k = q.poll(scratch, 16, c -> got.add(c.snapshot()));
                if (k > 0 && batches != null) {
                    batches.add(k);
                }
            } while (k == 16);
            if (got.size() >= n) {
                return got;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + TIMEOUT + " with " + got.size() + " of " + n
                        + " completions on " + q + ": " + got);
            }
            awaitReadable(q.fd(), deadline);
        }
    }
}
