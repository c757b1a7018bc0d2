package io.cqflux.reactor;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.epoll.EventLoop;
import io.cqflux.epoll.Registration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.core.Exceptions;
import reactor.core.publisher.Sinks;

/**
 * The loop-side state of one connection: pending table, credits, the bounded queue of operations
 * waiting for a credit, the receive pool, and the connection's lifecycle.
 *
 * <p><b>Threading.</b> Everything here runs on {@link #loop}'s thread, except the methods marked
 * "any thread", which hand over through {@link EventLoop#execute}.
 *
 * <p><b>Credits.</b> At most {@link #creditLimit} send-queue slots are in use, counting the
 * unsignaled first half of a durable write (it keeps its slot until the following signaled flush
 * retires it). The limit is the send-queue depth, also bounded by the part of the main CQ that
 * receives cannot use, so neither the SQ nor the CQ can overrun.
 */
final class ConnectionCore {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    enum State { CONNECTING, ESTABLISHED, CLOSED }

    final Cqflux owner;
    final EventLoop loop;
    final Transport transport;
    final Connection conn;
    final ConnectionConfig config;
    final String description;
    final RdmaConnection api;
    private final PendingTable table;
    final int creditLimit;
    private final int pendingLimit;
    private final ArrayDeque<Op> waiting = new ArrayDeque<>();
    private final List<Registration> registrations = new ArrayList<>();
    private volatile List<PeerRegion> peerRegions = List.of();
    private int credits;
    private volatile int maxInFlight;
    /** Operations holding a pending-table slot; a volatile mirror for diagnostics and tests. */
    private volatile int inFlightOps;
    private volatile long staleCompletions;
    private boolean retryScheduled;
    private volatile State state = State.CONNECTING;
    private volatile Throwable terminal;
    private Consumer<RdmaConnection> onEstablished;
    private Consumer<Throwable> onFailed;
    final Receiver receiver;

    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private final Sinks.Many<CompletionRecord> completions = Sinks.many().multicast().directBestEffort();
    final AtomicInteger monitors = new AtomicInteger();
    final CompletableFuture<Void> closed = new CompletableFuture<>();

    ConnectionCore(Cqflux owner, EventLoop loop, Transport transport, Connection conn, ConnectionConfig config,
                   int pendingLimit, int receiveBufferSize) {
        this.owner = owner;
        this.loop = loop;
        this.transport = transport;
        this.conn = conn;
        this.config = config;
        this.description = conn.description();
        int cqForSends = config.completionQueueSize()
                - (config.receiveCompletionQueueSize() == 0 ? config.receiveQueueSize() : 0);
        this.creditLimit = Math.min(config.sendQueueSize(), cqForSends);
        this.table = new PendingTable(creditLimit);
        this.credits = creditLimit;
        this.pendingLimit = pendingLimit;
        this.receiver = new Receiver(this, config.receiveQueueSize(), receiveBufferSize);
        this.api = new RdmaConnection(this);
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Registers the queues and the event channel with the loop and waits for the handshake. Loop
     * thread.
     *
     * @param established called with the API object once established
     * @param failed called if the connection fails before that
     */
    void start(Consumer<RdmaConnection> established, Consumer<Throwable> failed) {
        this.onEstablished = established;
        this.onFailed = failed;
        try {
            // The hook: the loop let go of a source on its own (shutdown, fatal error, a queue that
            // failed): nothing would complete what is pending any more, so fail it all now.
            Runnable lost = () -> dispose(new ResourceClosedException("connection " + description
                    + ": its event loop " + loop.name() + " stopped serving it"));
            for (CompletionQueue cq : conn.completionQueues()) {
                registrations.add(loop.register(cq, this::onCompletion, lost));
            }
            registrations.add(loop.register(conn.events(), this::onEvents, lost));
        } catch (RuntimeException e) {
            dispose(e);
            return;
        }
        onEvents();
    }

    private void onEvents() {
        ConnectionEvent e;
        while (state != State.CLOSED) {
            try {
                e = conn.events().nextEvent();
            } catch (RuntimeException ex) {
                dispose(new ConnectionException(ConnectionEvent.LOST, description + ": event channel failed", ex));
                return;
            }
            if (e == null) {
                return;
            }
            onEvent(e);
        }
    }

    private void onEvent(ConnectionEvent e) {
        if (e == ConnectionEvent.ESTABLISHED) {
            if (state != State.CONNECTING) {
                return;
            }
            try {
                peerRegions = PeerHello.accept(transport, conn);
            } catch (RuntimeException ex) {
                dispose(new ConnectionException(ConnectionEvent.LOST, description
                        + ": the peer's hello (regions, transport handshake) is malformed: " + ex.getMessage(), ex));
                return;
            }
            state = State.ESTABLISHED;
            events.tryEmitNext(e);
            Consumer<RdmaConnection> cb = onEstablished;
            onEstablished = null;
            onFailed = null;
            if (cb != null) {
                safely(() -> cb.accept(api));
            }
            return;
        }
        events.tryEmitNext(e);
        String what = switch (e) {
            case CLOSED -> "closed";
            case LOST -> "lost";
            case REJECTED -> "rejected by the peer";
            case UNREACHABLE -> "peer unreachable";
            default -> e.name();
        };
        dispose(new ConnectionException(e, "connection " + description + " " + what));
    }

    /** Closes the connection from any thread; completes {@link #closed} when done. */
    CompletableFuture<Void> closeAsync() {
        runOnLoop(() -> dispose(new ResourceClosedException("connection " + description + " closed")));
        return closed;
    }

    /**
     * Fails everything pending with {@code cause}, unregisters and frees the native connection,
     * then releases what the pending operations held. Idempotent. Loop thread (or any thread once
     * the loop is gone).
     */
    void dispose(Throwable cause) {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        terminal = cause;
        Consumer<Throwable> failed = onFailed;
        onFailed = null;
        onEstablished = null;
        if (failed != null) {
            safely(() -> failed.accept(cause));
        }
        Op op;
        while ((op = waiting.poll()) != null) {
            op.fail(cause);
            // A durable write waiting for its flush has its write on the wire: its regions stay
            // held until the native close below (it also holds a table slot, released there).
            if (op.stage == Op.NEW) {
                op.releaseRegions();
            }
        }
        table.forEach((ctx, o) -> ((Op) o).fail(cause));
        receiver.terminate(cause);
        for (Registration r : registrations) {
            safely(r::close);
        }
        registrations.clear();
        // After the native close nothing can touch the buffers any more (queue pair destroyed):
        // only now are the regions of operations that never completed released.
        safely(conn::close);
        table.forEach((ctx, o) -> {
            ((Op) o).releaseRegions();
            table.release(ctx);
        });
        inFlightOps = 0;
        receiver.freePool();
        for (PeerRegion p : peerRegions) {
            safely(() -> p.nativeRegion().close());
        }
        events.tryEmitComplete();
        completions.tryEmitComplete();
        owner.forget(this);
        closed.complete(null);
    }

    // ---------------------------------------------------------------- operations

    /** Any thread: throws if the connection can no longer take operations. */
    void checkOpen() {
        State s = state;
        if (s == State.CLOSED) {
            Throwable t = terminal;
            if (t instanceof ConnectionException ce) {
                throw new ConnectionException(ce.event(), ce.getMessage());
            }
            throw new ResourceClosedException("connection " + description + " is closed");
        }
    }

    /** Any thread: checks that a peer region came from this connection. */
    void checkOwns(PeerRegion region) {
        if (!peerRegions.contains(region)) {
            throw new IllegalArgumentException(region + " is not a region of the peer of " + description);
        }
    }

    /** Any thread: hands an operation to the loop. */
    void enqueue(Op op) {
        if (loop.inLoop()) {
            submit(op);
            return;
        }
        try {
            loop.execute(() -> submit(op));
        } catch (RuntimeException e) {
            op.fail(new ResourceClosedException("connection " + description + ": its event loop is shut down"));
            op.releaseRegions();
        }
    }

    /** Any thread: runs a task on the loop, inline when already there. */
    void runOnLoop(Runnable task) {
        if (loop.inLoop()) {
            task.run();
            return;
        }
        try {
            loop.execute(task);
        } catch (RuntimeException e) {
            // The loop is shutting down: it may still run its last round and its hooks (which
            // dispose every connection), so never run beside it; finish once its thread ended.
            loop.terminationFuture().whenComplete((v, t) -> task.run());
        }
    }

    private void submit(Op op) {
        if (state != State.ESTABLISHED) {
            Throwable t = state == State.CLOSED ? terminal
                    : new IllegalStateException("connection " + description + " is not established");
            op.fail(t);
            op.releaseRegions();
            return;
        }
        if (waiting.isEmpty() && credits >= op.spec.kind.credits) {
            post(op);
        } else if (waiting.size() >= pendingLimit) {
            op.fail(new QueueFullException("connection " + description + ": " + pendingLimit
                    + " operations already wait for a send-queue credit (pendingLimit " + pendingLimit
                    + ", send queue " + creditLimit + "); apply backpressure or raise Cqflux.Builder.pendingLimit",
                    pendingLimit));
            op.releaseRegions();
        } else {
            waiting.add(op);
        }
    }

    /**
     * Posts an operation that has credits. Loop thread.
     *
     * @return false when the transport's queue was momentarily full (the op is back at the head
     *     of the waiting queue and a retry is scheduled)
     */
    private boolean post(Op op) {
        if (op.cancelled) {
            // Cancelled while waiting: never posted, so nothing of it is in flight.
            op.done = true;
            op.releaseRegions();
            return true;
        }
        int k = op.spec.kind.credits;
        long ctx = table.acquire(op);
        op.context = ctx;
        inFlightOps = table.used();
        credits -= k;
        int inFlight = creditLimit - credits;
        if (inFlight > maxInFlight) {
            maxInFlight = inFlight;
        }
        boolean ok;
        try {
            ok = op.spec.postFirst(conn, ctx);
        } catch (RuntimeException e) {
            table.release(ctx);
            inFlightOps = table.used();
            credits += k;
            op.fail(e);
            op.releaseRegions();
            return true;
        }
        if (!ok) {
            table.release(ctx);
            inFlightOps = table.used();
            credits += k;
            op.context = -1;
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        if (op.spec.kind.twoPart()) {
            op.stage = Op.SECOND_PENDING;
            return postSecond(op);
        }
        op.stage = Op.POSTED;
        return true;
    }

    private boolean postSecond(Op op) {
        boolean ok;
        try {
            ok = op.spec.postSecond(conn, op.context);
        } catch (RuntimeException e) {
            // The unsignaled first part is in flight and nothing signaled will ever retire it:
            // its slot and credits could only come back when the connection closes, so close it
            // now (the subscriber, and everything else pending, learns why).
            op.stage = Op.POSTED;
            dispose(new ConnectionException(ConnectionEvent.LOST, "connection " + description
                    + ": posting the second half of a " + op.spec.kind + " failed; the connection is closed", e));
            return true;
        }
        if (!ok) {
            waiting.addFirst(op);
            scheduleRetry();
            return false;
        }
        op.stage = Op.POSTED;
        return true;
    }

    private void scheduleRetry() {
        if (retryScheduled) {
            return;
        }
        retryScheduled = true;
        try {
            loop.execute(() -> {
                retryScheduled = false;
                drainWaiting();
            });
        } catch (RuntimeException e) {
            retryScheduled = false;
        }
    }

    private void drainWaiting() {
        while (state == State.ESTABLISHED) {
            Op op = waiting.peek();
            if (op == null) {
                return;
            }
            if (op.stage == Op.SECOND_PENDING) {
                waiting.poll();
                if (!postSecond(op)) {
                    return;
                }
                continue;
            }
            if (credits < op.spec.kind.credits) {
                return;
            }
            waiting.poll();
            if (!post(op)) {
                return;
            }
        }
    }

    /** The completion sink: loop thread, once per entry of a drained batch. */
    void onCompletion(Completion c) {
        if (monitors.get() != 0) {
            try {
                completions.tryEmitNext(c.snapshot());
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                LOG.warn("completion monitor threw", t);
            }
        }
        long ctx = c.context();
        if ((ctx & PendingTable.RECEIVE_TAG) != 0) {
            receiver.onCompletion(c);
            return;
        }
        if (c.isSuccess() && c.opcode().isReceive()) {
            // A write-with-immediate notification that consumed no posted receive: libfabric's
            // tcp provider reports FI_REMOTE_CQ_DATA of fi_writedata this way, with context 0.
            receiver.onNotification(c);
            return;
        }
        Object o = table.lookup(ctx);
        if (!(o instanceof Op op)) {
            staleCompletions++;
            return;
        }
        if ((ctx & PendingTable.PART_BIT) != 0) {
            // The unsignaled half reports only errors; the slot stays until the signaled half.
            if (!c.isSuccess()) {
                op.fail(new OperationFailedException(c.snapshot(), op.spec.kind.partOpcode(), description));
            }
            return;
        }
        Throwable error = c.isSuccess() ? null
                : new OperationFailedException(c.snapshot(), op.spec.kind.opcode, description);
        // Retire first: a subscriber that posts again from its callback finds the credit free.
        table.release(ctx);
        inFlightOps = table.used();
        credits += op.spec.kind.credits;
        op.releaseRegions();
        if (error == null) {
            op.complete();
        } else {
            op.fail(error);
        }
        drainWaiting();
    }

    // ---------------------------------------------------------------- monitoring and accessors

    reactor.core.publisher.Flux<CompletionRecord> completions() {
        return completions.asFlux()
                .doOnSubscribe(s -> monitors.incrementAndGet())
                .doFinally(s -> monitors.decrementAndGet());
    }

    reactor.core.publisher.Flux<ConnectionEvent> events() {
        return events.asFlux();
    }

    List<PeerRegion> peerRegions() {
        return peerRegions;
    }

    boolean isOpen() {
        return state != State.CLOSED;
    }

    int inFlightOps() {
        return inFlightOps;
    }

    int maxInFlight() {
        return maxInFlight;
    }

    long staleCompletions() {
        return staleCompletions;
    }

    private static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("ignored failure while closing", t);
        }
    }
}
