package io.cqflux.epoll.loop;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TEST-ONLY completion source: a completion queue backed by its own eventfd and a concurrent queue
 * of synthetic completions. Producers on any thread {@link #add} completions and signal the
 * eventfd, like a NIC writing a CQE and raising the completion channel. {@link #acknowledge()}
 * resets the eventfd (non-blocking read); {@link #poll} copies up to {@code max} entries into the
 * loop's scratch segment ({@code wr_id} u64 @0, status u32 @8, opcode u32 @12, 16 bytes each) and
 * hands the sink a flyweight that reads them back from there, as the real transports do.
 */
final class EventfdTestCompletionQueue implements CompletionQueue {

    static final int ENTRY_BYTES = 16;

    private record Entry(long context, CompletionStatus status) {
    }

    private final String name;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment readBuf = arena.allocate(Long.BYTES, Long.BYTES);
    private final MemorySegment loopErrno = arena.allocate(Libc.CAPTURE_LAYOUT);
    private final ConcurrentLinkedQueue<Entry> pending = new ConcurrentLinkedQueue<>();
    private final ScratchView view = new ScratchView();
    final AtomicInteger acknowledged = new AtomicInteger();
    final AtomicLong polls = new AtomicLong();
    /** {@link #polls} when {@link #acknowledge()} last ran (a wake-up by this queue's fd). */
    volatile long polledAtAcknowledge = -1;
    private volatile boolean sleepAllowed = true;
    private final boolean cheapPoll;
    /** Full batches still to hand out before {@link #pending} is read again (a flood). */
    private final AtomicLong floodBatches = new AtomicLong();
    private long floodNext;
    /** Every {@link #poll} returns one completion (context 0): a queue that is never found empty. */
    private volatile boolean alwaysOne;
    /** Answers {@link #quiet()} as the fabric transport does (see {@link #keepsQuietAnswers}). */
    private volatile boolean keepsQuietAnswers;
    /** A yes of {@link #prepareToSleep()} stands: no poll since (written on the loop thread, read by tests). */
    private volatile boolean quiet;
    /** {@link #age()} calls; the standing yes answers only while it was given at the current count. */
    private final AtomicLong ageCount = new AtomicLong();
    /** {@link #ageCount} when the standing yes was given (loop thread). */
    private long yesAtAge = -1;
    /** {@link #prepareToSleep()} calls. */
    final AtomicLong sleepAsks = new AtomicLong();
    /** {@link #prepareToSleep()} calls not answered from the standing yes (fi_trywait calls, on fabric). */
    final AtomicLong nativeAsks = new AtomicLong();
    private volatile RuntimeException pollFailure;
    private volatile RuntimeException quietFailure;
    private volatile RuntimeException askFailure;
    private volatile RuntimeException failureAfterDelivery;
    private boolean closed;
    /** Accepts {@link #watchTouches} (see {@link #watchTouchesLikeFabric}). */
    private volatile boolean offersWatch;
    /** The loop's touch listener while watched (loop thread). */
    private volatile Runnable touchListener;

    EventfdTestCompletionQueue(String name) {
        this(name, false);
    }

    /** @param cheapPoll what {@link #pollIsCheap()} answers (a ring in user space, like librpma's) */
    EventfdTestCompletionQueue(String name, boolean cheapPoll) {
        this.name = name;
        this.cheapPoll = cheapPoll;
        this.fd = Libc.eventfd(Libc.threadErrno());
    }

    @Override
    public boolean pollIsCheap() {
        return cheapPoll;
    }

    /** Adds one successful completion and signals. Any thread. */
    void add(long context) {
        pending.add(new Entry(context, CompletionStatus.SUCCESS));
        signal();
    }

    /** Adds one completion with the given status and signals. Any thread. */
    void add(long context, CompletionStatus status) {
        pending.add(new Entry(context, status));
        signal();
    }

    /** Adds {@code count} successful completions {@code first, first+1, ...} and signals once. */
    void addRange(long first, int count) {
        for (int i = 0; i < count; i++) {
            pending.add(new Entry(first + i, CompletionStatus.SUCCESS));
        }
        signal();
    }

    /** Adds a completion without signalling: only a loop that polls without waiting finds it. */
    void addSilently(long context) {
        pending.add(new Entry(context, CompletionStatus.SUCCESS));
    }

    /**
     * Makes the next {@code batches} polls each return a full batch ({@code max} successful
     * completions with contexts {@code first, first+1, ...}), like a queue of a dying connection
     * that fails hundreds of thousands of operations, and signals once. Any thread, while no
     * flood is under way.
     */
    void flood(long first, long batches) {
        floodNext = first;
        floodBatches.set(batches);
        signal();
    }

    /**
     * Makes every later {@link #poll} return one successful completion (context 0) besides what
     * is pending, and {@link #prepareToSleep()} say "not yet": a queue that is never found empty,
     * at the cost of one completion per round.
     */
    void completeOnEveryPoll() {
        alwaysOne = true;
    }

    /** Signals the eventfd without adding a completion: a spurious notification. */
    void signal() {
        Libc.signalEventfd(Libc.threadErrno(), fd);
    }

    /**
     * Makes the next {@link #poll} throw {@code e} after it delivered what is pending to the sink,
     * like a queue that fails in the middle of a drain.
     */
    void failAfterDelivering(RuntimeException e) {
        failureAfterDelivery = e;
    }

    /** Makes every later {@link #quiet()} throw {@code e}. */
    void failQuiet(RuntimeException e) {
        quietFailure = e;
    }

    /** Makes every later {@link #prepareToSleep()} throw {@code e}. */
    void failAsks(RuntimeException e) {
        askFailure = e;
    }

    /** Makes every later {@link #poll} throw {@code e}, like a queue that failed (overrun, device error). */
    void failPolls(RuntimeException e) {
        pollFailure = e;
    }

    /** Makes {@link #prepareToSleep()} answer {@code allowed} (the fi_trywait(3) rule). */
    void sleepAllowed(boolean allowed) {
        sleepAllowed = allowed;
    }

    /**
     * Makes the queue keep its sleep answers the way the fabric transport keeps fi_trywait's
     * ({@code TrywaitAnswer}): {@link #prepareToSleep()} first resets the eventfd (fi_trywait
     * resets its wait fd's signal), says "not yet" while completions are pending, and otherwise
     * makes the queue {@link #quiet()} until the next {@link #poll}, answering from that yes
     * until it is {@link #age()}d. A completion {@link #add}ed meanwhile signals the eventfd and
     * leaves the answer standing, as on tcp.
     */
    void keepQuietAnswers() {
        keepsQuietAnswers = true;
    }

    /**
     * {@link #keepQuietAnswers()}, and also accept {@link #watchTouches}: the standing yes holds
     * until a {@link #poll} or a {@link #touch()} ends it, each of which tells the loop, as the
     * fabric transport's queues do.
     */
    void watchTouchesLikeFabric() {
        keepsQuietAnswers = true;
        offersWatch = true;
    }

    /**
     * A post to the queue's endpoint, as a transport sees one: ends a standing yes and tells a
     * watching loop. Loop thread.
     */
    void touch() {
        endYes();
    }

    /** {@return whether a loop holds a touch listener of this queue} */
    boolean watched() {
        return touchListener != null;
    }

    private void endYes() {
        if (quiet) {
            quiet = false;
            Runnable r = touchListener;
            if (r != null) {
                r.run();
            }
        }
    }

    @Override
    public boolean watchTouches(Runnable touched) {
        if (!offersWatch) {
            return false;
        }
        touchListener = touched;
        return touched != null;
    }

    /** Ages the standing yes past its trust interval: the next {@link #prepareToSleep()} asks again. Any thread. */
    void age() {
        ageCount.incrementAndGet();
    }

    @Override
    public int fd() {
        return fd;
    }

    @Override
    public boolean prepareToSleep() {
        sleepAsks.incrementAndGet();
        RuntimeException failure = askFailure;
        if (failure != null) {
            throw failure;
        }
        if (!keepsQuietAnswers) {
            return sleepAllowed;
        }
        long age = ageCount.get();
        if (quiet && yesAtAge == age) {
            return true;
        }
        nativeAsks.incrementAndGet();
        Libc.readEventfd(loopErrno, fd, readBuf);
        if (!sleepAllowed || !pending.isEmpty() || floodBatches.get() > 0 || alwaysOne) {
            quiet = false;
            return false;
        }
        quiet = true;
        yesAtAge = age;
        return true;
    }

    @Override
    public boolean quiet() {
        RuntimeException failure = quietFailure;
        if (failure != null) {
            throw failure;
        }
        return quiet;
    }

    @Override
    public boolean canBeQuiet() {
        return keepsQuietAnswers;
    }

    @Override
    public void acknowledge() {
        polledAtAcknowledge = polls.get();
        acknowledged.incrementAndGet();
        Libc.readEventfd(loopErrno, fd, readBuf);
    }

    @Override
    public int poll(MemorySegment scratch, int max, CompletionSink sink) {
        polls.incrementAndGet();
        endYes(); // a read: the next sleep asks again
        RuntimeException failure = pollFailure;
        if (failure != null) {
            throw failure;
        }
        if (scratch.byteSize() < (long) max * MAX_ENTRY_BYTES) {
            throw new IllegalArgumentException("scratch of " + scratch.byteSize() + " bytes is smaller than "
                    + max + " * " + MAX_ENTRY_BYTES);
        }
        int n = 0;
        if (floodBatches.get() > 0) {
            floodBatches.decrementAndGet();
            for (; n < max; n++) {
                long off = (long) n * ENTRY_BYTES;
                scratch.set(ValueLayout.JAVA_LONG, off, floodNext++);
                scratch.set(ValueLayout.JAVA_INT, off + 8, CompletionStatus.SUCCESS.ordinal());
                scratch.set(ValueLayout.JAVA_INT, off + 12, Opcode.WRITE.ordinal());
            }
        }
        if (alwaysOne && n < max) {
            long off = (long) n * ENTRY_BYTES;
            scratch.set(ValueLayout.JAVA_LONG, off, 0L);
            scratch.set(ValueLayout.JAVA_INT, off + 8, CompletionStatus.SUCCESS.ordinal());
            scratch.set(ValueLayout.JAVA_INT, off + 12, Opcode.WRITE.ordinal());
            n++;
        }
        Entry e;
        while (n < max && (e = pending.poll()) != null) {
            long off = (long) n * ENTRY_BYTES;
            scratch.set(ValueLayout.JAVA_LONG, off, e.context());
            scratch.set(ValueLayout.JAVA_INT, off + 8, e.status().ordinal());
            scratch.set(ValueLayout.JAVA_INT, off + 12, Opcode.WRITE.ordinal());
            n++;
        }
        for (int i = 0; i < n; i++) {
            view.at(scratch, (long) i * ENTRY_BYTES);
            sink.onCompletion(view);
        }
        RuntimeException late = failureAfterDelivery;
        if (late != null) {
            failureAfterDelivery = null;
            throw late;
        }
        return n;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Libc.close(Libc.threadErrno(), fd);
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "EventfdTestCompletionQueue[" + name + "]";
    }

    /** The flyweight: reads the entry in place from the scratch segment. */
    private static final class ScratchView extends Completion {
        private static final CompletionStatus[] STATUSES = CompletionStatus.values();
        private static final Opcode[] OPCODES = Opcode.values();
        private MemorySegment segment;
        private long offset;

        void at(MemorySegment segment, long offset) {
            this.segment = segment;
            this.offset = offset;
        }

        @Override public long context() { return segment.get(ValueLayout.JAVA_LONG, offset); }
        @Override public CompletionStatus status() { return STATUSES[segment.get(ValueLayout.JAVA_INT, offset + 8)]; }
        @Override public int vendorError() { return 0; }
        @Override public int queuePair() { return 0; }
        @Override public int errorNumber() { return 0; }
        @Override public long overflowLength() { return 0; }
        @Override public String errorText() { return ""; }
        @Override protected Opcode rawOpcode() { return OPCODES[segment.get(ValueLayout.JAVA_INT, offset + 12)]; }
        @Override protected long rawByteLength() { return 0; }
        @Override protected long rawFlags() { return 0; }
        @Override protected boolean rawHasImmediate() { return false; }
        @Override protected int rawImmediate() { return 0; }
    }
}
