package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An instance's shutdown, run once within a budget: what must stop first (the peer pools, the
 * buffer pool's takers), then servers and connections close; at the deadline (or sooner) the
 * loops shut down gracefully with what is left of it, and then force; after every loop thread
 * ended (and the set-up thread's last task, and the close thread's last queued native close),
 * leftovers are freed and the transport last. The
 * loops and the set-up thread are awaited without a deadline: the transport is never freed under
 * a thread still in it. Thread-safe.
 */
public final class Shutdown {
    /** Under the instance's name, where the guide says its shutdown overruns are logged. */
    private static final Logger LOG = Loggers.getLogger("io.cqflux.reactor.Cqflux");

    /** What only the instance's public side reaches: its pools, servers and regions. */
    public interface Owned {
        /** Disposes what must stop before anything else closes: the peer pools, the buffer pool's takers. */
        void stopFirst();

        /** {@return the closes of the servers, started now} */
        List<CompletableFuture<Void>> closeServers();

        /** {@return the servers still listening (a live view), for messages} */
        Collection<?> servers();

        /** {@return the regions still registered (a live view)} */
        Collection<Region> regions();
    }

    private final Object owner;
    private final LoopGroup loops;
    private final Set<ConnectionCore> connections;
    private final Transport transport;
    /** The owner's shutdown flag: set here, once. */
    private final AtomicBoolean closing;
    private final Owned owned;
    /** Its set-up thread: ended before the transport is freed. */
    private final SetupThread setups;
    /** Its close thread: ended after the loops (which hand it closes until they end), before the transport is freed. */
    private final SetupThread closes;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    /**
     * @param owner the instance, for messages
     * @param loops its loops
     * @param connections its connections not released yet (a live view)
     * @param transport its transport, freed last
     * @param closing its shutdown flag, which only this sets
     * @param owned what of it only its public side reaches
     * @param setups its set-up thread, whose last task ends before the transport is freed
     * @param closes its close thread, whose queued closes end after the loops and before the
     *     transport is freed
     */
    public Shutdown(Object owner, LoopGroup loops, Set<ConnectionCore> connections, Transport transport,
                    AtomicBoolean closing, Owned owned, SetupThread setups, SetupThread closes) {
        this.setups = setups;
        this.closes = closes;
        this.owner = owner;
        this.loops = loops;
        this.connections = connections;
        this.transport = transport;
        this.closing = closing;
        this.owned = owned;
    }

    /** {@return completes once everything is released; never fails} */
    public CompletableFuture<Void> terminated() {
        return terminated;
    }

    /**
     * Starts the shutdown with {@code budget}, or returns the one already running (which keeps
     * its own budget).
     *
     * @param budget how long servers and connections get to close before the loops are stopped
     * @return {@link #terminated()}
     */
    public CompletableFuture<Void> start(Duration budget) {
        if (!closing.compareAndSet(false, true)) {
            return terminated;
        }
        long deadline = System.nanoTime() + TimeUnit.NANOSECONDS.convert(budget);
        // The pools first; then waiting and new takers of the buffer pool fail, and its region
        // deregisters once the operations still using its buffers are released, like any region.
        owned.stopFirst();
        List<CompletableFuture<Void>> parts = new ArrayList<>(owned.closeServers());
        // Set-ups in progress finish and find the instance closing: each releases what it built,
        // or hands it to its loop, which closes it (ConnectionFactory.Connect, ServerAccepts).
        CompletableFuture<Void> setupsEnded = setups.shutdown();
        parts.add(setupsEnded);
        for (ConnectionCore c : List.copyOf(connections)) {
            parts.add(c.closeAsync());
        }
        CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .orTimeout(remaining(deadline), TimeUnit.NANOSECONDS)
                .handle((v, e) -> {
                    if (e != null) {
                        LOG.warn(owner + ": " + owned.servers().size() + " server(s) and " + connections.size()
                                + " connection(s) did not close within the shutdown budget " + budget
                                + "; stopping the loops anyway", e);
                    }
                    return loops.shutdownGracefully(Duration.ofNanos(remaining(deadline)));
                })
                .thenCompose(f -> f)
                .handle((v, e) -> {
                    if (e != null) {
                        LOG.warn(owner + ": an event loop ended on an error", e);
                    }
                    return setupsEnded; // never fails; the transport outlives every set-up
                })
                .thenCompose(f -> f)
                // The loops have ended, so no close is handed over any more: the closes queued so
                // far run to their end (each hands its release back to its ended loop, which runs
                // it at once), and a close after this one runs where it is asked (ConnectionCore).
                // fi_domain(3): the domain is closed after its children, so the transport waits.
                .thenCompose(v -> closes.shutdown())
                .whenComplete((v, e) -> {
                    // The loops have ended: whatever a connection still holds is freed here and now
                    // (one failing close never keeps the others, or the transport, from closing).
                    for (ConnectionCore c : List.copyOf(connections)) {
                        try {
                            c.forceClose(new ConnectionException(ConnectionEvent.CLOSED, "cqflux closed"));
                        } catch (RuntimeException x) {
                            LOG.warn(owner + ": closing " + c.description + " failed", x);
                        }
                    }
                    for (Region r : List.copyOf(owned.regions())) {
                        try {
                            r.close();
                        } catch (RuntimeException x) {
                            LOG.warn(owner + ": closing " + r + " failed", x);
                        }
                    }
                    try {
                        transport.close();
                    } finally {
                        terminated.complete(null);
                    }
                });
        return terminated;
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    /** {@return what the shutdown has not released yet, for {@code disposeNow}'s error} */
    public String unreleased() {
        List<String> left = new ArrayList<>();
        Collection<?> servers = owned.servers();
        if (!servers.isEmpty()) {
            left.add(servers.size() + " server(s) listening " + servers);
        }
        if (!connections.isEmpty()) {
            // What each still waits for (its loop, its goodbye, its teardown): the first few.
            List<String> each = new ArrayList<>();
            for (ConnectionCore c : connections) {
                if (each.size() == 3) {
                    each.add("...");
                    break;
                }
                each.add(c.description + ": " + c.monitor.releasePending());
            }
            left.add(connections.size() + " connection(s) open (" + String.join("; ", each) + ")");
        }
        left.addAll(loops.stillRunning());
        Collection<Region> regions = owned.regions();
        if (!regions.isEmpty()) {
            left.add(regions.size() + " region(s) registered");
        }
        if (!terminated.isDone()) {
            left.add("transport " + transport.name() + " not freed");
        }
        return String.join("; ", left);
    }
}
