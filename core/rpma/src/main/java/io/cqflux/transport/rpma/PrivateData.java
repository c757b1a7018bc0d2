package io.cqflux.transport.rpma;

import java.util.Arrays;

/**
 * Framing of connection private data: one length byte, then the bytes.
 *
 * <p>Why: the receiver of RDMA CM private data gets the transport's whole buffer, not what the
 * peer sent ({@code rdma_get_cm_event(3)}: "the size of the private data buffer may be larger
 * than the amount of private data sent by the remote side. Any additional space in the buffer
 * will be zeroed out"; on IB/RoCE a connect carries 56 bytes and an accept 196). librpma passes
 * that buffer through unchanged, so without a length the peer would see trailing zeros. The
 * frame also keeps librpma from refusing empty data ({@code rpma_conn_req_connect(3)}:
 * {@code RPMA_E_INVAL} when {@code pdata->len == 0}).
 */
final class PrivateData {

    /** RDMA CM private data of a connect on IB/RoCE (92 bytes minus the 36-byte CMA header). */
    static final int CONNECT_CAPACITY = 56;
    /** RDMA CM private data of an accept on IB/RoCE (the CM REP's 196 bytes). */
    static final int ACCEPT_CAPACITY = 196;

    private PrivateData() {
    }

    static byte[] frame(byte[] data) {
        byte[] d = data == null ? new byte[0] : data;
        byte[] f = new byte[d.length + 1];
        f[0] = (byte) d.length;
        System.arraycopy(d, 0, f, 1, d.length);
        return f;
    }

    /**
     * @param raw the bytes as received (possibly zero-padded)
     * @return the framed payload; a buffer that is not a valid frame is returned unchanged (a
     *     peer that does not frame)
     */
    static byte[] unframe(byte[] raw) {
        if (raw.length == 0) {
            return raw;
        }
        int n = raw[0] & 0xff;
        if (n > raw.length - 1) {
            return raw.clone();
        }
        return Arrays.copyOfRange(raw, 1, 1 + n);
    }
}
