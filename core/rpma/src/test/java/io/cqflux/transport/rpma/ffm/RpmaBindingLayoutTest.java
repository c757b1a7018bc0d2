package io.cqflux.transport.rpma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.testing.CProbe;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks every struct size/offset and every constant of the librpma bindings against the
 * installed {@code librpma.h} and {@code <infiniband/verbs.h>}, compiled with gcc at test time
 * ({@code rdma_cm_id}'s fields: core's {@code RdmaCmIdsTest}).
 * Runs on the host (headers only; no RDMA device needed).
 */
class RpmaBindingLayoutTest {

    private static Map<String, Long> probe;

    /** All public static no-arg int methods of librpma_h whose names are C constants. */
    private static Map<String, Integer> bindingConstants() throws Exception {
        Map<String, Integer> m = new TreeMap<>();
        for (Method meth : librpma_h.class.getDeclaredMethods()) {
            if (Modifier.isStatic(meth.getModifiers()) && Modifier.isPublic(meth.getModifiers())
                    && meth.getParameterCount() == 0 && meth.getReturnType() == int.class
                    && (meth.getName().startsWith("RPMA_") || meth.getName().startsWith("IBV_"))) {
                m.put(meth.getName(), (Integer) meth.invoke(null));
            }
        }
        return m;
    }

    @BeforeAll
    static void compileProbe() throws Exception {
        StringBuilder c = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <librpma.h>
                #include <infiniband/verbs.h>
                #define P(n, v) printf("%s %lld\\n", n, (long long)(v))
                #define F(s, f) P(#s "." #f "@", offsetof(struct s, f)); P(#s "." #f "#", sizeof(((struct s *)0)->f))
                int main(void) {
                  P("ibv_wc#", sizeof(struct ibv_wc)); P("ibv_wc%", _Alignof(struct ibv_wc));
                  F(ibv_wc, wr_id); F(ibv_wc, status); F(ibv_wc, opcode); F(ibv_wc, vendor_err); F(ibv_wc, byte_len);
                  F(ibv_wc, imm_data); F(ibv_wc, invalidated_rkey); F(ibv_wc, qp_num); F(ibv_wc, src_qp);
                  F(ibv_wc, wc_flags); F(ibv_wc, pkey_index); F(ibv_wc, slid); F(ibv_wc, sl); F(ibv_wc, dlid_path_bits);
                  P("rpma_conn_private_data#", sizeof(struct rpma_conn_private_data));
                  F(rpma_conn_private_data, ptr); F(rpma_conn_private_data, len);
                  P("bool#", sizeof(_Bool)); P("size_t#", sizeof(size_t)); P("enum#", sizeof(enum rpma_conn_event));
                """);
        for (String name : bindingConstants().keySet()) {
            c.append("  P(\"").append(name).append("\", ").append(name).append(");\n");
        }
        c.append("  return 0;\n}\n");
        probe = CProbe.run("rpma_layout", c.toString());
    }

    private static long c(String key) {
        Long v = probe.get(key);
        assertNotNull(v, "probe printed no value for " + key);
        return v;
    }

    @Test
    void ibvWc_sizeAndEveryOffset_matchVerbsHeader() {
        assertEquals(c("ibv_wc#"), ibv_wc.sizeof());
        assertEquals(48, ibv_wc.sizeof(), "native-facts: struct ibv_wc is 48 bytes");
        assertEquals(c("ibv_wc%"), ibv_wc.layout().byteAlignment());
        String[] fields = {"wr_id", "status", "opcode", "vendor_err", "byte_len", "imm_data", "invalidated_rkey",
            "qp_num", "src_qp", "wc_flags", "pkey_index", "slid", "sl", "dlid_path_bits"};
        for (String f : fields) {
            assertEquals(c("ibv_wc." + f + "@"), offset(ibv_wc.class, f), "offset of ibv_wc." + f);
            assertEquals(c("ibv_wc." + f + "#"), size(ibv_wc.class, f), "size of ibv_wc." + f);
        }
    }

    @Test
    void privateData_sizeAndOffsets_matchLibrpmaHeader() {
        assertEquals(c("rpma_conn_private_data#"), rpma_conn_private_data.sizeof());
        for (String f : new String[] {"ptr", "len"}) {
            assertEquals(c("rpma_conn_private_data." + f + "@"), offset(rpma_conn_private_data.class, f), f);
            assertEquals(c("rpma_conn_private_data." + f + "#"), size(rpma_conn_private_data.class, f), f);
        }
    }

    @Test
    void scalarLayouts_matchC() {
        assertEquals(c("bool#"), librpma_h.C_BOOL.byteSize());
        assertEquals(c("size_t#"), librpma_h.C_LONG.byteSize());
        assertEquals(c("enum#"), librpma_h.C_INT.byteSize());
    }

    @Test
    void everyConstant_matchesHeaders() throws Exception {
        Map<String, Integer> constants = bindingConstants();
        assertTrue(constants.size() >= 80, "expected the full constant list, got " + constants.size());
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Integer> e : constants.entrySet()) {
            if (c(e.getKey()) != e.getValue()) {
                wrong.add(e.getKey() + ": binding " + e.getValue() + ", header " + c(e.getKey()));
            }
        }
        assertEquals(List.of(), wrong);
    }

    private static long offset(Class<?> struct, String field) {
        try {
            return (long) struct.getMethod(field + "$offset").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static long size(Class<?> struct, String field) {
        try {
            Object layout = struct.getMethod(field + "$layout").invoke(null);
            return ((java.lang.foreign.MemoryLayout) layout).byteSize();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
