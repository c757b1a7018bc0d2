package io.cqflux.core.internal;

import io.cqflux.core.NativeCallException;

/**
 * The errno name table and the exception builder that every native chokepoint uses. Each native
 * library has one chokepoint of its own in its module (librpma: {@code RpmaNative.check/result};
 * libfabric: {@code FabricLibrary.check/result}; libc: {@code Libc}) that turns "again", "no
 * completion" and "no event" into ordinary results and everything else into the
 * {@link NativeCallException} built here. Exported only to the project's own modules.
 */
public final class NativeErrors {

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
     * @param errno a positive libc (or libfabric) errno
     * @return its name, e.g. {@code EBADF}, or {@code errno(n)}
     */
    public static String errnoName(int errno) {
        return errno > 0 && errno < ERRNO_NAMES.length && ERRNO_NAMES[errno] != null
                ? ERRNO_NAMES[errno] : "errno(" + errno + ")";
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
     * Builds the exception for a failed call of any native library.
     *
     * @param call the function
     * @param code its return code
     * @param codeName the code's symbolic name ({@code RPMA_E_INVAL}, {@code FI_ENOMEM})
     * @param text the library's own error text ({@code rpma_err_2str}, {@code fi_strerror})
     * @param detail extra context, or empty
     * @return the exception to throw
     */
    public static NativeCallException failure(String call, long code, String codeName, String text, String detail) {
        return new NativeCallException(call, code, codeName, text, detail);
    }
}
