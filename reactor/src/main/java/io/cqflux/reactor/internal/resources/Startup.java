package io.cqflux.reactor.internal.resources;

import io.cqflux.core.Capability;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.internal.Transports;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.epoll.loop.LoopConfig;
import io.cqflux.reactor.Cqflux;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * How a {@link Cqflux} comes up, for {@link Cqflux.Builder}: the transport opened and held to what
 * the builder declared, the event loops started (and stopped again when one fails to start), and the
 * builder's checks and defaults that ask the host (its interface addresses, its processors); its
 * other checks are {@link Arguments}'. The builder keeps the public settings and their documented
 * bounds; nothing here is API.
 */
public final class Startup {
    /** The entry point's logger: the line naming the transport chosen is {@code Cqflux}'s. */
    private static final Logger LOG = Loggers.getLogger(Cqflux.class);

    private Startup() {
    }

    /**
     * Opens the transport the builder chose. A declaration of direct writes to persistent memory
     * on a transport that cannot deliver a PERSISTENT flush is refused here, and the transport
     * closed again: the declaration promises peers persistence, so it is never silently dropped.
     *
     * @param name the provider's name, or {@code auto}
     * @param options what the transport is opened with
     * @return the open transport; one INFO line names it (and what {@code auto} skipped)
     * @throws UnsupportedCapabilityException when the declaration cannot be honoured
     */
    public static Transport openTransport(String name, TransportOptions options) {
        Transports.Opened o = Transports.open(name, options);
        if (options.directWriteToPersistentMemory()
                && !o.transport().capabilities().contains(Capability.FLUSH_PERSISTENT)) {
            // The declaration promises peers persistence this transport cannot give: refused,
            // not left to fail later at a region's registration (or never, for a caller that
            // registers no FLUSH_TYPE_PERSISTENT region and believes its writes durable).
            String chosen = o.transport().name();
            UnsupportedCapabilityException refused = new UnsupportedCapabilityException(
                    chosen, Capability.FLUSH_PERSISTENT,
                    "directWriteToPersistentMemory(true) declares persistent memory to peers, but " + chosen
                            + " cannot deliver a PERSISTENT flush; use the rpma transport"
                            + (o.skipped().isEmpty() ? "" : " (skipped here: " + String.join("; ", o.skipped()) + ")")
                            + ", or leave the declaration off");
            try {
                o.transport().close();
            } catch (RuntimeException x) {
                refused.addSuppressed(x); // the refusal is what the caller must hear of
            }
            throw refused;
        }
        if (!o.skipped().isEmpty()) {
            LOG.info("transport " + o.transport().name() + " chosen; skipped: " + String.join("; ", o.skipped()));
        } else {
            LOG.info("transport " + o.transport().name() + " chosen");
        }
        return o.transport();
    }

    /**
     * Starts the library's shared threads (the timer, the arena closer) now, on the builder's
     * thread, if they are not running yet: a thread inherits its creator's CPU priority
     * (sched(7)), and they must never be started from a lowered set-up or close thread.
     *
     * @param backgroundPriority whether the instance asks for its set-up and close threads at
     *     background priority
     * @param waitStrategy how its loops wait
     * @throws IllegalArgumentException for background priority beside loops that never sleep
     */
    public static void startSharedThreads(boolean backgroundPriority, WaitStrategy waitStrategy) {
        if (backgroundPriority && waitStrategy instanceof WaitStrategy.BusyPoll) {
            throw new IllegalArgumentException("backgroundPriority(true) beside " + waitStrategy + " loops: they never"
                    + " sleep, so set-ups and closes would get about 1.5 % of a core for the instance's life; use"
                    + " BLOCKING or adaptive loops, or leave it off");
        }
        LibraryTimer.prestart();
        io.cqflux.core.internal.DeferredArena.ensureStarted();
    }

    /**
     * Starts {@code count} event loops named {@code <prefix>-loop-<n>}, one thread each. When one
     * fails to start, those started are stopped and awaited within {@code shutdownTimeout}, and
     * the transport is closed, before the failure is rethrown: no loop thread may still run once
     * the transport is freed.
     *
     * @param transport the open transport, closed on failure
     * @return the loops, in index order
     */
    public static EventLoop[] startLoops(String prefix, int count, WaitStrategy waitStrategy, int batchSize,
                                         Duration blockedLoopThreshold, Duration shutdownTimeout,
                                         Transport transport) {
        EventLoop[] ls = new EventLoop[count];
        try {
            // One thread per loop: the factory's counter matches the loop's index.
            LoopThreadFactory tf = new LoopThreadFactory(prefix + "-loop");
            for (int i = 0; i < count; i++) {
                ls[i] = EventLoop.start(new LoopConfig(prefix + "-loop-" + i, waitStrategy, batchSize, tf,
                        blockedLoopThreshold));
            }
        } catch (RuntimeException e) {
            stopStarted(ls, shutdownTimeout);
            transport.close();
            throw e;
        }
        return ls;
    }

    /**
     * Stops the loops started before a failure and waits for them within the shutdown budget:
     * the transport is closed right after, so no loop thread may still be running then.
     */
    private static void stopStarted(EventLoop[] ls, Duration shutdownTimeout) {
        List<CompletableFuture<Void>> ends = new ArrayList<>();
        for (EventLoop l : ls) {
            if (l != null) {
                ends.add(l.shutdownGracefully(shutdownTimeout));
            }
        }
        try {
            CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new))
                    .get(TimeUnit.NANOSECONDS.convert(shutdownTimeout), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("event loops started before the failure did not stop within " + shutdownTimeout, e);
        }
    }

    /**
     * Refuses a local address no interface of this host has: libfabric's tcp provider would
     * accept it and then bind where the route says, not where asked. Where the interfaces cannot
     * be listed (a sandbox) the address is let through with a WARN.
     *
     * @param a the address the builder was given
     * @return {@code a}
     * @throws IllegalArgumentException naming the address when this host does not have it
     */
    public static InetAddress checkLocalAddress(InetAddress a) {
        boolean ours;
        try {
            ours = a.isLoopbackAddress() || a.isAnyLocalAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (SocketException e) {
            // A sandbox that hides the interfaces: nothing to check against, so not refused.
            LOG.warn("localAddress " + a.getHostAddress() + " not checked: the host's interfaces cannot be listed ("
                    + e.getMessage() + ")");
            ours = true;
        }
        if (!ours) {
            throw new IllegalArgumentException("localAddress " + a.getHostAddress() + " is not an address of this"
                    + " host (no network interface has it)");
        }
        return a;
    }

    /**
     * The spin budget of a caller blocked in an operation's {@code block()}: the one set, else
     * {@code defaultMicros} where the machine has a processor for the caller beside the spinning
     * loops ({@link WaitStrategy#BUSY_POLL} or adaptive) and one more, else zero (a spinning
     * caller would only delay the loop that completes it).
     *
     * @param spin the budget set, or null for the default
     * @return the budget in nanoseconds
     */
    public static long blockSpinNanos(Duration spin, WaitStrategy waitStrategy, int loopCount, int defaultMicros) {
        if (spin != null) {
            return spin.toNanos();
        }
        int spinningLoops = waitStrategy instanceof WaitStrategy.Blocking ? 0 : loopCount;
        return Runtime.getRuntime().availableProcessors() > spinningLoops + 1
                ? TimeUnit.MICROSECONDS.toNanos(defaultMicros) : 0;
    }
}
