package io.cqflux.transport.fabric;

import io.cqflux.core.CompletionStatus;

/**
 * libfabric error numbers ({@code rdma/fi_errno.h}). The first group equals the Linux errno
 * values libfabric re-exports; the second group is libfabric's own range starting at 256.
 * Calls return them negated; error completions carry them positive in {@code err}.
 */
enum FabricErrno {
    /** Operation not permitted. */
    EPERM(1),
    /** No such file or directory. */
    ENOENT(2),
    /** Interrupted system call. */
    EINTR(4),
    /** I/O error. */
    EIO(5),
    /** Argument list too long. */
    E2BIG(7),
    /** Bad file number. */
    EBADF(9),
    /** Try again: no completion or no resource right now. */
    EAGAIN(11),
    /** Out of memory. */
    ENOMEM(12),
    /** Permission denied. */
    EACCES(13),
    /** Bad address. */
    EFAULT(14),
    /** Device or resource busy. */
    EBUSY(16),
    /** No such device. */
    ENODEV(19),
    /** Invalid argument. */
    EINVAL(22),
    /** Too many open files. */
    EMFILE(24),
    /** No space left on device. */
    ENOSPC(28),
    /** Function not implemented. */
    ENOSYS(38),
    /** Operation would block. */
    EWOULDBLOCK(11, true),
    /** No message of desired type. */
    ENOMSG(42),
    /** No data available. */
    ENODATA(61),
    /** Value too large for defined data type. */
    EOVERFLOW(75),
    /** Message too long. */
    EMSGSIZE(90),
    /** Protocol not available. */
    ENOPROTOOPT(92),
    /** Operation not supported. */
    EOPNOTSUPP(95),
    /** Address already in use. */
    EADDRINUSE(98),
    /** Cannot assign requested address. */
    EADDRNOTAVAIL(99),
    /** Network is down. */
    ENETDOWN(100),
    /** Network is unreachable. */
    ENETUNREACH(101),
    /** Software caused connection abort. */
    ECONNABORTED(103),
    /** Connection reset by peer. */
    ECONNRESET(104),
    /** No buffer space available. */
    ENOBUFS(105),
    /** Transport endpoint is already connected. */
    EISCONN(106),
    /** Transport endpoint is not connected. */
    ENOTCONN(107),
    /** Cannot send after transport endpoint shutdown. */
    ESHUTDOWN(108),
    /** Connection timed out. */
    ETIMEDOUT(110),
    /** Connection refused. */
    ECONNREFUSED(111),
    /** Host is down. */
    EHOSTDOWN(112),
    /** No route to host. */
    EHOSTUNREACH(113),
    /** Operation already in progress. */
    EALREADY(114),
    /** Operation now in progress. */
    EINPROGRESS(115),
    /** Remote I/O error. */
    EREMOTEIO(121),
    /** Operation canceled. */
    ECANCELED(125),
    /** Key was rejected by service. */
    EKEYREJECTED(129),
    /** Unspecified error. */
    EOTHER(256),
    /** Provided buffer is too small. */
    ETOOSMALL(257),
    /** Operation not permitted in current state. */
    EOPBADSTATE(258),
    /** Error available: read it with fi_cq_readerr / fi_eq_readerr. */
    EAVAIL(259),
    /** Flags not supported. */
    EBADFLAGS(260),
    /** Missing or unavailable event queue. */
    ENOEQ(261),
    /** Invalid resource domain. */
    EDOMAIN(262),
    /** Missing or unavailable completion queue. */
    ENOCQ(263),
    /** CRC error. */
    ECRC(264),
    /** Truncation error. */
    ETRUNC(265),
    /** Required key not available. */
    ENOKEY(266),
    /** Missing or unavailable address vector. */
    ENOAV(267),
    /** Queue has been overrun. */
    EOVERRUN(268),
    /** Receiver not ready, no receive buffers available. */
    ENORX(269);

    /**
     * Linux's EPIPE, which the tcp provider passes through from the socket when the peer's end is
     * gone; fi_errno.h defines no FI_EPIPE (it is commented out there).
     */
    static final int EPIPE = 32;

    /** values() copies its array on every call: this runs on every error completion. */
    private static final FabricErrno[] VALUES = values();

    private final int code;
    private final boolean alias;

    FabricErrno(int code) {
        this(code, false);
    }

    FabricErrno(int code, boolean alias) {
        this.code = code;
        this.alias = alias;
    }

    /** {@return the positive numeric value} */
    int code() {
        return code;
    }

    /**
     * Looks up a libfabric error number; the sign is ignored.
     *
     * @param code the value, positive (completion {@code err}) or negative (call return)
     * @return the constant, or {@code null} when libfabric defines no name for it
     */
    static FabricErrno of(long code) {
        long c = Math.abs(code);
        for (FabricErrno e : VALUES) {
            if (!e.alias && e.code == c) {
                return e;
            }
        }
        return null;
    }

    /**
     * @param rc a libfabric return code (negative) or completion error (positive)
     * @return {@code FI_E...} name, or {@code "FI(rc)"} for an unknown value
     */
    static String nameOf(long rc) {
        FabricErrno e = of(rc);
        return e != null ? "FI_" + e.name() : "FI(" + rc + ")";
    }

    /**
     * Maps a completion error ({@code fi_cq_err_entry.err}, positive) onto the verbs status
     * names of the transport-neutral model.
     *
     * @param err the positive libfabric error
     * @return the closest {@link CompletionStatus}
     */
    static CompletionStatus statusOf(int err) {
        if (err == EPIPE) {
            return CompletionStatus.WR_FLUSH_ERR;
        }
        FabricErrno e = of(err);
        if (e == null) {
            return CompletionStatus.GENERAL_ERR;
        }
        return switch (e) {
            // The operation was cut off because the connection ended (an orderly close or a
            // dropped socket alike, fi_cq(3)): verbs calls that a flushed work request.
            case ECANCELED, ENOTCONN, ECONNRESET, ECONNABORTED, ESHUTDOWN -> CompletionStatus.WR_FLUSH_ERR;
            // The peer could not be reached in time: verbs' transport retries exhausted.
            case ETIMEDOUT, EHOSTUNREACH, ENETUNREACH -> CompletionStatus.RETRY_EXC_ERR;
            case EACCES, EPERM, ENOKEY, EKEYREJECTED, EFAULT -> CompletionStatus.REM_ACCESS_ERR;
            case ETRUNC, EMSGSIZE, ETOOSMALL -> CompletionStatus.LOC_LEN_ERR;
            case ENORX -> CompletionStatus.RNR_RETRY_EXC_ERR;
            case EREMOTEIO -> CompletionStatus.REM_OP_ERR;
            default -> CompletionStatus.GENERAL_ERR;
        };
    }
}
