package io.cqflux.transport.fabric.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.testing.CProbe;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Checks every struct size, field offset and field size, and every constant of the libfabric
 * bindings against the installed headers, by compiling a C probe generated from the binding
 * classes themselves (so a new field or constant is checked without editing this test).
 */
class FabricBindingLayoutTest {

    private static final String HEADERS = """
            #include <stdio.h>
            #include <stddef.h>
            #include <sys/uio.h>
            #include <rdma/fabric.h>
            #include <rdma/fi_domain.h>
            #include <rdma/fi_endpoint.h>
            #include <rdma/fi_cm.h>
            #include <rdma/fi_eq.h>
            #include <rdma/fi_rma.h>
            #include <rdma/fi_errno.h>
            """;

    /** The structs and constants listed for generation (scripts/jextract/libfabric-symbols.txt). */
    private static Map<String, List<String>> symbols() throws IOException {
        Path p = Path.of("../../scripts/jextract/libfabric-symbols.txt");
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (String line : Files.readAllLines(p)) {
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] kv = line.split("\\s+");
            m.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(kv[1]);
        }
        return m;
    }

    @Test
    void everyStructSizeFieldOffsetAndFieldSize_matchesTheHeaders() throws Exception {
        StringBuilder c = new StringBuilder(HEADERS).append("int main(void) {\n");
        Map<String, Long> expected = new LinkedHashMap<>();
        List<String> structs = symbols().get("struct");
        assertTrue(structs.size() >= 30, structs::toString);
        for (String s : structs) {
            Class<?> k = Class.forName("io.cqflux.transport.fabric.ffm." + s);
            expected.put(s + ".sizeof", (Long) k.getMethod("sizeof").invoke(null));
            c.append("printf(\"%s %zu\\n\", \"").append(s).append(".sizeof\", sizeof(struct ").append(s).append("));\n");
            for (Method m : k.getMethods()) {
                String n = m.getName();
                if (!Modifier.isStatic(m.getModifiers()) || m.getParameterCount() != 0 || !n.endsWith("$offset")) {
                    continue;
                }
                String f = n.substring(0, n.length() - "$offset".length());
                expected.put(s + "." + f, (Long) m.invoke(null));
                c.append("printf(\"%s %zu\\n\", \"").append(s).append('.').append(f).append("\", offsetof(struct ")
                        .append(s).append(", ").append(f).append("));\n");
                MemoryLayout l = (MemoryLayout) k.getMethod(f + "$layout").invoke(null);
                if (l instanceof java.lang.foreign.SequenceLayout q && q.elementCount() == 0) {
                    continue; // a flexible array member (fi_eq_cm_entry.data): C has no sizeof for it
                }
                expected.put(s + "." + f + ".size", l.byteSize());
                c.append("printf(\"%s %zu\\n\", \"").append(s).append('.').append(f).append(".size\", sizeof(((struct ")
                        .append(s).append(" *) 0)->").append(f).append("));\n");
            }
        }
        c.append("return 0; }\n");
        Map<String, Long> actual = CProbe.run("fabric_layout", c.toString());
        assertEquals(expected.size(), actual.size(), "probe printed every value");
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            assertEquals(actual.get(e.getKey()), e.getValue(), e.getKey());
        }
        assertTrue(expected.size() > 300, "checked " + expected.size() + " values");
    }

    @Test
    void everyConstant_matchesTheHeaders() throws Exception {
        StringBuilder c = new StringBuilder(HEADERS).append("int main(void) {\n");
        Map<String, Long> expected = new LinkedHashMap<>();
        for (Method m : fabric_h.class.getMethods()) {
            String n = m.getName();
            if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0 && n.startsWith("FI_")
                    && (m.getReturnType() == int.class || m.getReturnType() == long.class)) {
                expected.put(n, ((Number) m.invoke(null)).longValue());
                c.append("printf(\"%s %lld\\n\", \"").append(n).append("\", (long long) (").append(n).append("));\n");
            }
        }
        // the function-like macro, kept by hand
        expected.put("FI_VERSION_1_11", (long) fabric_h.FI_VERSION(1, 11));
        c.append("printf(\"FI_VERSION_1_11 %lld\\n\", (long long) FI_VERSION(1, 11));\n");
        c.append("return 0; }\n");
        assertTrue(symbols().get("constant").stream().allMatch(expected::containsKey),
                "every listed constant has a binding");
        Map<String, Long> actual = CProbe.run("fabric_constants", c.toString());
        for (Map.Entry<String, Long> e : expected.entrySet()) {
            assertEquals(actual.get(e.getKey()), e.getValue(), e.getKey());
        }
    }

    @Test
    void exportedFunctions_resolveInTheLibrary() throws Exception {
        for (String f : symbols().get("function")) {
            Method m = fabric_h.class.getMethod(f + "$address");
            java.lang.foreign.MemorySegment a = (java.lang.foreign.MemorySegment) m.invoke(null);
            assertTrue(a.address() != 0, f);
        }
        assertTrue(Integer.compareUnsigned(fabric_h.fi_version(), fabric_h.FI_VERSION(1, 11)) >= 0);
    }
}
