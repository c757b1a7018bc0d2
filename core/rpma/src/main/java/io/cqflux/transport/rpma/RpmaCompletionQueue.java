package io.cqflux.transport.rpma;

import io.cqflux.core.Opcode;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One of a connection's CQs as the loop drives it: the main CQ, the receive CQ, or (shared
 * channel mode) both behind the connection's one completion fd.
 *
 * <p>Owned by its connection: {@code rpma_conn_delete(3)} destroys the CQs, so {@link #close()}
 * only detaches, and every method is a no-op once the connection is closed (the native CQ may
 * be gone). Loop-confined.
 */
final class RpmaCompletionQueue implements CompletionQueue {

    /** Upper bound of notifications consumed per {@link #acknowledge()}; more stay for the next wake-up. */
    private static final int MAX_ACKS = 16;

    private final RpmaConnection connection;
    private final String name;
    private final MemorySegment cq;
    private final MemorySegment rcq; // shared mode only, else NULL
    private final boolean shared;
    private final int fd;
    private final MemorySegment gotOut;
    private final MemorySegment waitCqOut;
    private final MemorySegment waitIsRcqOut;
    private final RpmaCompletion view = new RpmaCompletion();
    /** For error messages; built once, not on every poll. */
    private final String where;
    private boolean closed;

    private RpmaCompletionQueue(RpmaConnection connection, String name, MemorySegment cq, MemorySegment rcq,
                                boolean shared, int fd, Arena arena) {
        this.connection = connection;
        this.name = name;
        this.where = connection.description() + " " + name;
        this.cq = cq;
        this.rcq = rcq;
        this.shared = shared;
        this.fd = fd;
        // Out-parameters of every poll and acknowledge, used after isDetached() says the queue
        // and its connection are open: unscoped (RpmaNative.unscoped).
        this.gotOut = RpmaNative.unscoped(arena.allocate(ValueLayout.JAVA_INT));
        this.waitCqOut = RpmaNative.unscoped(arena.allocate(ValueLayout.ADDRESS));
        this.waitIsRcqOut = RpmaNative.unscoped(arena.allocate(ValueLayout.JAVA_BOOLEAN));
    }

    /** A CQ with its own completion channel; its fd is made non-blocking ({@code rpma_cq_get_fd(3)}). */
    static RpmaCompletionQueue single(RpmaConnection c, String name, MemorySegment cq, Arena arena) {
        MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
        RpmaNative.check("rpma_cq_get_fd", librpma_h.rpma_cq_get_fd(cq, fdOut), name);
        int fd = fdOut.get(ValueLayout.JAVA_INT, 0);
        RpmaNative.setNonBlocking(fd, arena);
        return new RpmaCompletionQueue(c, name, cq, MemorySegment.NULL, false, fd, arena);
    }

    /**
     * Both CQs behind the shared completion channel ({@code rpma_conn_get_compl_fd(3)}); the fd
     * is made non-blocking so that {@code rpma_conn_wait} returns {@code RPMA_E_NO_COMPLETION}
     * instead of blocking.
     */
    static RpmaCompletionQueue shared(RpmaConnection c, MemorySegment conn, MemorySegment cq, MemorySegment rcq,
                                      Arena arena) {
        MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
        RpmaNative.check("rpma_conn_get_compl_fd", librpma_h.rpma_conn_get_compl_fd(conn, fdOut), "");
        int fd = fdOut.get(ValueLayout.JAVA_INT, 0);
        RpmaNative.setNonBlocking(fd, arena);
        return new RpmaCompletionQueue(c, "shared", cq, rcq, true, fd, arena);
    }

    @Override
    public int fd() {
        return fd;
    }

    /**
     * {@code rpma_cq_get_wc(3)} is {@code ibv_poll_cq(3)}: a read of the CQ ring the provider maps
     * into the process (rxe too), no system call. So a loop that is about to sleep polls once more
     * after a drain that delivered: the chained operation its sinks posted is often complete
     * already, and finding it then saves {@code epoll_wait}, the channel read and the re-arm of
     * {@code rpma_cq_wait(3)}; the C baseline polls before it waits too.
     */
    @Override
    public boolean pollIsCheap() {
        return true;
    }

    /**
     * Consumes the pending notifications, acknowledging and re-arming the CQ for each
     * ({@code rpma_cq_wait(3)}; shared mode: {@code rpma_conn_wait(3)}, which also tells which CQ
     * signalled — both are drained anyway). On the non-blocking fd an empty channel gives
     * {@code RPMA_E_NO_COMPLETION}: normal, and spurious notifications (an event whose
     * completion was already drained, {@code rpma_cq_get_fd(3)}) are harmless.
     */
    @Override
    public void acknowledge() {
        if (isDetached()) {
            return;
        }
        MemorySegment conn = connection.conn();
        for (int i = 0; i < MAX_ACKS; i++) {
            int rc = shared
                    ? librpma_h.rpma_conn_wait(conn, 0, waitCqOut, waitIsRcqOut)
                    : librpma_h.rpma_cq_wait(cq);
            if (!RpmaNative.result(shared ? "rpma_conn_wait" : "rpma_cq_wait", rc, where)) {
                return;
            }
        }
    }

    @Override
    public int poll(MemorySegment scratch, int max, CompletionSink sink) {
        if (max <= 0) {
            throw new IllegalArgumentException("batch size " + max + " is below 1");
        }
        if (scratch.byteSize() < max * RpmaCompletion.SIZE) {
            throw new IllegalArgumentException("scratch of " + scratch.byteSize() + " bytes is below the "
                    + max * RpmaCompletion.SIZE + " bytes a batch of " + max + " needs");
        }
        if (isDetached()) {
            return 0;
        }
        // No sink closes the connection inside this call: the owner defers every native close to
        // a loop task that runs after the drain (ARCHITECTURE.md, "Memory and lifetime").
        int got = drain(cq, scratch, 0, max, sink);
        if (shared && got < max && !rcq.equals(MemorySegment.NULL)) {
            got += drain(rcq, scratch, got, max - got, sink);
        }
        return got;
    }

    private int drain(MemorySegment q, MemorySegment scratch, int first, int max, CompletionSink sink) {
        MemorySegment batch = first == 0 ? scratch : scratch.asSlice(first * RpmaCompletion.SIZE);
        int rc = librpma_h.rpma_cq_get_wc(q, max, batch, gotOut);
        if (!RpmaNative.result("rpma_cq_get_wc", rc, where)) {
            return 0;
        }
        int n = gotOut.get(ValueLayout.JAVA_INT, 0);
        for (int i = 0; i < n; i++) {
            sink.onCompletion(view.at(batch, i));
        }
        return n;
    }

    private boolean isDetached() {
        return closed || connection.isClosed();
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "rpma CQ " + name + " of " + connection.description() + " (fd " + fd + ")";
    }
}
