package io.cqflux.reactor.internal.connection;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.core.OperationFailedException;
import io.cqflux.epoll.loop.EventLoop;
import io.cqflux.reactor.internal.op.Emissions;
import io.cqflux.reactor.internal.op.OpKind;
import io.cqflux.reactor.internal.op.OpMono;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One connection's completions: each entry of a drained batch is mapped by its context to what
 * was posted (an operation or its unsignaled part, a receive buffer, one of the connection's own
 * control writes, or nothing: a notification or a stale entry), which is retired and completed;
 * a copy goes to the monitoring stream while anyone subscribes to it. An error completion is
 * the lifecycle's to judge ({@link ConnectionCore#errorCompletion}), always before the
 * subscriber hears of its own error. Loop thread, except {@link #completions()}.
 */
final class CompletionDispatch {
    private static final Logger LOG = Loggers.getLogger(ConnectionCore.class);

    private final ConnectionCore core;
    private final SendQueue sendQueue;
    private final PeerControl control;
    private final Receiver receiver;
    private final EventLoop loop;
    private final String description;
    private final Sinks.Many<CompletionRecord> completions = Sinks.many().multicast().directBestEffort();
    /** Subscribers of {@link #completions()}: none, and nothing is copied. */
    private final AtomicInteger monitors = new AtomicInteger();
    /** Completions whose context matched nothing posted; written on the loop only. */
    private volatile long staleCompletions;

    private final KeepAlive keepAlive;

    CompletionDispatch(ConnectionCore core, SendQueue sendQueue, PeerControl control, Receiver receiver,
                       KeepAlive keepAlive) {
        this.keepAlive = keepAlive;
        this.core = core;
        this.sendQueue = sendQueue;
        this.control = control;
        this.receiver = receiver;
        this.loop = core.loop;
        this.description = core.description;
    }

    /** The completion sink: loop thread, once per entry of a drained batch. */
    void onCompletion(Completion c) {
        long ctx = c.context();
        Object o = sendQueue.lookup(ctx);
        keepAlive.life(); // any completion, success or error, says the connection is not silent
        if (monitors.get() != 0) {
            monitor(c, o, ctx);
        }
        if (o instanceof OpMono op) {
            onOperationCompletion(c, op, ctx);
        } else if (o instanceof SendQueue.Internal w) {
            sendQueue.retire(ctx, 1);
            if (w == SendQueue.Internal.GRANT) {
                control.grantDone();
            } else if (w == SendQueue.Internal.PROBE) {
                keepAlive.probeCompleted();
            } else {
                core.teardown.goodbyeCompleted();
            }
            if (!c.isSuccess()) {
                core.errorCompletion(c, w == SendQueue.Internal.PROBE ? Opcode.READ : Opcode.WRITE);
            }
            sendQueue.drainWaiting();
            core.teardown.postGoodbye();
        } else if (o instanceof ReceiveBuffer b) {
            sendQueue.retire(ctx, 0);
            if (!c.isSuccess()) {
                core.errorCompletion(c, Opcode.RECEIVE);
            } else {
                core.violations.checkReceiveCredit(); // a peer beyond its credits ends here; the buffer is the receiver's still
            }
            receiver.onCompletion(c, b);
        } else if (c.isSuccess() && c.opcode().isReceive()) {
            // A write-with-immediate notification that consumed no posted receive: libfabric's
            // tcp provider reports FI_REMOTE_CQ_DATA of fi_writedata this way, with context 0.
            receiver.onNotification(c);
        } else {
            staleCompletions++; // NOSONAR: written by the loop thread only
            if (!c.isSuccess()) {
                core.errorCompletion(c, null);
            }
        }
    }

    private void onOperationCompletion(Completion c, OpMono op, long ctx) {
        OpKind kind = op.kind;
        if (InFlightTable.isPart(ctx)) {
            // The unsignaled half reports only errors; the slot stays until the signaled half.
            // The connection ends first (LOST, before any subscriber code runs and could close it
            // in order), and this operation fails with its own error.
            if (!c.isSuccess()) {
                if (c.status() != CompletionStatus.WR_FLUSH_ERR) {
                    op.partFailed(new OperationFailedException(c.snapshot(), kind.partOpcode(), description));
                }
                core.errorCompletion(c, kind.partOpcode());
                if (op.ownError() != null) {
                    op.fail(op.ownError());
                }
            }
            return;
        }
        if (!c.isSuccess() && c.status() == CompletionStatus.WR_FLUSH_ERR) {
            // Flushed because the connection is going down: the operation stays in the table
            // (the end fails it with the verdict, CLOSED or LOST) and nothing more is posted.
            core.errorCompletion(c, kind.opcode);
            return;
        }
        // Retire first: a subscriber that posts again from its callback finds the credit free.
        sendQueue.retire(ctx, kind.credits);
        try {
            op.releaseRegions();
        } catch (RuntimeException e) {
            // a region's deregistration failed: its owner hears nothing better from here
            LOG.warn("connection " + description + ": releasing an operation's region failed", e);
        }
        // Names the subscriber code about to run for the loop's blocked-loop report (a plain store).
        loop.noteOperation(kind.publicKind().sequenceName());
        if (c.isSuccess()) {
            op.complete();
            sendQueue.drainWaiting();
            core.teardown.postGoodbye();
        } else {
            // The connection ends first (LOST: an error completion), then the subscriber hears of
            // its own error: nothing it does in its callback can turn the end into an orderly one.
            core.errorCompletion(c, kind.opcode);
            op.fail(new OperationFailedException(c.snapshot(), kind.opcode, description));
        }
    }


    private void monitor(Completion c, Object owner, long ctx) {
        try {
            Opcode posted = owner instanceof OpMono op
                    ? (InFlightTable.isPart(ctx) ? op.kind.partOpcode() : op.kind.opcode) : null;
            CompletionRecord r = c.snapshot();
            if (posted != null && r.isSuccess() && r.opcode() != posted) {
                // What was posted, not what the device reports (an emulated flush completes as a
                // read, librpma's atomic write as a write).
                r = CompletionRecord.builder(r).opcode(posted).build();
            }
            CompletionRecord record = r;
            Emissions.guarded(() -> completions.tryEmitNext(record));
        } catch (Throwable t) {
            Exceptions.throwIfJvmFatal(t);
            LOG.warn("completion monitor threw", t);
        }
    }


    /** {@return the hot stream of this connection's completions, for monitoring} Any thread. */
    Flux<CompletionRecord> completions() {
        return completions.asFlux()
                .doOnSubscribe(s -> monitors.incrementAndGet())
                .doFinally(s -> monitors.decrementAndGet());
    }

    /** The connection is released: the monitoring stream completes. */
    void complete() {
        Emissions.guarded(completions::tryEmitComplete);
    }

    /** {@return the subscribers of {@link #completions()} now} Any thread. */
    int monitors() {
        return monitors.get();
    }

    /** {@return completions whose context matched nothing posted} Any thread. */
    long staleCompletions() {
        return staleCompletions;
    }
}
