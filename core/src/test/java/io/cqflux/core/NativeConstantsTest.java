package io.cqflux.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.cqflux.core.testing.CProbe;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The model's numeric values checked against the installed C headers (a C program compiled now). */
class NativeConstantsTest {

    @Test
    void completionStatus_codesMatchIbvWcStatus() {
        StringBuilder src = new StringBuilder("#include <stdio.h>\n#include <infiniband/verbs.h>\nint main(void){\n");
        for (CompletionStatus s : CompletionStatus.values()) {
            src.append("printf(\"").append(s.name()).append(" %d\\n\", (int)IBV_WC_").append(s.name()).append(");\n");
        }
        src.append("printf(\"COUNT %d\\n\", (int)(IBV_WC_TM_RNDV_INCOMPLETE + 1));\nreturn 0;}\n");
        Map<String, Long> v = CProbe.run("ibv_wc_status", src.toString());
        for (CompletionStatus s : CompletionStatus.values()) {
            assertEquals(v.get(s.name()).intValue(), s.code(), s.name());
            assertEquals(s, CompletionStatus.of(s.code()));
        }
        assertEquals(24, CompletionStatus.values().length);
        assertEquals(v.get("COUNT").intValue(), CompletionStatus.values().length);
        assertEquals(CompletionStatus.GENERAL_ERR, CompletionStatus.of(999));
    }

    @Test
    void regionAccessBitsAndAtomicAlignment_matchLibrpmaH() {
        String src = """
                #include <stdio.h>
                #include <librpma.h>
                int main(void){
                printf("READ_SRC %d\\n", RPMA_MR_USAGE_READ_SRC);
                printf("READ_DST %d\\n", RPMA_MR_USAGE_READ_DST);
                printf("WRITE_SRC %d\\n", RPMA_MR_USAGE_WRITE_SRC);
                printf("WRITE_DST %d\\n", RPMA_MR_USAGE_WRITE_DST);
                printf("FLUSH_TYPE_VISIBILITY %d\\n", RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
                printf("FLUSH_TYPE_PERSISTENT %d\\n", RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
                printf("SEND %d\\n", RPMA_MR_USAGE_SEND);
                printf("RECV %d\\n", RPMA_MR_USAGE_RECV);
                printf("ALIGN %d\\n", RPMA_ATOMIC_WRITE_ALIGNMENT);
                return 0;}
                """;
        Map<String, Long> v = CProbe.run("rpma_codes", src);
        for (RegionAccess a : RegionAccess.values()) {
            assertNotNull(v.get(a.name()), a.name());
            assertEquals(v.get(a.name()).intValue(), a.bit(), a.name());
        }
        assertEquals(v.get("ALIGN").intValue(), io.cqflux.core.internal.Checks.ATOMIC_WRITE_ALIGNMENT);
    }
}
