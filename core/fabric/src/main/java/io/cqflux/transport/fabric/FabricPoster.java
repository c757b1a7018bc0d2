package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.Opcode;
import io.cqflux.core.spi.Connection;
import io.cqflux.transport.fabric.ffm.fi_msg;
import io.cqflux.transport.fabric.ffm.fi_msg_rma;
import io.cqflux.transport.fabric.ffm.fi_ops_msg;
import io.cqflux.transport.fabric.ffm.fi_ops_rma;
import io.cqflux.transport.fabric.ffm.fi_rma_iov;
import io.cqflux.transport.fabric.ffm.fid_ep;
import io.cqflux.transport.fabric.ffm.iovec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * Posts one endpoint's operations: fills the connection's message structs and calls the
 * endpoint's {@code *msg} ops ({@code fi_writemsg}, {@code fi_readmsg}, {@code fi_sendmsg},
 * {@code fi_recvmsg}), so that the flags are per operation: the CQ is bound with
 * {@code FI_SELECTIVE_COMPLETION} ({@code fi_endpoint(3)}), so only posts carrying
 * {@code FI_COMPLETION} produce a success entry. The message structs, the iovec, the rma_iov and
 * the descriptor array are allocated once per connection, in one block, and refilled per post;
 * the ops are resolved once per endpoint. Its {@link FabricConnection} checks the arguments and the
 * connection's state before each call, and closes the arena only after the endpoint.
 *
 * <p>Threading: confined as its connection is (the loop thread once handed to it): the scratch is
 * shared by every post.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricPoster {
    private final MemorySegment ep;
    private final String description;
    /** Tells the endpoint's queues that a post ran the provider's progress. */
    private final Runnable touched;
    /** Or-ed into every context: the connection's slot in its completion-queue group, else 0. */
    private final long contextBits;
    // fid ops resolved once per endpoint
    private final MemorySegment writemsgFp;
    private final MemorySegment readmsgFp;
    private final MemorySegment sendmsgFp;
    private final MemorySegment recvmsgFp;
    // per-connection scratch for posting
    private final MemorySegment iov;
    private final MemorySegment desc;
    private final MemorySegment rmaIov;
    private final MemorySegment msgRma;
    private final MemorySegment msg;

    /**
     * @param ep the enabled endpoint
     * @param arena the connection's arena, closed after the endpoint
     * @param touched tells the endpoint's completion queues of a post (see {@link #touchedQueues})
     * @param contextBits the connection's slot in its completion-queue group, in the transport's
     *     context bits (CompletionGroup), or 0
     * @param description the connection's, for errors
     */
    FabricPoster(MemorySegment ep, Arena arena, Runnable touched, long contextBits, String description) {
        this.ep = ep;
        this.description = description;
        this.touched = touched;
        this.contextBits = contextBits;
        this.writemsgFp = fi_ops_rma.writemsg(fid_ep.rma(ep));
        this.readmsgFp = fi_ops_rma.readmsg(fid_ep.rma(ep));
        this.sendmsgFp = fi_ops_msg.sendmsg(fid_ep.msg(ep));
        this.recvmsgFp = fi_ops_msg.recvmsg(fid_ep.msg(ep));
        // Posting scratch, written and passed to the provider after requireEstablished() or
        // receive()'s own check of `closed`, before close(): unscoped (FabricLibrary.unscoped).
        // One allocation sliced in five: each allocation is a malloc chunk of its own, with its
        // header and rounding, paid by every connection, idle ones included.
        MemorySegment slab = FabricLibrary.unscoped(arena.allocate(SCRATCH));
        this.iov = slice(slab, "iov");
        this.desc = slice(slab, "desc");
        this.rmaIov = slice(slab, "rmaIov");
        this.msgRma = slice(slab, "msgRma");
        fi_msg_rma.msg_iov(msgRma, iov);
        fi_msg_rma.desc(msgRma, desc);
        fi_msg_rma.iov_count(msgRma, 1);
        fi_msg_rma.addr(msgRma, 0);
        fi_msg_rma.rma_iov(msgRma, rmaIov);
        fi_msg_rma.rma_iov_count(msgRma, 1);
        this.msg = slice(slab, "msg");
        fi_msg.msg_iov(msg, iov);
        fi_msg.desc(msg, desc);
        fi_msg.iov_count(msg, 1);
        fi_msg.addr(msg, 0);
    }

    /**
     * The posting scratch of one connection, in one allocation: the iovec, the descriptor array,
     * the rma_iov and the two message structs ({@link MemoryLayout#structLayout} checks that each
     * lies at its alignment: all are multiples of 8 bytes).
     */
    static final StructLayout SCRATCH = MemoryLayout.structLayout(
            iovec.layout().withName("iov"), C_POINTER.withName("desc"), fi_rma_iov.layout().withName("rmaIov"),
            fi_msg_rma.layout().withName("msgRma"), fi_msg.layout().withName("msg"));

    private static MemorySegment slice(MemorySegment slab, String name) {
        MemoryLayout.PathElement at = MemoryLayout.PathElement.groupElement(name);
        return slab.asSlice(SCRATCH.byteOffset(at), SCRATCH.select(at).byteSize());
    }

    /** {@code fi_readmsg} or {@code fi_writemsg}; {@return false when the provider said again} */
    boolean rma(boolean read, long localAddress, MemorySegment localDesc, long remoteAddress, long len,
                long key, long data, long flags, long context, Opcode op) {
        callersOnly(context, op);
        buffer(localAddress, len, localDesc);
        fi_rma_iov.addr(rmaIov, remoteAddress);
        fi_rma_iov.len(rmaIov, len);
        fi_rma_iov.key(rmaIov, key);
        fi_msg_rma.iov_count(msgRma, len == 0 ? 0 : 1);
        // A zero-length post (a flush of length 0) passes no descriptor array at all: verbs 1.17
        // (vrb_send_iov) reads desc[0] whenever desc is non-NULL, even for iov_count 0, and
        // desc[0] is NULL there -- the SIGSEGV at libfabric.so.1+0x7da50 (a load from NULL+0x50,
        // the descriptor's hmem iface). fi_mr(3), FI_MR_LOCAL: descriptors are required for the data
        // buffers the local hardware accesses, and a zero-length post has none.
        fi_msg_rma.desc(msgRma, len == 0 ? MemorySegment.NULL : desc);
        msgRma.set(ValueLayout.JAVA_LONG, fi_msg_rma.context$offset(), context | contextBits);
        fi_msg_rma.data(msgRma, data);
        return posted(read ? fi_ops_rma.readmsg.invoke(readmsgFp, ep, msgRma, flags)
                : fi_ops_rma.writemsg.invoke(writemsgFp, ep, msgRma, flags), read ? "fi_readmsg" : "fi_writemsg",
                context, op);
    }

    /** {@code fi_recvmsg} or {@code fi_sendmsg}; {@return false when the provider said again} */
    boolean message(boolean receive, long localAddress, MemorySegment localDesc, long len, long data, long flags,
                    long context, Opcode op) {
        callersOnly(context, op);
        // tcp (1.17) never returns -FI_EAGAIN for a full queue: it ignores tx_attr/rx_attr size
        // (10000 writes were accepted on an endpoint opened with size 2), and keeps the CQ's
        // entries past its ring in the util CQ's overflow list. The caller's credits bound what
        // is in flight (Connection's "Posting" contract) and the CQ is sized to hold every
        // credit; the transport keeps no count of its own.
        buffer(localAddress, len, localDesc);
        // A zero-length message passes no buffer and no descriptor array, as a zero-length RMA
        // does (above, and why NULL and not an array holding NULL). fi_mr(3), FI_MR_LOCAL: the
        // descriptors required are those of the data buffers the local hardware accesses, and
        // with iov_count 0 there is none; what this relies on of the providers: verbs 1.17 reads
        // desc only when it is non-NULL (vrb_send_iov, above) and tcp (no FI_MR_LOCAL) ignores
        // it. So a scoped connection registers nothing for it.
        fi_msg.iov_count(msg, len == 0 ? 0 : 1);
        fi_msg.desc(msg, len == 0 ? MemorySegment.NULL : desc);
        msg.set(ValueLayout.JAVA_LONG, fi_msg.context$offset(), context | contextBits);
        fi_msg.data(msg, data);
        return posted(receive ? fi_ops_msg.recvmsg.invoke(recvmsgFp, ep, msg, flags)
                : fi_ops_msg.sendmsg.invoke(sendmsgFp, ep, msg, flags), receive ? "fi_recvmsg" : "fi_sendmsg",
                context, op);
    }

    /**
     * The caller's context must leave the transport's bits clear (Connection's contract): they
     * carry the connection's slot in its completion-queue group, which an or-ed caller bit would
     * turn into another connection's slot, its completion routed there.
     */
    private void callersOnly(long context, Opcode op) {
        if ((context & Connection.TRANSPORT_CONTEXT_MASK) != 0) {
            throw new IllegalArgumentException(description + ": " + op + " context 0x" + Long.toHexString(context)
                    + " sets bits of the transport's mask 0x" + Long.toHexString(Connection.TRANSPORT_CONTEXT_MASK)
                    + " (Connection.TRANSPORT_CONTEXT_MASK), which callers leave clear");
        }
    }

    /**
     * A post runs the provider's progress: it may match a message that waited for a receive, or
     * leave bytes in the provider's send buffer that only a new fi_trywait asks epoll to flush
     * (TrywaitAnswer). Both queues call fi_trywait again before the loop sleeps.
     */
    void touchedQueues() {
        touched.run();
    }

    /** The local buffer of the next post: the one iovec and its descriptor. */
    private void buffer(long address, long len, MemorySegment localDesc) {
        iov.set(ValueLayout.JAVA_LONG, iovec.iov_base$offset(), address);
        iovec.iov_len(iov, len);
        desc.set(C_POINTER, 0, localDesc);
    }

    /** After the call: the queues were touched (the post ran progress); {@return false on again} */
    private boolean posted(long rc, String call, long context, Opcode op) {
        touchedQueues();
        if (rc == FabricLibrary.AGAIN) {
            return false;
        }
        if (rc < 0) { // the detail is built only on failure: posting allocates nothing
            throw FabricLibrary.failure(call, rc, description + ", " + op + " context 0x" + Long.toHexString(context));
        }
        return true;
    }
}
