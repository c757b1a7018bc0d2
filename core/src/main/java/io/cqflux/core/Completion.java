package io.cqflux.core;

/**
 * One work completion, transport-neutral: the fields of {@code struct ibv_wc} (librpma), of
 * librpma's former {@code struct rpma_completion}, and of libfabric's {@code fi_cq_data_entry} /
 * {@code fi_cq_err_entry}.
 *
 * <p><b>Flyweight.</b> On the hot path a transport hands out one instance per completion queue
 * that is re-pointed at each entry of the native batch: no object per completion. Such a view is
 * valid only during the callback that receives it (it reads the event loop's batch memory, which
 * the next poll overwrites and the loop's end frees); call {@link #snapshot()} to keep one.
 *
 * <p><b>Error entries.</b> As {@code ibv_poll_cq(3)} says, when {@link #status()} is not
 * {@link CompletionStatus#SUCCESS} only the context ({@code wr_id}), the status, the queue pair
 * number and the vendor error are valid. The accessors of the other fields therefore throw
 * {@link IllegalStateException} on an error entry instead of returning whatever the memory held.
 * The error details ({@link #errorNumber()}, {@link #errorText()},
 * {@link #overflowLength()}) are meaningful only on error entries.
 *
 * <p>Fields a transport does not have read as {@code 0} (for example {@link #sourceQueuePair()}
 * on libfabric, or {@link #bufferAddress()} on librpma).
 */
public abstract class Completion {

    /** For subclasses: transports and the snapshot type. */
    protected Completion() {
    }

    /** {@return the 64-bit operation context: {@code wr_id} / {@code op_context}} */
    public abstract long context();

    /** {@return the completion status} */
    public abstract CompletionStatus status();

    /** {@return whether the operation succeeded} */
    public final boolean isSuccess() {
        return status() == CompletionStatus.SUCCESS;
    }

    /** {@return the vendor error syndrome ({@code vendor_err}), or the provider errno on libfabric} */
    public abstract int vendorError();

    /** {@return the local queue pair number ({@code qp_num}); 0 on libfabric} */
    public abstract int queuePair();

    /**
     * {@return the operation kind}
     *
     * @throws IllegalStateException on an error entry, where the opcode is undefined
     */
    public final Opcode opcode() {
        requireSuccess("opcode");
        return rawOpcode();
    }

    /**
     * {@return the number of bytes transferred ({@code byte_len} / {@code len}); meaningful for
     * receives and reads, and for {@link Opcode#RECEIVE_WRITE_WITH_IMMEDIATE} the bytes the peer
     * wrote where the transport knows them, or {@code -1} where it does not: libfabric's tcp
     * provider (1.17) does not report the length of a peer's write with immediate, so on fabric
     * such a notification reads {@code -1} (never {@code 0}, which would claim an empty write);
     * verbs (rpma) reports {@code byte_len}}
     *
     * @throws IllegalStateException on an error entry
     */
    public final long byteLength() {
        requireSuccess("byteLength");
        return rawByteLength();
    }

    /**
     * {@return the raw completion flags: {@code wc_flags} on verbs, {@code flags} on libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final long flags() {
        requireSuccess("flags");
        return rawFlags();
    }

    /**
     * {@return whether the completion carries 32-bit immediate data (remote CQ data on libfabric)}
     *
     * @throws IllegalStateException on an error entry
     */
    public final boolean hasImmediate() {
        requireSuccess("hasImmediate");
        return rawHasImmediate();
    }

    /**
     * {@return the immediate data in host byte order}
     *
     * @throws IllegalStateException on an error entry, or when {@link #hasImmediate()} is false
     */
    public final int immediate() {
        if (!hasImmediate()) {
            throw new IllegalStateException("completion " + describe() + " carries no immediate data");
        }
        return rawImmediate();
    }

    /**
     * {@return the remote queue pair of a receive ({@code src_qp}); 0 on libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final int sourceQueuePair() {
        requireSuccess("sourceQueuePair");
        return rawSourceQueuePair();
    }

    /**
     * {@return the partition key index ({@code pkey_index}); 0 on libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final int partitionKeyIndex() {
        requireSuccess("partitionKeyIndex");
        return rawPkeyIndex();
    }

    /**
     * {@return the source LID ({@code slid}); 0 on RoCE and libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final int sourceLid() {
        requireSuccess("sourceLid");
        return rawSlid();
    }

    /**
     * {@return the service level ({@code sl}); 0 on libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final int serviceLevel() {
        requireSuccess("serviceLevel");
        return rawServiceLevel();
    }

    /**
     * {@return the destination LID path bits ({@code dlid_path_bits}); 0 on libfabric}
     *
     * @throws IllegalStateException on an error entry
     */
    public final int destinationLidPathBits() {
        requireSuccess("destinationLidPathBits");
        return rawDlidPathBits();
    }

    /**
     * {@return the receive buffer address ({@code buf}, libfabric only; 0 elsewhere)}
     *
     * @throws IllegalStateException on an error entry
     */
    public final long bufferAddress() {
        requireSuccess("bufferAddress");
        return rawBufferAddress();
    }

    /**
     * {@return the received tag ({@code tag}, tagged libfabric entries only; 0 elsewhere)}
     *
     * @throws IllegalStateException on an error entry
     */
    public final long tag() {
        requireSuccess("tag");
        return rawTag();
    }

    /**
     * {@return on an error entry, the errno-style number the transport gave for it (libfabric's
     * positive {@code err}, e.g. 125 for ECANCELED); 0 where the transport reports only a status
     * and a vendor error (verbs)}
     */
    public abstract int errorNumber();

    /** {@return on a libfabric error entry the overflow length ({@code olen}); otherwise 0} */
    public abstract long overflowLength();

    /**
     * {@return on an error entry the library's text for it ({@code fi_cq_strerror},
     * {@code ibv_wc_status_str}); an empty string on success}
     */
    public abstract String errorText();

    /** {@return an immutable copy that stays valid after the callback returns} */
    public CompletionRecord snapshot() {
        return CompletionRecord.copyOf(this);
    }

    /** {@return the opcode as stored, without the success check} */
    protected abstract Opcode rawOpcode();

    /** {@return the byte length as stored, without the success check} */
    protected abstract long rawByteLength();

    /** {@return the flags as stored, without the success check} */
    protected abstract long rawFlags();

    /** {@return whether immediate data is present, without the success check} */
    protected abstract boolean rawHasImmediate();

    /** {@return the immediate data in host order, without checks} */
    protected abstract int rawImmediate();

    /** {@return {@code src_qp} without the success check; 0 by default} */
    protected int rawSourceQueuePair() {
        return 0;
    }

    /** {@return {@code pkey_index} without the success check; 0 by default} */
    protected int rawPkeyIndex() {
        return 0;
    }

    /** {@return {@code slid} without the success check; 0 by default} */
    protected int rawSlid() {
        return 0;
    }

    /** {@return {@code sl} without the success check; 0 by default} */
    protected int rawServiceLevel() {
        return 0;
    }

    /** {@return {@code dlid_path_bits} without the success check; 0 by default} */
    protected int rawDlidPathBits() {
        return 0;
    }

    /** {@return {@code buf} without the success check; 0 by default} */
    protected long rawBufferAddress() {
        return 0;
    }

    /** {@return {@code tag} without the success check; 0 by default} */
    protected long rawTag() {
        return 0;
    }

    private void requireSuccess(String field) {
        if (!isSuccess()) {
            throw new IllegalStateException(field + " is undefined on an error completion ("
                    + describe() + "); only context, status, queuePair and vendorError are valid,"
                    + " see ibv_poll_cq(3)");
        }
    }

    private String describe() {
        return "context=0x" + Long.toHexString(context()) + ", status=" + status();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Completion[context=0x").append(Long.toHexString(context()))
                .append(", status=").append(status());
        if (isSuccess()) {
            b.append(", opcode=").append(rawOpcode()).append(", byteLength=").append(rawByteLength());
            if (rawHasImmediate()) {
                b.append(", immediate=0x").append(Integer.toHexString(rawImmediate()));
            }
        } else {
            b.append(", vendorError=").append(vendorError());
            if (errorNumber() != 0) {
                b.append(", errorNumber=").append(errorNumber());
            }
            if (!errorText().isEmpty()) {
                b.append(", error=\"").append(errorText()).append('"');
            }
        }
        return b.append(']').toString();
    }
}
