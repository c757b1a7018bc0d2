package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.transport.fabric.ffm.fi_cq_attr;
import io.cqflux.transport.fabric.ffm.fi_cq_data_entry;
import io.cqflux.transport.fabric.ffm.fi_cq_err_entry;
import io.cqflux.transport.fabric.ffm.fi_ops_cq;
import io.cqflux.transport.fabric.ffm.fi_ops_domain;
import io.cqflux.transport.fabric.ffm.fid_cq;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A connection's completion queue ({@code fi_cq(3)}, {@code FI_CQ_FORMAT_DATA},
 * {@code FI_WAIT_FD}). Its read, readerr and strerror ops and the fabric's trywait are resolved
 * once; entries are read in place through one flyweight; the error entry and the strerror
 * buffer are preallocated. Loop-confined; {@link #close()} is called by the connection.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricCompletionQueue implements CompletionQueue {

    private final FabricTransport transport;
    /** Its connection, or its CompletionGroup: named in errors and logs. */
    private final Object owner;
    private final boolean receive;
    private final Arena arena = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after fi_close: DeferredArena
    private final MemorySegment cq;
    private final MemorySegment readFp;
    private final MemorySegment readerrFp;
    private final MemorySegment strerrorFp;
    private final MemorySegment errEntry;
    private final MemorySegment errText;
    private final MemorySegment trywaitFids;
    private final int fd;
    private final View view = new View();
    /** Whether the next sleep needs fi_trywait (see TrywaitAnswer). */
    private final TrywaitAnswer trywait;
    private boolean closed;

    FabricCompletionQueue(FabricTransport transport, Object owner, int size, boolean receive) {
        this(transport, transport, owner, size, receive);
    }

    /** A CQ opened in {@code home}'s domain: the one its connection's endpoint is opened in ({@code fi_endpoint(3)}). */
    FabricCompletionQueue(FabricTransport transport, DomainHolder home, Object owner, int size,
                          boolean receive) {
        this.transport = transport;
        this.owner = owner;
        this.receive = receive;
        this.trywait = TrywaitAnswer.ofCompletionQueue(transport.provider());
        try {
            MemorySegment attr = fi_cq_attr.allocate(arena);
            fi_cq_attr.size(attr, size);
            fi_cq_attr.format(attr, FI_CQ_FORMAT_DATA());
            fi_cq_attr.wait_obj(attr, FI_WAIT_FD());
            MemorySegment out = arena.allocate(C_POINTER);
            FabricLibrary.check("fi_cq_open", fi_ops_domain.cq_open.invoke(home.ops().cqOpenFp(), home.ops().domain(), attr,
                    out, MemorySegment.NULL), "size " + size);
            this.cq = out.get(C_POINTER, 0);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        try {
            MemorySegment ops = fid_cq.ops(cq);
            this.readFp = fi_ops_cq.read(ops);
            this.readerrFp = fi_ops_cq.readerr(ops);
            this.strerrorFp = fi_ops_cq.strerror(ops);
            this.errEntry = fi_cq_err_entry.allocate(arena);
            this.errText = arena.allocate(256);
            // Passed to fi_trywait after the check of `closed`, before close(): unscoped
            // (FabricLibrary.unscoped).
            this.trywaitFids = FabricLibrary.unscoped(arena.allocate(C_POINTER));
            trywaitFids.set(C_POINTER, 0, cq);
            MemorySegment fdOut = arena.allocate(ValueLayout.JAVA_INT);
            FabricLibrary.check("fi_control(FI_GETWAIT)", FabricLibrary.control(cq, FI_GETWAIT(), fdOut),
                    "completion queue");
            this.fd = fdOut.get(ValueLayout.JAVA_INT, 0);
        } catch (RuntimeException e) {
            FabricLibrary.close(cq, "cq", owner);
            arena.close();
            throw e;
        }
    }

    MemorySegment cq() {
        return cq;
    }

    @Override
    public int fd() {
        return fd;
    }

    /**
     * On the verbs provider {@code fi_cq_read(3)} reads the verbs CQ ({@code ibv_poll_cq(3)}, a
     * ring in user space), so the loop may poll once more before it sleeps; on tcp a read drives
     * the provider's socket progress (system calls of its own), and {@code fi_trywait(3)} already
     * tells the loop whether anything is buffered.
     */
    @Override
    public boolean pollIsCheap() {
        return "verbs".equals(transport.provider());
    }

    @Override
    public void acknowledge() {
        // fi_cq(3) with FI_WAIT_FD needs no acknowledgement: fi_trywait before sleeping is the rule.
    }

    @Override
    public boolean prepareToSleep() {
        return closed || trywait.ask(transport, trywaitFids, "completion queue");
    }

    /**
     * The last fi_trywait said FI_SUCCESS and nothing read the queue, posted to its endpoint or
     * shut it down since (TrywaitAnswer): a completion, or the socket data the provider's
     * progress would turn into one, signals {@link #fd()}, so a spinning loop may wait for the fd
     * instead of calling fi_cq_read every round. The loop still asks {@link #prepareToSleep()}
     * from time to time, which answers from that answer while it is under 1 ms old and asks
     * fi_trywait again after. Never true on a provider or version whose answers are not cached.
     */
    @Override
    public boolean quiet() {
        return !closed && trywait.untouched();
    }

    /**
     * On libfabric 1.17's tcp and verbs providers, whose fi_trywait answers are kept
     * (TrywaitAnswer). (A spinning loop leaves only tcp's unpolled: verbs' poll is cheap.)
     */
    @Override
    public boolean canBeQuiet() {
        return trywait.caches();
    }

    /**
     * On libfabric 1.17's tcp and verbs providers: a FI_SUCCESS of fi_trywait stands until the
     * queue is read, posted to or shut down, each of which tells the loop (TrywaitAnswer).
     */
    @Override
    public boolean watchTouches(Runnable touched) {
        return trywait.watch(touched);
    }

    /**
     * The endpoint posted or shut down: the post's progress may have matched a message waiting
     * for a receive, or left bytes in the provider's send buffer (TrywaitAnswer), so the next
     * {@link #prepareToSleep} calls fi_trywait again.
     */
    void touched() {
        trywait.clear();
    }

    /** {@return the queue's fi_trywait answer (tests)} */
    TrywaitAnswer trywaitAnswer() {
        return trywait;
    }

    @Override
    public int poll(MemorySegment scratch, int max, CompletionSink sink) {
        if (closed || max <= 0) {
            return 0;
        }
        trywait.clear(); // a read: fi_trywait(3) asks for the call again before blocking
        if (scratch.byteSize() < max * fi_cq_data_entry.sizeof()) {
            throw new IllegalArgumentException("scratch of " + scratch.byteSize() + " bytes is below " + max + " entries of "
                    + fi_cq_data_entry.sizeof() + " bytes");
        }
        int delivered = 0;
        while (delivered < max) {
            long n = fi_ops_cq.read.invoke(readFp, cq, scratch, (long) (max - delivered));
            if (n > 0) {
                for (int i = 0; i < n; i++) {
                    view.entry(scratch, i * fi_cq_data_entry.sizeof());
                    // No sink closes this CQ inside poll: the owner defers every native close to a
                    // loop task that runs after the drain.
                    sink.onCompletion(view);
                }
                delivered += (int) n;
            } else if (n == -FI_EAVAIL()) {
                // fi_cq(3): an error entry is waiting; fi_cq_readerr takes exactly one. err_data_size
                // is an INPUT too (API >= 1.5): non-zero means "copy into my err_data buffer". The
                // previous call left the provider's own pointer and size there, so reusing the entry
                // unchanged would make the provider write into its (possibly freed) buffer: reset both.
                fi_cq_err_entry.err_data(errEntry, MemorySegment.NULL);
                fi_cq_err_entry.err_data_size(errEntry, 0L);
                long r = fi_ops_cq.readerr.invoke(readerrFp, cq, errEntry, 0L);
                if (FabricLibrary.result("fi_cq_readerr", r, "completion queue") == FabricLibrary.AGAIN) {
                    break;
                }
                view.error(errEntry);
                sink.onCompletion(view);
                delivered++;
            } else if (FabricLibrary.result("fi_cq_read", n, String.valueOf(owner)) == FabricLibrary.AGAIN) {
                break; // fi_cq_read(3): the queue is empty
            }
        }
        return delivered;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        FabricLibrary.close(cq, "cq", owner);
        arena.close();
    }

    /** The flyweight over one native entry (a fi_cq_data_entry of the batch, or the error entry). */
    final class View extends Completion {
        private MemorySegment seg;
        private long off;
        private boolean isError;
        private Opcode opcode;
        private CompletionStatus status;
        private String text;

        void entry(MemorySegment s, long offset) {
            seg = s;
            off = offset;
            isError = false;
            status = CompletionStatus.SUCCESS;
            text = "";
            // What the provider reported: a flush (a read-back) reads as a read; the
            // layer that posted it owns what it was.
            opcode = opcodeOf(seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.flags$offset()));
        }

        void error(MemorySegment e) {
            seg = e;
            off = 0;
            isError = true;
            int err = fi_cq_err_entry.err(e);
            int prov = fi_cq_err_entry.prov_errno(e);
            // verbs: prov_errno is the ibv_wc_status itself (IBV_WC_REM_ACCESS_ERR 10 arrives as
            // err EIO): report that, as the rpma transport does; else map the errno (fi_cq(3)).
            status = transport.providerErrnoIsVerbsStatus() && prov > 0 && prov < CompletionStatus.values().length
                    ? CompletionStatus.of(prov) : FabricErrno.statusOf(err);
            opcode = null; // undefined on an error entry (fi_cq(3): flags may be 0)
            MemorySegment p = fi_ops_cq.strerror.invoke(strerrorFp, cq, fi_cq_err_entry.prov_errno(e),
                    fi_cq_err_entry.err_data(e), errText, errText.byteSize());
            text = FabricLibrary.string(p.equals(MemorySegment.NULL) ? errText : p);
            if (text.isEmpty()) {
                text = FabricLibrary.strerror(err);
            }
        }

        private Opcode opcodeOf(long flags) {
            boolean data = (flags & FI_REMOTE_CQ_DATA()) != 0;
            // tcp (1.17) reports a remote write with CQ data at the target with flags
            // FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA (0x22000): no FI_RMA, no FI_RECV, op_context NULL
            // and len 0 -- it does not consume a posted receive (fi_cq(3), FI_RX_CQ_DATA mode off).
            if ((flags & FI_REMOTE_WRITE()) != 0) {
                return Opcode.RECEIVE_WRITE_WITH_IMMEDIATE;
            }
            if ((flags & FI_RMA()) != 0) {
                if ((flags & FI_READ()) != 0) {
                    return Opcode.READ;
                }
                return data ? Opcode.WRITE_WITH_IMMEDIATE : Opcode.WRITE;
            }
            if ((flags & FI_RECV()) != 0) {
                return data && (flags & FI_REMOTE_WRITE()) != 0 ? Opcode.RECEIVE_WRITE_WITH_IMMEDIATE : Opcode.RECEIVE;
            }
            if ((flags & FI_SEND()) != 0) {
                return data ? Opcode.SEND_WITH_IMMEDIATE : Opcode.SEND;
            }
            return receive ? (data ? Opcode.RECEIVE_WRITE_WITH_IMMEDIATE : Opcode.RECEIVE) : Opcode.WRITE;
        }

        @Override
        public long context() {
            return seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.op_context$offset());
        }

        /** {@return a success entry's whole 64-bit CQ data, the immediate in its low half (CompletionGroup)} */
        long data() {
            return isError ? 0 : seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.data$offset());
        }

        @Override
        public CompletionStatus status() {
            return status;
        }

        @Override
        public int vendorError() {
            return isError ? fi_cq_err_entry.prov_errno(seg) : 0;
        }

        @Override
        public int queuePair() {
            return 0;
        }

        @Override
        public int errorNumber() {
            return isError ? fi_cq_err_entry.err(seg) : 0;
        }

        @Override
        public long overflowLength() {
            return isError ? fi_cq_err_entry.olen(seg) : 0;
        }

        @Override
        public String errorText() {
            return text;
        }

        @Override
        protected Opcode rawOpcode() {
            return opcode;
        }

        @Override
        protected long rawByteLength() {
            long len = seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.len$offset());
            // fi_cq(3) of 1.17: "len ... only applies to completed receive operations". The target's
            // entry for a peer's write with CQ data (FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA) is not one:
            // tcp 1.17 writes len 0 there unconditionally (no flag or mode changes that; later tcp
            // releases fill in the payload size). A 0 there means "not reported", not "0 bytes", so
            // it reads as -1, unknown (package-info); a length the provider did report is kept.
            if (len == 0 && (rawFlags() & FI_REMOTE_WRITE()) != 0) {
                return -1;
            }
            return len;
        }

        @Override
        protected long rawFlags() {
            return seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.flags$offset());
        }

        @Override
        protected boolean rawHasImmediate() {
            return (rawFlags() & FI_REMOTE_CQ_DATA()) != 0;
        }

        @Override
        protected int rawImmediate() {
            // fi_cq(3): data is a host-order uint64_t; the immediate is its low 32 bits.
            return (int) seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.data$offset());
        }

        @Override
        protected long rawBufferAddress() {
            return seg.get(ValueLayout.JAVA_LONG, off + fi_cq_data_entry.buf$offset());
        }
    }
}
