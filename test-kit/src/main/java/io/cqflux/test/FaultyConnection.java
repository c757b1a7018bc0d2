package io.cqflux.test;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/*
 * Design: how a fault reaches the reactive layer.
 *
 * The event loop learns of completions only by polling a completion queue, and of connection
 * events only by reading the event channel, each when its fd is readable or when its
 * prepareToSleep() says "not yet". Everything here runs on the connection's loop thread (the
 * Connection contract), so no fd is needed for what this class makes up:
 *
 *  - an injected completion (FAIL, and the flush of a DROP) waits in `injected` and comes out of
 *    the first wrapped queue's poll(), after the real completions of that poll; a FAIL also waits
 *    until the signaled operations posted before it have completed (`postSeq`), as a
 *    reliable connection completes in the order of posting, so only the selected operation fails
 *    and the others before it complete as they would. That queue's prepareToSleep() is false
 *    while the head of `injected` is ready, so the loop polls again before it sleeps (while it
 *    waits for real completions, their fd wakes the loop). Real completions of operations posted
 *    after a pending injected failure wait behind it (`behindInjected`). Busy-polling loops poll
 *    the queues anyway. A FAIL
 *    with a delay is held instead, as a DELAY's completion is (below), and comes out among the
 *    held ones in the order they fall due (a DELAY's completion is held only once the real
 *    queue gave it, so one whose real completion is late comes out after a failure due later).
 *  - a DROP also queues LOST on the event channel (prepareToSleep false while it waits). The
 *    flushed completion makes the reactive layer read the event channel at once, which a
 *    busy-polling loop would otherwise only do on fd readiness.
 *  - a DELAY posts the operation and notes its context; when its completion comes out of the real
 *    queue it is copied and held until its time. A held completion has no fd to wake the loop,
 *    so while one waits prepareToSleep() parks the loop thread for at most 1 ms and answers
 *    "not yet": the loop keeps turning (tasks still run) until the completion is due.
 */

/** A real connection whose posts go through the {@link Faults} rules first. Loop-confined like the connection it wraps. */
final class FaultyConnection implements Connection {
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Connection inner;
    private final FaultyTransport transport;
    private final FaultyEvents events;
    private List<CompletionQueue> queues;
    /** Made-up completions, delivered by the first queue, in order, each once what it waits for came. */
    private final ArrayDeque<Injected> injected = new ArrayDeque<>();

    /**
     * A made-up completion, {@code seq} in the order of posting. {@code inOrder}: it comes out only
     * once no signaled operation posted before it is outstanding (in {@link #postSeq} with a lower
     * place), as on a reliable connection; a DROP's flush waits for none.
     */
    private record Injected(long seq, CompletionRecord record, boolean inOrder) {
    }

    /** Posts so far, the failed ones included: the order completions keep. Loop thread. */
    private long posts;
    /**
     * Context of a signaled operation posted for real (or delayed) and not completed yet → its
     * place in the order of posting: an injected failure waits for those posted before it, as a
     * reliable connection completes in the order of posting.
     */
    private final Map<Long, Long> postSeq = new HashMap<>();
    /**
     * Real completions of operations posted after an injected failure that has not come out yet:
     * held until it has, as a reliable connection completes in the order of posting.
     */
    private final PriorityQueue<CompletionRecord> behindInjected = new PriorityQueue<>(
            java.util.Comparator.comparingLong(r -> postSeq.getOrDefault(r.context(), -1L)));
    /** Context of a delayed operation → when its completion is due ({@link System#nanoTime()}). */
    private final Map<Long, Long> delayedContexts = new HashMap<>();
    /** Completions held back, earliest due first. */
    private final PriorityQueue<Held> held = new PriorityQueue<>();
    /**
     * Contexts of signaled operations whose real completion is dropped: each covers an unsignaled
     * operation that hung before it (see {@link #coverHang}).
     */
    private final java.util.Set<Long> hungContexts = new java.util.HashSet<>();
    /**
     * An unsignaled operation (a durable write's WRITE) hung, and the signaled operation that
     * covers it has not been posted yet: on a reliable connection the completion of the next
     * signaled operation (the durable write's FLUSH) says that every operation before it
     * completed, so it never comes. Loop thread.
     */
    private boolean coverHang;
    /** As {@link #coverHang}, for a delayed unsignaled operation: the due time it gives its cover, or 0. */
    private long coverDue;

    /** A completion held until {@code due}; {@code order} breaks ties in the order they were held. */
    private record Held(long due, long order, CompletionRecord record) implements Comparable<Held> {
        @Override
        public int compareTo(Held o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(order, o.order);
        }
    }

    /** Held completions so far: {@link Held#order}. Loop thread. */
    private long heldCount;

    FaultyConnection(Connection inner, FaultyTransport transport) {
        this.inner = inner;
        this.transport = transport;
        this.events = new FaultyEvents(inner.events());
    }

    @Override
    public String description() {
        return "faulty " + inner.description();
    }

    @Override
    public ConnectionConfig config() {
        return inner.config();
    }

    @Override
    public EventChannel events() {
        return events;
    }

    @Override
    public byte[] peerPrivateData() {
        return inner.peerPrivateData();
    }

    @Override
    public void applyPeerHandshake(byte[] handshake) {
        inner.applyPeerHandshake(handshake);
    }

    @Override
    public void applyPeerParameters(byte[] parameters) {
        inner.applyPeerParameters(parameters);
    }

    @Override
    public List<CompletionQueue> completionQueues() {
        if (queues == null) {
            List<CompletionQueue> real = inner.completionQueues();
            List<CompletionQueue> out = new ArrayList<>(real.size());
            for (int i = 0; i < real.size(); i++) {
                out.add(new FaultyQueue(real.get(i), i == 0));
            }
            queues = List.copyOf(out);
        }
        return queues;
    }

    // ---------------------------------------------------------------- posting

    /**
     * Applies the first rule that selects the operation, or posts it.
     *
     * @param post posts it on the real connection
     * @return what the post returns, or {@code true} for an operation the fault took over
     */
    private boolean post(Opcode opcode, RemoteRegion remote, long remoteOffset, long length, long context,
                         boolean signaled, BooleanSupplier post) {
        if (remote != null && transport.isControl(remote)) {
            return post.getAsBoolean();
        }
        Fault f = transport.faults().select(new Faults.Operation(opcode, inner.description(), remoteOffset, length));
        long seq = posts++;
        if (f == null) {
            return posted(post.getAsBoolean(), signaled, context, seq);
        }
        switch (f.action()) {
            case FAIL -> {
                CompletionRecord error = CompletionRecord.builder(context, f.status()).opcode(opcode)
                        .errorText("injected by the faulty test transport: " + f).build();
                if (f.delay().isZero()) {
                    injected.add(new Injected(seq, error, true));
                } else {
                    held.add(new Held(System.nanoTime() + f.delay().toNanos(), heldCount++, error));
                }
            }
            case HANG -> {
                // Never posted, never completed; an unsignaled one shows it on its cover.
                if (!signaled) {
                    coverHang = true;
                }
            }
            case DELAY -> {
                boolean ok = posted(post.getAsBoolean(), signaled, context, seq);
                long due = System.nanoTime() + f.delay().toNanos();
                if (ok && signaled) {
                    delayedContexts.merge(context, due, Math::max);
                } else if (ok) {
                    // An unsignaled operation reports nothing on success: its cover is held back.
                    coverDue = Math.max(coverDue, due);
                }
                return ok;
            }
            case DROP -> {
                // The connection drops at once (its LOST event is queued now); its flush waits for
                // nothing of its own, but comes out after an earlier injected failure.
                events.injected.add(ConnectionEvent.LOST);
                injected.add(new Injected(seq, CompletionRecord.builder(context, CompletionStatus.WR_FLUSH_ERR).opcode(opcode)
                        .errorText("flushed: the faulty test transport dropped the connection (" + f + ")").build(),
                        false));
            }
        }
        return true;
    }

    /**
     * Notes a signaled operation posted for real: an injected failure after it waits for its
     * completion; and it covers the unsignaled operations before it that hung or were delayed.
     */
    private boolean posted(boolean ok, boolean signaled, long context, long seq) {
        if (ok && signaled) {
            postSeq.put(context, seq);
            if (coverHang) {
                hungContexts.add(context);
                coverHang = false;
            }
            if (coverDue != 0) {
                delayedContexts.merge(context, coverDue, Math::max);
                coverDue = 0;
            }
        }
        return ok;
    }

    /** A completion went to the sink: nothing waits for its operation any more. */
    private void completed(long context) {
        postSeq.remove(context);
    }

    /**
     * {@return what may go to the sink next, in the order of posting: 1 the earliest-posted real
     * completion that waited behind an injected failure, once the first failure still pending was
     * posted after it, 2 that injected failure (the operations posted before it completed), 0
     * nothing}
     */
    private int nextReady() {
        Injected head = injected.peek();
        CompletionRecord next = behindInjected.peek();
        if (next != null) {
            Long seq = postSeq.get(next.context());
            if (head == null || seq == null || seq < head.seq()) {
                return 1;
            }
        }
        return head != null && (!head.inOrder() || !outstandingBefore(head.seq())) ? 2 : 0;
    }

    /** {@return whether a signaled operation posted before place {@code seq} has not completed yet} */
    private boolean outstandingBefore(long seq) {
        for (long s : postSeq.values()) {
            if (s < seq) {
                return true;
            }
        }
        return false;
    }

    /** {@return whether a real completion must wait behind an injected failure posted before its operation} */
    private boolean behindAnInjected(long context) {
        Injected head = injected.peek();
        Long seq = postSeq.get(context);
        return head != null && seq != null && seq > head.seq();
    }

    @Override
    public boolean read(LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset, long length, long context,
                        boolean signaled) {
        return post(Opcode.READ, src, srcOffset, length, context, signaled,
                () -> inner.read(dst, dstOffset, src, srcOffset, length, context, signaled));
    }

    @Override
    public boolean write(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length, long context,
                         boolean signaled) {
        return post(Opcode.WRITE, dst, dstOffset, length, context, signaled,
                () -> inner.write(dst, dstOffset, src, srcOffset, length, context, signaled));
    }

    @Override
    public boolean writeWithImmediate(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                                      int immediate, long context, boolean signaled) {
        return post(Opcode.WRITE_WITH_IMMEDIATE, dst, dstOffset, length, context, signaled,
                () -> inner.writeWithImmediate(dst, dstOffset, src, srcOffset, length, immediate, context, signaled));
    }

    @Override
    public boolean atomicWrite(RemoteRegion dst, long dstOffset, long value, long context, boolean signaled) {
        return post(Opcode.ATOMIC_WRITE, dst, dstOffset, 8, context, signaled,
                () -> inner.atomicWrite(dst, dstOffset, value, context, signaled));
    }

    @Override
    public boolean flush(RemoteRegion dst, long dstOffset, long length, FlushType type, long context,
                         boolean signaled) {
        return post(Opcode.FLUSH, dst, dstOffset, length, context, signaled,
                () -> inner.flush(dst, dstOffset, length, type, context, signaled));
    }

    @Override
    public boolean send(LocalRegion src, long offset, long length, long context, boolean signaled) {
        return post(Opcode.SEND, null, -1, length, context, signaled,
                () -> inner.send(src, offset, length, context, signaled));
    }

    @Override
    public boolean sendWithImmediate(LocalRegion src, long offset, long length, int immediate, long context,
                                     boolean signaled) {
        return post(Opcode.SEND_WITH_IMMEDIATE, null, -1, length, context, signaled,
                () -> inner.sendWithImmediate(src, offset, length, immediate, context, signaled));
    }

    @Override
    public boolean receive(LocalRegion dst, long offset, long length, long context) {
        return inner.receive(dst, offset, length, context);
    }

    @Override
    public void disconnect() {
        inner.disconnect();
    }

    @Override
    public void close() {
        injected.clear();
        held.clear();
        delayedContexts.clear();
        hungContexts.clear();
        coverHang = false;
        coverDue = 0;
        behindInjected.clear();
        postSeq.clear();
        events.injected.clear();
        inner.close();
    }

    @Override
    public String toString() {
        return description();
    }

    // ---------------------------------------------------------------- the loop's side

    /** A real completion queue that also delivers made-up and held-back completions. */
    private final class FaultyQueue implements CompletionQueue {
        private final CompletionQueue real;
        private final boolean first;

        FaultyQueue(CompletionQueue real, boolean first) {
            this.real = real;
            this.first = first;
        }

        @Override
        public int fd() {
            return real.fd();
        }

        @Override
        public boolean prepareToSleep() {
            if (first && nextReady() != 0) {
                return false;
            }
            if (first && !held.isEmpty()) {
                long wait = held.peek().due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(Math.min(wait, PARK_NANOS));
                }
                return false;
            }
            return real.prepareToSleep();
        }

        @Override
        public void acknowledge() {
            real.acknowledge();
        }

        @Override
        public boolean pollIsCheap() {
            return real.pollIsCheap();
        }

        @Override
        public int poll(MemorySegment scratch, int max, CompletionSink sink) {
            int n = 0;
            if (first) {
                long now = System.nanoTime();
                while (n < max && !held.isEmpty() && held.peek().due - now <= 0) {
                    Held h = held.poll();
                    if (behindAnInjected(h.record().context())) {
                        behindInjected.add(h.record()); // posted after a failure still pending
                        continue;
                    }
                    completed(h.record().context());
                    sink.onCompletion(h.record());
                    n++;
                }
            }
            if (n < max) {
                n += real.poll(scratch, max - n, c -> {
                    if (!hungContexts.isEmpty() && hungContexts.remove(c.context())) {
                        completed(c.context()); // it covers a hung operation: its completion never comes
                        return;
                    }
                    Long due = delayedContexts.isEmpty() ? null : delayedContexts.remove(c.context());
                    if (due != null) {
                        held.add(new Held(due, heldCount++, c.snapshot()));
                    } else if (behindAnInjected(c.context())) {
                        behindInjected.add(c.snapshot()); // posted after a failure still pending
                    } else {
                        completed(c.context());
                        sink.onCompletion(c);
                    }
                });
            }
            // After the real completions of this poll: an injected failure comes once those of
            // the operations posted before it came, in the order of injection, and then the real
            // completions that waited behind it.
            while (first && n < max) {
                int which = nextReady();
                if (which == 0) {
                    break;
                }
                if (which == 1) {
                    CompletionRecord r = behindInjected.poll();
                    completed(r.context());
                    sink.onCompletion(r);
                } else {
                    sink.onCompletion(injected.poll().record());
                }
                n++;
            }
            return n;
        }

        @Override
        public void close() {
            real.close();
        }
    }

    /** The real event channel, plus made-up events first. */
    private static final class FaultyEvents implements EventChannel {
        private final EventChannel real;
        final ArrayDeque<ConnectionEvent> injected = new ArrayDeque<>();

        FaultyEvents(EventChannel real) {
            this.real = real;
        }

        @Override
        public int fd() {
            return real.fd();
        }

        @Override
        public boolean prepareToSleep() {
            return injected.isEmpty() && real.prepareToSleep();
        }

        @Override
        public ConnectionEvent nextEvent() {
            ConnectionEvent e = injected.poll();
            return e != null ? e : real.nextEvent();
        }
    }
}
