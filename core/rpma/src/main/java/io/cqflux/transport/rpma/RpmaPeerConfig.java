package io.cqflux.transport.rpma;

import io.cqflux.transport.rpma.ffm.librpma_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The peer configuration exchange of librpma ({@code rpma_peer_cfg_new(3)},
 * {@code rpma_peer_cfg_get_descriptor(3)}, {@code rpma_peer_cfg_from_descriptor(3)},
 * {@code rpma_conn_apply_remote_peer_cfg(3)}): a side that can write directly to persistent
 * memory tells its peers so, and the peer applies the descriptor to its connection; only then
 * does {@code rpma_flush} accept {@code RPMA_FLUSH_TYPE_PERSISTENT}. It is the rpma transport's
 * connection handshake ({@link RpmaTransport#handshake()}, {@link RpmaConnection#applyPeerHandshake}).
 */
final class RpmaPeerConfig {
    private static final System.Logger LOG = System.getLogger(RpmaPeerConfig.class.getName());

    private RpmaPeerConfig() {
    }

    /**
     * @param directWriteToPmem whether this side supports direct write to persistent memory
     * @return the descriptor bytes to send to the peer
     */
    static byte[] descriptor(boolean directWriteToPmem) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            RpmaNative.check("rpma_peer_cfg_new", librpma_h.rpma_peer_cfg_new(p), "");
            MemorySegment cfg = p.get(ValueLayout.ADDRESS, 0);
            try {
                RpmaNative.check("rpma_peer_cfg_set_direct_write_to_pmem",
                        librpma_h.rpma_peer_cfg_set_direct_write_to_pmem(cfg, directWriteToPmem), "");
                MemorySegment size = a.allocate(ValueLayout.JAVA_LONG);
                RpmaNative.check("rpma_peer_cfg_get_descriptor_size",
                        librpma_h.rpma_peer_cfg_get_descriptor_size(cfg, size), "");
                long n = size.get(ValueLayout.JAVA_LONG, 0);
                if (n <= 0 || n > 255) {
                    throw new IllegalStateException("rpma_peer_cfg_get_descriptor_size returned " + n);
                }
                MemorySegment desc = a.allocate(n);
                RpmaNative.check("rpma_peer_cfg_get_descriptor", librpma_h.rpma_peer_cfg_get_descriptor(cfg, desc), "");
                return desc.toArray(ValueLayout.JAVA_BYTE);
            } finally {
                p.set(ValueLayout.ADDRESS, 0, cfg);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_peer_cfg_delete", librpma_h.rpma_peer_cfg_delete(p), "");
            }
        }
    }

    /** {@return the descriptor size this library produces} */
    static int descriptorSize() {
        return descriptor(false).length;
    }

    /**
     * Applies a peer's descriptor to a connection.
     *
     * @param conn the {@code struct rpma_conn *}
     * @param descriptor the peer's bytes; length checked against this library's descriptor size
     * @return whether the peer supports direct write to persistent memory
     */
    static boolean apply(MemorySegment conn, byte[] descriptor) {
        int expected = descriptorSize();
        if (descriptor == null || descriptor.length != expected) {
            throw new IllegalArgumentException("peer configuration descriptor of "
                    + (descriptor == null ? "null" : descriptor.length + " bytes") + ", expected exactly " + expected);
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment desc = a.allocateFrom(ValueLayout.JAVA_BYTE, descriptor);
            MemorySegment p = a.allocate(ValueLayout.ADDRESS);
            RpmaNative.check("rpma_peer_cfg_from_descriptor",
                    librpma_h.rpma_peer_cfg_from_descriptor(desc, desc.byteSize(), p), "");
            MemorySegment cfg = p.get(ValueLayout.ADDRESS, 0);
            try {
                RpmaNative.check("rpma_conn_apply_remote_peer_cfg", librpma_h.rpma_conn_apply_remote_peer_cfg(conn, cfg), "");
                MemorySegment b = a.allocate(ValueLayout.JAVA_BOOLEAN);
                RpmaNative.check("rpma_peer_cfg_get_direct_write_to_pmem",
                        librpma_h.rpma_peer_cfg_get_direct_write_to_pmem(cfg, b), "");
                return b.get(ValueLayout.JAVA_BOOLEAN, 0);
            } finally {
                p.set(ValueLayout.ADDRESS, 0, cfg);
                RpmaNative.logged(LOG, System.Logger.Level.WARNING, "rpma_peer_cfg_delete", librpma_h.rpma_peer_cfg_delete(p), "");
            }
        }
    }
}
