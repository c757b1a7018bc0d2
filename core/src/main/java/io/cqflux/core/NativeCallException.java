package io.cqflux.core;

/**
 * A native call failed: it carries the call, the numeric code, the code's symbolic name
 * ({@code RPMA_E_PROVIDER}, {@code FI_ECONNREFUSED}, {@code EBADF}) and the library's own text
 * ({@code rpma_err_2str}, {@code fi_strerror}, {@code strerror}).
 */
public final class NativeCallException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final long code;
    private final String codeName;
    private final String nativeText;

    /**
     * @param call the native function, e.g. {@code rpma_conn_req_new}
     * @param code the return code or errno as the library reported it
     * @param codeName its symbolic name
     * @param nativeText the library's text for it
     * @param detail extra context (addresses, sizes), or an empty string
     */
    public NativeCallException(String call, long code, String codeName, String nativeText, String detail) {
        super(call + " failed: " + codeName + " (" + code + "): " + nativeText
                + (detail == null || detail.isEmpty() ? "" : " [" + detail + "]"), null);
        this.call = call;
        this.code = code;
        this.codeName = codeName;
        this.nativeText = nativeText;
    }

    /** {@return the native function that failed} */
    public String call() {
        return call;
    }

    /** {@return the return code or errno} */
    public long code() {
        return code;
    }

    /** {@return the symbolic name of the code} */
    public String codeName() {
        return codeName;
    }

    /** {@return the library's own text for the code} */
    public String nativeText() {
        return nativeText;
    }
}
