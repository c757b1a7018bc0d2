package io.cqflux.core.spi;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.FabricErrno;
import io.cqflux.core.NativeCallException;
import java.util.Map;

/**
 * The one place where native return codes become names and exceptions: librpma's
 * {@code RPMA_E_*}, libfabric's negative {@code FI_*} errno, and libc errno (captured with
 * {@code Linker.Option.captureCallState("errno")}). "No completion", "no event" and "again" are
 * ordinary outcomes that callers test with {@link #isRpmaNoCompletion}, {@link #isRpmaNoEvent} and
 * {@link #isFabricAgain} — never exceptions.
 */
public final class NativeErrors {

    /** {@code RPMA_E_UNKNOWN}. */
    public static final int RPMA_E_UNKNOWN = -100000;
    /** {@code RPMA_E_NOSUPP}. */
    public static final int RPMA_E_NOSUPP = -100001;
    /** {@code RPMA_E_PROVIDER}: the provider (ibverbs/rdmacm) failed; errno has the reason. */
    public static final int RPMA_E_PROVIDER = -100002;
    /** {@code RPMA_E_NOMEM}. */
    public static final int RPMA_E_NOMEM = -100003;
    /** {@code RPMA_E_INVAL}. */
    public static final int RPMA_E_INVAL = -100004;
    /** {@code RPMA_E_NO_COMPLETION}: no completion available (normal). */
    public static final int RPMA_E_NO_COMPLETION = -100005;
    /** {@code RPMA_E_NO_EVENT}: no event available (normal). */
    public static final int RPMA_E_NO_EVENT = -100006;
    /** {@code RPMA_E_AGAIN}: temporarily unavailable, retry. */
    public static final int RPMA_E_AGAIN = -100007;
    /** {@code RPMA_E_SHARED_CHANNEL}: {@code rpma_cq_wait} on a CQ that uses the shared channel. */
    public static final int RPMA_E_SHARED_CHANNEL = -100008;
    /** {@code RPMA_E_NOT_SHARED_CHNL}: {@code rpma_conn_wait} without a shared channel. */
    public static final int RPMA_E_NOT_SHARED_CHNL = -100009;

    private static final Map<Integer, String> RPMA_NAMES = Map.of(
            RPMA_E_UNKNOWN, "RPMA_E_UNKNOWN", RPMA_E_NOSUPP, "RPMA_E_NOSUPP",
            RPMA_E_PROVIDER, "RPMA_E_PROVIDER", RPMA_E_NOMEM, "RPMA_E_NOMEM",
            RPMA_E_INVAL, "RPMA_E_INVAL", RPMA_E_NO_COMPLETION, "RPMA_E_NO_COMPLETION",
            RPMA_E_NO_EVENT, "RPMA_E_NO_EVENT", RPMA_E_AGAIN, "RPMA_E_AGAIN",
            RPMA_E_SHARED_CHANNEL, "RPMA_E_SHARED_CHANNEL", RPMA_E_NOT_SHARED_CHNL, "RPMA_E_NOT_SHARED_CHNL");

    private static final String[] ERRNO_NAMES = new String[134];

    static {
        String[] n = {
            "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG", "ENOEXEC", "EBADF", "ECHILD",
            "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK", "EBUSY", "EEXIST", "EXDEV", "ENODEV",
            "ENOTDIR", "EISDIR", "EINVAL", "ENFILE", "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC",
            "ESPIPE", "EROFS", "EMLINK", "EPIPE", "EDOM", "ERANGE", "EDEADLK", "ENAMETOOLONG", "ENOLCK",
            "ENOSYS", "ENOTEMPTY", "ELOOP"};
        for (int i = 0; i < n.length; i++) {
            ERRNO_NAMES[i + 1] = n[i];
        }
        ERRNO_NAMES[42] = "ENOMSG";
        ERRNO_NAMES[61] = "ENODATA";
        ERRNO_NAMES[62] = "ETIME";
        ERRNO_NAMES[75] = "EOVERFLOW";
        ERRNO_NAMES[90] = "EMSGSIZE";
        ERRNO_NAMES[92] = "ENOPROTOOPT";
        ERRNO_NAMES[95] = "EOPNOTSUPP";
        ERRNO_NAMES[97] = "EAFNOSUPPORT";
        ERRNO_NAMES[98] = "EADDRINUSE";
        ERRNO_NAMES[99] = "EADDRNOTAVAIL";
        ERRNO_NAMES[100] = "ENETDOWN";
        ERRNO_NAMES[101] = "ENETUNREACH";
        ERRNO_NAMES[103] = "ECONNABORTED";
        ERRNO_NAMES[104] = "ECONNRESET";
        ERRNO_NAMES[105] = "ENOBUFS";
        ERRNO_NAMES[106] = "EISCONN";
        ERRNO_NAMES[107] = "ENOTCONN";
        ERRNO_NAMES[108] = "ESHUTDOWN";
        ERRNO_NAMES[110] = "ETIMEDOUT";
        ERRNO_NAMES[111] = "ECONNREFUSED";
        ERRNO_NAMES[112] = "EHOSTDOWN";
        ERRNO_NAMES[113] = "EHOSTUNREACH";
        ERRNO_NAMES[114] = "EALREADY";
        ERRNO_NAMES[115] = "EINPROGRESS";
        ERRNO_NAMES[121] = "EREMOTEIO";
        ERRNO_NAMES[125] = "ECANCELED";
    }

    private NativeErrors() {
    }

    /**
     * @param rc a librpma return code
     * @return its {@code RPMA_E_*} name, or {@code "RPMA(rc)"} for an unknown value
     */
    public static String rpmaName(int rc) {
        String n = RPMA_NAMES.get(rc);
        return n != null ? n : "RPMA(" + rc + ")";
    }

    /**
     * @param rc a libfabric return code (negative) or completion error (positive)
     * @return {@code FI_E...} name, or {@code "FI(rc)"} for an unknown value
     */
    public static String fabricName(long rc) {
        FabricErrno e = FabricErrno.of(rc);
        return e != null ? "FI_" + e.name() : "FI(" + rc + ")";
    }

    /**
     * @param errno a positive libc errno
     * @return its name, e.g. {@code EBADF}, or {@code errno(n)}
     */
    public static String errnoName(int errno) {
        return errno > 0 && errno < ERRNO_NAMES.length && ERRNO_NAMES[errno] != null
                ? ERRNO_NAMES[errno] : "errno(" + errno + ")";
    }

    /** @param rc a librpma return code @return whether it is {@code RPMA_E_NO_COMPLETION} */
    public static boolean isRpmaNoCompletion(int rc) {
        return rc == RPMA_E_NO_COMPLETION;
    }

    /** @param rc a librpma return code @return whether it is {@code RPMA_E_NO_EVENT} */
    public static boolean isRpmaNoEvent(int rc) {
        return rc == RPMA_E_NO_EVENT;
    }

    /** @param rc a libfabric return code @return whether it is {@code -FI_EAGAIN} */
    public static boolean isFabricAgain(long rc) {
        return rc == -FabricErrno.EAGAIN.code();
    }

    /**
     * Builds the exception for a failed librpma call.
     *
     * @param call the function
     * @param rc its return code
     * @param text {@code rpma_err_2str(rc)}
     * @param errno errno captured after the call (meaningful for {@code RPMA_E_PROVIDER}), or 0
     * @param detail extra context, or empty
     * @return the exception to throw
     */
    public static NativeCallException rpma(String call, int rc, String text, int errno, String detail) {
        String t = rc == RPMA_E_PROVIDER && errno > 0 ? text + " (errno " + errnoName(errno) + ")" : text;
        return new NativeCallException(call, rc, rpmaName(rc), t, detail);
    }

    /**
     * Builds the exception for a failed libfabric call.
     *
     * @param call the function
     * @param rc its negative return code
     * @param text {@code fi_strerror(-rc)}
     * @param detail extra context, or empty
     * @return the exception to throw
     */
    public static NativeCallException fabric(String call, long rc, String text, String detail) {
        return new NativeCallException(call, rc, fabricName(rc), text, detail);
    }

    /**
     * Builds the exception for a failed libc call.
     *
     * @param call the function
     * @param errno the captured errno
     * @param detail extra context, or empty
     * @return the exception to throw
     */
    public static NativeCallException errno(String call, int errno, String detail) {
        return new NativeCallException(call, errno, errnoName(errno), "errno " + errno, detail);
    }

    /**
     * Maps a libfabric completion error ({@code fi_cq_err_entry.err}, positive) onto the
     * verbs status names.
     *
     * @param err the positive libfabric error
     * @return the closest {@link CompletionStatus}
     */
    public static CompletionStatus statusOfFabricError(int err) {
        FabricErrno e = FabricErrno.of(err);
        if (e == null) {
            return CompletionStatus.GENERAL_ERR;
        }
        return switch (e) {
            case ECANCELED -> CompletionStatus.WR_FLUSH_ERR;
            case ENOTCONN, ECONNRESET, ECONNABORTED, ESHUTDOWN, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH ->
                    CompletionStatus.RETRY_EXC_ERR;
            case EACCES, EPERM, ENOKEY, EKEYREJECTED, EFAULT -> CompletionStatus.REM_ACCESS_ERR;
            case ETRUNC, EMSGSIZE, ETOOSMALL -> CompletionStatus.LOC_LEN_ERR;
            case ENORX -> CompletionStatus.RNR_RETRY_EXC_ERR;
            case EREMOTEIO -> CompletionStatus.REM_OP_ERR;
            default -> CompletionStatus.GENERAL_ERR;
        };
    }
}
