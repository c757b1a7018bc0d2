package io.cqflux.core;

/**
 * Work completion status, the 24 values of {@code enum ibv_wc_status} ({@code ibv_poll_cq(3)}) in
 * their numeric order, so that {@link #code()} equals the C value.
 *
 * <p>The fabric transport maps libfabric's positive error numbers onto these names: an operation
 * cut off because its connection ended (cancelled, not connected, reset, aborted, shut down,
 * broken pipe) is {@link #WR_FLUSH_ERR}, a peer not reached in time {@link #RETRY_EXC_ERR}, an
 * access or key violation {@link #REM_ACCESS_ERR}, a truncation {@link #LOC_LEN_ERR}, no posted
 * receive {@link #RNR_RETRY_EXC_ERR}, a remote I/O error {@link #REM_OP_ERR}, everything else
 * {@link #GENERAL_ERR}; the exact libfabric value stays available through
 * {@link Completion#errorNumber()}.
 */
public enum CompletionStatus {
    /** The operation completed successfully. */
    SUCCESS,
    /** Local length error: a posted buffer was too small or the message too long. */
    LOC_LEN_ERR,
    /** Local queue pair operation error. */
    LOC_QP_OP_ERR,
    /** Local EE context operation error. */
    LOC_EEC_OP_ERR,
    /** Local protection error: a buffer was not registered for the access. */
    LOC_PROT_ERR,
    /** Work request flushed: the queue pair entered the error state (connection closed or lost). */
    WR_FLUSH_ERR,
    /** Memory window bind error. */
    MW_BIND_ERR,
    /** Bad response error. */
    BAD_RESP_ERR,
    /** Local access error. */
    LOC_ACCESS_ERR,
    /** Remote invalid request error. */
    REM_INV_REQ_ERR,
    /** Remote access error: bad key, out of bounds or missing access right at the peer. */
    REM_ACCESS_ERR,
    /** Remote operation error. */
    REM_OP_ERR,
    /** Transport retry counter exceeded: the peer stopped answering. */
    RETRY_EXC_ERR,
    /** Receiver-not-ready retry counter exceeded: no receive was posted at the peer. */
    RNR_RETRY_EXC_ERR,
    /** Local RDD violation error. */
    LOC_RDD_VIOL_ERR,
    /** Remote invalid RD request. */
    REM_INV_RD_REQ_ERR,
    /** Remote aborted error. */
    REM_ABORT_ERR,
    /** Invalid EE context number. */
    INV_EECN_ERR,
    /** Invalid EE context state. */
    INV_EEC_STATE_ERR,
    /** Fatal error. */
    FATAL_ERR,
    /** Response timeout error. */
    RESP_TIMEOUT_ERR,
    /** General error: anything the other names do not cover. */
    GENERAL_ERR,
    /** Tag matching error. */
    TM_ERR,
    /** Tag matching rendezvous incomplete. */
    TM_RNDV_INCOMPLETE;

    private static final CompletionStatus[] VALUES = values();

    /** {@return the numeric value of this status in {@code enum ibv_wc_status}} */
    public int code() {
        return ordinal();
    }

    /**
     * Maps a numeric {@code ibv_wc_status} to its name.
     *
     * @param code the C value
     * @return the status, or {@link #GENERAL_ERR} for a value newer than this list
     */
    public static CompletionStatus of(int code) {
        return code >= 0 && code < VALUES.length ? VALUES[code] : GENERAL_ERR;
    }
}
