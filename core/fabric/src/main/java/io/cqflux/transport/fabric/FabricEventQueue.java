package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.internal.Segments;
import io.cqflux.transport.fabric.ffm.fi_eq_attr;
import io.cqflux.transport.fabric.ffm.fi_eq_cm_entry;
import io.cqflux.transport.fabric.ffm.fi_eq_err_entry;
import io.cqflux.transport.fabric.ffm.fi_ops_eq;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fid_eq;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One event queue ({@code fi_eq(3)}) opened with {@code FI_WAIT_FD}, with its read/readerr ops
 * and the fabric's trywait resolved once, and one preallocated entry buffer large enough for a
 * CM entry with the provider's largest private data. Its reads ({@link #read}, {@link #sread})
 * are confined to one thread after construction; {@link #write} may be called by any thread
 * (it is synchronized), with a buffer of its own ({@code fi_eq(3)}: an event queue serialises its
 * own reads and writes).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricEventQueue implements AutoCloseable {

    /** {@link #read()} result: nothing pending. */
    static final int NONE = -1;
    /** {@link #read()} result: an error entry was read (its error via {@link #lastError()}). */
    static final int ERROR = -2;
    /** {@code -FI_EINTR}: {@link #sread}'s wait ended by a signal. */
    private static final long INTERRUPTED = -FabricErrno.EINTR.code();

    private final FabricTransport transport;
    private final Arena arena = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after fi_close: DeferredArena
    private final MemorySegment eq;
    private final MemorySegment readFp;
    private final MemorySegment readerrFp;
    private final MemorySegment sreadFp;
    private final MemorySegment writeFp;
    /** {@link #write}'s entry, apart from the reader's. */
    private final MemorySegment written;
    private final MemorySegment eventOut;
    private final MemorySegment entry;
    private final MemorySegment errEntry;
    /** Where the provider copies an error entry's {@code err_data} (a reject's private data). */
    private final MemorySegment errData;
    private final MemorySegment trywaitFids;
    private final int fd;
    private long lastLength;
    /** Whether the next sleep needs fi_trywait (see TrywaitAnswer). */
    private final TrywaitAnswer trywait;
    private boolean closed;

    FabricEventQueue(FabricTransport transport) {
        this(transport, 16);
    }

    /**
     * @param transport the fabric
     * @param size the entries asked for ({@code fi_eq_attr.size}); a queue shared by many
     *     endpoints asks for more
     */
    FabricEventQueue(FabricTransport transport, int size) {
        this.transport = transport;
        this.trywait = TrywaitAnswer.ofEventQueue(transport.provider());
        try {
            MemorySegment attr = fi_eq_attr.allocate(arena);
            fi_eq_attr.size(attr, size);
            fi_eq_attr.wait_obj(attr, FI_WAIT_FD());
            MemorySegment out = arena.allocate(C_POINTER);
            FabricLibrary.check("fi_eq_open",
                    fi_ops_fabric.eq_open.invoke(transport.eqOpenFp, transport.fabric(), attr, out, MemorySegment.NULL),
                    transport.name());
            this.eq = out.get(C_POINTER, 0);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        try {
            MemorySegment ops = fid_eq.ops(eq);
            this.readFp = fi_ops_eq.read(ops);
            this.readerrFp = fi_ops_eq.readerr(ops);
            this.sreadFp = fi_ops_eq.sread(ops);
            this.writeFp = fi_ops_eq.write(ops);
            this.written = io.cqflux.transport.fabric.ffm.fi_eq_entry.allocate(arena);
            this.eventOut = arena.allocate(ValueLayout.JAVA_INT);
            this.entry = arena.allocate(fi_eq_cm_entry.sizeof() + FabricTransport.PRIVATE_DATA_BOUND + 64, 8);
            this.errEntry = fi_eq_err_entry.allocate(arena);
            this.errData = arena.allocate(FabricTransport.PRIVATE_DATA_BOUND, 8);
            this.trywaitFids = arena.allocate(C_POINTER);
            trywaitFids.set(C_POINTER, 0, eq);
            // fi_control(3) FI_GETWAIT: the fd behind FI_WAIT_FD.
            MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
            FabricLibrary.check("fi_control(FI_GETWAIT)", FabricLibrary.control(eq, FI_GETWAIT(), fdOut), "event queue");
            this.fd = fdOut.get(ValueLayout.JAVA_INT, 0);
        } catch (RuntimeException e) {
            FabricLibrary.close(eq, "eq", transport);
            arena.close();
            throw e;
        }
    }

    MemorySegment eq() {
        return eq;
    }

    int fd() {
        return fd;
    }

    /**
     * {@code fi_trywait(fabric, &eq, 1)}: whether it is safe to block on the fd.
     *
     * @return false when events are pending ({@code -FI_EAGAIN})
     */
    boolean trywait() {
        return closed || trywait.ask(transport, trywaitFids, "event queue");
    }

    /**
     * {@code fi_shutdown} on the queue's endpoint: the next {@link #trywait} calls fi_trywait
     * again. (Connect and accept come before the queue's first one, so nothing stands then.)
     */
    void touched() {
        trywait.clear();
    }

    /**
     * Watches the queue's answer for the loop (TrywaitAnswer#watch).
     *
     * @param touched called when a standing FI_SUCCESS is cleared, or {@code null} to stop
     * @return whether the answers may stand on this provider
     */
    boolean watch(Runnable touched) {
        return trywait.watch(touched);
    }

    /** {@return the queue's fi_trywait answer (tests)} */
    TrywaitAnswer trywaitAnswer() {
        return trywait;
    }

    /**
     * Reads one event without blocking ({@code fi_eq_read(3)}, flags 0).
     *
     * @return the event ({@code FI_CONNREQ}, {@code FI_CONNECTED}, {@code FI_SHUTDOWN}, ...),
     *     {@link #NONE} or {@link #ERROR}
     */
    int read() {
        if (closed) {
            return NONE;
        }
        trywait.clear(); // a read: fi_trywait(3) asks for the call again before blocking
        long rc = fi_ops_eq.read.invoke(readFp, eq, eventOut, entry, entry.byteSize(), 0L);
        return event("fi_eq_read", rc);
    }

    /** What a read's {@code rc} says: the event read, {@link #NONE} or {@link #ERROR} (its entry read). */
    private int event(String call, long rc) {
        if (rc == -FI_EAVAIL()) {
            // fi_eq(3): err_data_size is an input, the room at err_data, and comes back as what was
            // copied there; reset what the previous call returned. A buffer of our own, not the
            // provider's (err_data_size 0 on input): tcp and verbs copy a refused connect's
            // fi_reject(3) data into it, and only then (core/fabric/src/test/c/reject_data_probe.c,
            // verbs_cm_data_probe.c).
            fi_eq_err_entry.err_data(errEntry, errData);
            fi_eq_err_entry.err_data_size(errEntry, errData.byteSize());
            long r = fi_ops_eq.readerr.invoke(readerrFp, eq, errEntry, 0L);
            return FabricLibrary.result("fi_eq_readerr", r, "event queue") == FabricLibrary.AGAIN ? NONE : ERROR;
        }
        if (FabricLibrary.result(call, rc, "event queue") == FabricLibrary.AGAIN) {
            return NONE;
        }
        lastLength = rc;
        return eventOut.get(ValueLayout.JAVA_INT, 0);
    }

    /**
     * Reads one event, waiting up to {@code timeoutMillis} for one ({@code fi_eq_sread(3)}, flags
     * 0); as {@link #read()} otherwise.
     *
     * <p>Facts (libfabric 1.17, tcp; {@code core/fabric/src/test/c/eq_sread_probe.c}): on a passive
     * endpoint's queue it returns the {@code FI_CONNREQ} of a client that connects meanwhile, and
     * {@code -FI_EAGAIN} (not {@code -FI_ETIMEDOUT}) after the timeout with nothing; an entry
     * another thread writes ({@link #write}) wakes it at once; a signal delivered to the waiting
     * thread ends the wait with {@code -FI_EINTR} (epoll_wait(2) returns EINTR whatever the
     * handler's SA_RESTART, and after a SIGSTOP and SIGCONT of the process too), which is no event:
     * {@link #NONE}.
     *
     * @return the event, {@link #NONE} (the timeout passed, or a signal ended the wait) or {@link #ERROR}
     */
    int sread(int timeoutMillis) {
        if (closed) {
            return NONE;
        }
        trywait.clear();
        long rc = fi_ops_eq.sread.invoke(sreadFp, eq, eventOut, entry, entry.byteSize(), timeoutMillis, 0L);
        return rc == INTERRUPTED ? NONE : event("fi_eq_sread", rc);
    }

    /**
     * Writes one {@code FI_NOTIFY} entry naming this queue ({@code fi_eq_write(3)}): its fd turns
     * readable and {@link #trywait} says no until a {@link #read} takes it (eq_sread_probe.c).
     * Any thread; writers take turns on the one entry buffer.
     */
    synchronized void write() {
        io.cqflux.transport.fabric.ffm.fi_eq_entry.fid(written, eq);
        long rc = fi_ops_eq.write.invoke(writeFp, eq, FI_NOTIFY(), written,
                io.cqflux.transport.fabric.ffm.fi_eq_entry.sizeof(), 0L);
        FabricLibrary.check("fi_eq_write", rc, "event queue");
    }

    /** {@return the entry buffer of the last event (a fi_eq_cm_entry for CM events)} */
    MemorySegment entry() {
        return entry;
    }

    /** {@return the private data of the last CM event, a copy} */
    byte[] cmData() {
        long n = lastLength - fi_eq_cm_entry.sizeof();
        if (n <= 0) {
            return new byte[0];
        }
        return Segments.copyOut(entry, fi_eq_cm_entry.data$offset(), Math.min(n, entry.byteSize() - fi_eq_cm_entry.sizeof()));
    }

    /**
     * {@return the address of the fid the last event names} {@code fi_eq(3)}: a CM entry's
     * {@code fid} and an error entry's {@code fid} are the endpoint (or passive endpoint) the
     * event is for, which is how a queue shared by many endpoints routes its events.
     *
     * @param error whether the last read was an error entry ({@link #ERROR})
     */
    long lastFid(boolean error) {
        return (error ? fi_eq_err_entry.fid(errEntry) : fi_eq_cm_entry.fid(entry)).address();
    }

    /** {@return the positive error of the last error entry} */
    int lastError() {
        return fi_eq_err_entry.err(errEntry);
    }

    /**
     * {@return the provider's error data of the last error entry, a copy, possibly empty: for a
     * refused connect on tcp and verbs, the private data the server passed to fi_reject(3)}
     */
    byte[] lastErrorData() {
        long n = fi_eq_err_entry.err_data_size(errEntry);
        // Only what the provider copied into our buffer: one that pointed err_data elsewhere (its own
        // buffer, fi_eq(3)) is not read.
        if (n <= 0 || fi_eq_err_entry.err_data(errEntry).address() != errData.address()) {
            return new byte[0];
        }
        return Segments.copyOut(errData, 0, Math.min(n, errData.byteSize()));
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        FabricLibrary.close(eq, "eq", transport);
        arena.close();
    }
}
