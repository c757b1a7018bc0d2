#!/usr/bin/env python3
"""Writes io.cqflux.transport.fabric.ffm in the shape jextract (JDK 22+) generates, without jextract.

jextract cannot be installed on this project's build machines (see libfabric.sh, which is the
real regeneration path where jextract exists). This script reads the same symbol list, takes the
struct definitions from the preprocessed libfabric headers, asks gcc for every sizeof/offsetof
and constant value, and emits the header class (fabric_h + fabric_h$shared) and one class per
struct, with jextract's naming: layout()/sizeof()/field$layout()/field$offset()/getters/setters/
allocate/allocateArray/asSlice/reinterpret, and a nested class per function-pointer field with
a Function interface, descriptor(), allocate(fi, arena) and invoke(funcPtr, ...).

Usage: scripts/jextract/libfabric-handgen.py   (from the repository root)
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = "io.cqflux.transport.fabric.ffm"
OUT = os.path.join(ROOT, "core/fabric/src/main/java/io/cqflux/transport/fabric/ffm")
HDR = "fabric_h"
INCLUDES = ["rdma/fabric.h", "rdma/fi_domain.h", "rdma/fi_endpoint.h", "rdma/fi_cm.h",
            "rdma/fi_eq.h", "rdma/fi_rma.h", "rdma/fi_errno.h", "rdma/rdma_cma.h", "sys/uio.h", "stddef.h",
            "stdio.h"]
# C prototypes of the exported functions (fi_allocinfo is static inline: fi_dupinfo(NULL)).
FUNCS = {
    "fi_getinfo": ("int", ["uint32_t version", "const char *node", "const char *service",
                           "uint64_t flags", "const struct fi_info *hints", "struct fi_info **info"]),
    "fi_freeinfo": ("void", ["struct fi_info *info"]),
    "fi_dupinfo": ("struct fi_info *", ["const struct fi_info *info"]),
    "fi_fabric": ("int", ["struct fi_fabric_attr *attr", "struct fid_fabric **fabric", "void *context"]),
    "fi_version": ("uint32_t", []),
    "fi_strerror": ("const char *", ["int errnum"]),
    "fi_tostr": ("char *", ["const void *data", "enum fi_type datatype"]),
    # librdmacm's, found through libfabric's own dependencies where its verbs provider is built in.
    "rdma_destroy_id": ("int", ["struct rdma_cm_id *id"]),
}

LONG_T = {"uint64_t", "int64_t", "size_t", "ssize_t", "fi_addr_t", "long", "unsigned long"}
INT_T = {"uint32_t", "int32_t", "int", "unsigned", "unsigned int"}


def sh(cmd, inp=None):
    return subprocess.run(cmd, input=inp, capture_output=True, text=True, check=True).stdout


def read_symbols():
    syms = {"function": [], "struct": [], "constant": []}
    with open(os.path.join(ROOT, "scripts/jextract/libfabric-symbols.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                k, n = line.split()
                syms[k].append(n)
    return syms


def preprocessed():
    src = "".join(f"#include <{h}>\n" for h in INCLUDES)
    return sh(["gcc", "-E", "-P", "-x", "c", "-"], src)


def struct_body(text, name):
    m = re.search(r"\bstruct\s+" + re.escape(name) + r"\s*\{", text)
    if not m:
        sys.exit("struct " + name + " not found")
    i, depth = m.end(), 1
    j = i
    while depth:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
        j += 1
    return text[i:j - 1]


def ctype_kind(t):
    """'ptr', 'long', 'int', 'short', 'char', or ('struct', name)."""
    t = " ".join(t.replace("const ", "").split())
    if "*" in t or t in ("fid_t",):
        return "ptr"
    if t in LONG_T:
        return "long"
    if t in INT_T or t.startswith("enum "):
        return "int"
    if t in ("uint16_t", "int16_t", "short"):
        return "short"
    if t in ("uint8_t", "int8_t", "char"):
        return "char"
    if t.startswith("struct "):
        return ("struct", t.split()[1])
    sys.exit("unknown C type " + t)


def split_params(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur)
    return [p.strip() for p in out if p.strip() and p.strip() != "void"]


JAVA_KEYWORDS = {"abstract", "boolean", "byte", "char", "class", "default", "double", "final", "float",
                 "int", "long", "native", "new", "package", "private", "protected", "public", "return",
                 "short", "static", "super", "switch", "this", "throw", "throws", "void", "volatile"}


def param_name(p, i):
    """The C parameter name as jextract uses it; x<i> when the prototype names none."""
    toks = p.replace("*", " ").split()
    if len(toks) >= 2 and toks[-1] not in ("int", "char", "void", "size_t", "ssize_t") and \
            toks[-2] not in ("struct", "enum"):
        n = toks[-1]
        return n + "$" if n in JAVA_KEYWORDS else n
    return "x%d" % i


def param_type(p):
    p = " ".join(p.split())
    if "*" in p:
        return "ptr"
    parts = p.split()
    t = " ".join(parts[:-1]) if len(parts) > 1 else parts[0]
    if t in ("struct", "enum"):
        t = p
    return ctype_kind(t)


def parse_fields(body):
    fields = []
    for decl in body.split(";"):
        d = " ".join(decl.split())
        if not d:
            continue
        fm = re.match(r"(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", d)
        if fm:
            ret = fm.group(1).strip()
            rk = None if ret == "void" else ("ptr" if "*" in ret else ctype_kind(ret))
            plist = split_params(fm.group(3))
            fields.append({"name": fm.group(2), "kind": "fptr", "ret": rk, "cret": ret,
                           "params": [param_type(p) for p in plist],
                           "pnames": [param_name(p, i) for i, p in enumerate(plist)],
                           "cdecl": d})
            continue
        am = re.match(r"(.+?)\s*(\**)\s*(\w+)\s*\[\s*\]$", d)
        if am:
            fields.append({"name": am.group(3), "kind": "flex", "cdecl": d})
            continue
        vm = re.match(r"(.+?)\s*(\**)\s*(\w+)$", d)
        t = vm.group(1) + (" *" if vm.group(2) else "")
        fields.append({"name": vm.group(3), "kind": ctype_kind(t), "cdecl": d})
    return fields


def probe(structs, consts):
    lines = ["#include <%s>" % h for h in INCLUDES]
    lines.append("int main(void) {")
    for s, fields in structs.items():
        lines.append(f'printf("{s}.sizeof %zu\\n", sizeof(struct {s}));')
        lines.append(f'printf("{s}.alignof %zu\\n", _Alignof(struct {s}));')
        for f in fields:
            lines.append(f'printf("{s}.{f["name"]} %zu\\n", offsetof(struct {s}, {f["name"]}));')
    for c in consts:
        lines.append(f'printf("{c} %lld %zu\\n", (long long)({c}), sizeof({c}));')
    lines.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "p.c")
        with open(c, "w") as f:
            f.write("\n".join(lines))
        sh(["gcc", "-o", os.path.join(d, "p"), c])
        out = sh([os.path.join(d, "p")])
    vals = {}
    for line in out.splitlines():
        p = line.split()
        vals[p[0]] = [int(x) for x in p[1:]]
    return vals


LAYOUT = {"ptr": "C_POINTER", "long": "C_LONG", "int": "C_INT", "short": "C_SHORT", "char": "C_CHAR"}
JTYPE = {"ptr": "MemorySegment", "long": "long", "int": "int", "short": "short", "char": "byte"}
OFTYPE = {"ptr": "AddressLayout", "long": "OfLong", "int": "OfInt", "short": "OfShort", "char": "OfByte"}
SIZE = {"ptr": 8, "long": 8, "int": 4, "short": 2, "char": 1}

PREAMBLE = """// Generated by jextract (shape), regenerated with scripts/jextract/libfabric.sh where jextract
// is installed, else by scripts/jextract/libfabric-handgen.py. Do not edit.

package %s;

import java.lang.invoke.*;
import java.lang.foreign.*;
import java.nio.ByteOrder;
import java.util.*;
import java.util.function.*;
import java.util.stream.*;

import static java.lang.foreign.ValueLayout.*;
import static java.lang.foreign.MemoryLayout.PathElement.*;
""" % PKG


def fptr_class(f, indent="    "):
    ps = f["params"]
    pn = f["pnames"]
    args = ", ".join(f"{JTYPE[k]} {pn[i]}" for i, k in enumerate(ps))
    names = ", ".join(pn)
    ret = "void" if f["ret"] is None else JTYPE[f["ret"]]
    if f["ret"] is None:
        desc = "FunctionDescriptor.ofVoid(\n" + ",\n".join(f"{indent}        {HDR}.{LAYOUT[k]}" for k in ps) + "\n" + indent + "    )"
    else:
        desc = "FunctionDescriptor.of(\n" + ",\n".join(f"{indent}        {HDR}.{LAYOUT[k]}" for k in [f["ret"]] + ps) + "\n" + indent + "    )"
    call = f"DOWN$MH.invokeExact(funcPtr{', ' if ps else ''}{names})"
    body = f"{call};" if ret == "void" else f"return ({ret}) {call};"
    n = f["name"]
    return f"""
{indent}/**
{indent} * {{@snippet lang=c :
{indent} * {f["cdecl"]}
{indent} * }}
{indent} */
{indent}public static class {n} {{

{indent}    {n}() {{
{indent}        // Should not be called directly
{indent}    }}

{indent}    /**
{indent}     * The function pointer signature, expressed as a functional interface
{indent}     */
{indent}    public interface Function {{
{indent}        {ret} apply({args});
{indent}    }}

{indent}    private static final FunctionDescriptor $DESC = {desc};

{indent}    /**
{indent}     * The descriptor of this function pointer
{indent}     */
{indent}    public static FunctionDescriptor descriptor() {{
{indent}        return $DESC;
{indent}    }}

{indent}    private static final MethodHandle UP$MH = {HDR}.upcallHandle({n}.Function.class, "apply", $DESC);

{indent}    /**
{indent}     * Allocates a new upcall stub, whose implementation is defined by {{@code fi}}.
{indent}     * The lifetime of the returned segment is managed by {{@code arena}}
{indent}     */
{indent}    public static MemorySegment allocate({n}.Function fi, Arena arena) {{
{indent}        return Linker.nativeLinker().upcallStub(UP$MH.bindTo(fi), $DESC, arena);
{indent}    }}

{indent}    private static final MethodHandle DOWN$MH = Linker.nativeLinker().downcallHandle($DESC);

{indent}    /**
{indent}     * Invoke the upcall stub {{@code funcPtr}}, with given parameters
{indent}     */
{indent}    public static {ret} invoke(MemorySegment funcPtr{', ' if ps else ''}{args}) {{
{indent}        try {{
{indent}            {body}
{indent}        }} catch (Throwable ex$) {{
{indent}            throw new AssertionError("should not reach here", ex$);
{indent}        }}
{indent}    }}
{indent}}}
"""


def struct_class(s, fields, vals, body):
    size = vals[s + ".sizeof"][0]
    members, pos = [], 0
    for f in fields:
        off = vals[f"{s}.{f['name']}"][0]
        if off > pos:
            members.append(f"        MemoryLayout.paddingLayout({off - pos})")
        k = f["kind"]
        n = f["name"]
        if k == "fptr":
            k = "ptr"
        if isinstance(k, tuple):
            members.append(f"        {k[1]}.layout().withName(\"{n}\")")
            fsize = vals[k[1] + ".sizeof"][0]
        elif k == "flex":
            members.append(f"        MemoryLayout.sequenceLayout(0, {HDR}.C_CHAR).withName(\"{n}\")")
            fsize = 0
        else:
            members.append(f"        {HDR}.{LAYOUT[k]}.withName(\"{n}\")")
            fsize = SIZE[k]
        pos = off + fsize
    if size > pos:
        members.append(f"        MemoryLayout.paddingLayout({size - pos})")
    cdoc = "\n".join(" *     " + " ".join(d.split()) + ";" for d in [x for x in body.split(";") if x.strip()])
    out = [PREAMBLE, f"""/**
 * {{@snippet lang=c :
 * struct {s} {{
{cdoc}
 * }}
 * }}
 */
public class {s} {{

    {s}() {{
        // Should not be called directly
    }}

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
{(","+chr(10)).join(members)}
    ).withName("{s}");

    /**
     * The layout of this struct
     */
    public static final GroupLayout layout() {{
        return $LAYOUT;
    }}
"""]
    for f in fields:
        n, k = f["name"], f["kind"]
        off = vals[f"{s}.{n}"][0]
        snippet = f"""
    /**
     * {{@snippet lang=c :
     * {" ".join(f["cdecl"].split())}
     * }}
     */"""
        if k == "fptr":
            out.append(fptr_class(f))
            k = "ptr"
        if isinstance(k, tuple) or k == "flex":
            lt = "GroupLayout" if isinstance(k, tuple) else "SequenceLayout"
            out.append(f"""
    private static final {lt} {n}$LAYOUT = ({lt})$LAYOUT.select(groupElement("{n}"));
{snippet}
    public static final {lt} {n}$layout() {{
        return {n}$LAYOUT;
    }}

    private static final long {n}$OFFSET = {off};
{snippet}
    public static final long {n}$offset() {{
        return {n}$OFFSET;
    }}
{snippet}
    public static MemorySegment {n}(MemorySegment struct) {{
        return struct.asSlice({n}$OFFSET, {n}$LAYOUT.byteSize());
    }}
{snippet}
    public static void {n}(MemorySegment struct, MemorySegment fieldValue) {{
        MemorySegment.copy(fieldValue, 0L, struct, {n}$OFFSET, {n}$LAYOUT.byteSize());
    }}
""")
            continue
        ot, jt = OFTYPE[k], JTYPE[k]
        out.append(f"""
    private static final {ot} {n}$LAYOUT = ({ot})$LAYOUT.select(groupElement("{n}"));
{snippet}
    public static final {ot} {n}$layout() {{
        return {n}$LAYOUT;
    }}

    private static final long {n}$OFFSET = {off};
{snippet}
    public static final long {n}$offset() {{
        return {n}$OFFSET;
    }}
{snippet}
    public static {jt} {n}(MemorySegment struct) {{
        return struct.get({n}$LAYOUT, {n}$OFFSET);
    }}
{snippet}
    public static void {n}(MemorySegment struct, {jt} fieldValue) {{
        struct.set({n}$LAYOUT, {n}$OFFSET, fieldValue);
    }}
""")
    out.append("""
    /**
     * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
     * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
     */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index);
    }

    /**
     * The size (in bytes) of this struct
     */
    public static long sizeof() { return layout().byteSize(); }

    /**
     * Allocate a segment of size {@code layout().byteSize()} using {@code allocator}
     */
    public static MemorySegment allocate(SegmentAllocator allocator) {
        return allocator.allocate(layout());
    }

    /**
     * Allocate an array of size {@code elementCount} using {@code allocator}.
     * The returned segment has size {@code elementCount * layout().byteSize()}.
     */
    public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
        return reinterpret(addr, 1, arena, cleanup);
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code elementCount * layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
        return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
    }
}
""")
    return "".join(out)


def shared_class():
    return PREAMBLE + f"""
/**
 * Layouts and helpers shared by the generated classes of libfabric.
 */
class {HDR}$shared {{

    {HDR}$shared() {{
        // Should not be called directly
    }}

    public static final ValueLayout.OfBoolean C_BOOL = ValueLayout.JAVA_BOOLEAN;
    public static final ValueLayout.OfByte C_CHAR = ValueLayout.JAVA_BYTE;
    public static final ValueLayout.OfShort C_SHORT = ValueLayout.JAVA_SHORT;
    public static final ValueLayout.OfInt C_INT = ValueLayout.JAVA_INT;
    public static final ValueLayout.OfLong C_LONG_LONG = ValueLayout.JAVA_LONG;
    public static final ValueLayout.OfFloat C_FLOAT = ValueLayout.JAVA_FLOAT;
    public static final ValueLayout.OfDouble C_DOUBLE = ValueLayout.JAVA_DOUBLE;
    public static final AddressLayout C_POINTER = ValueLayout.ADDRESS
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, JAVA_BYTE));
    public static final ValueLayout.OfLong C_LONG = ValueLayout.JAVA_LONG;

    static final boolean TRACE_DOWNCALLS = Boolean.getBoolean("jextract.trace.downcalls");

    static void traceDowncall(String name, Object... args) {{
         String traceArgs = Arrays.stream(args)
                       .map(Object::toString)
                       .collect(Collectors.joining(", "));
         System.out.printf("%s(%s)\\n", name, traceArgs);
    }}

    static MemorySegment findOrThrow(String symbol) {{
        return {HDR}.SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol));
    }}

    static MethodHandle upcallHandle(Class<?> fi, String name, FunctionDescriptor fdesc) {{
        try {{
            return MethodHandles.lookup().findVirtual(fi, name, fdesc.toMethodType());
        }} catch (ReflectiveOperationException ex) {{
            throw new AssertionError(ex);
        }}
    }}

    static MemoryLayout align(MemoryLayout layout, long align) {{
        return switch (layout) {{
            case PaddingLayout p -> p;
            case ValueLayout v -> v.withByteAlignment(align);
            case GroupLayout g -> {{
                MemoryLayout[] alignedMembers = g.memberLayouts().stream()
                        .map(m -> align(m, align)).toArray(MemoryLayout[]::new);
                yield g instanceof StructLayout ?
                        MemoryLayout.structLayout(alignedMembers) : MemoryLayout.unionLayout(alignedMembers);
            }}
            case SequenceLayout s -> MemoryLayout.sequenceLayout(s.elementCount(), align(s.elementLayout(), align));
        }};
    }}
}}
"""


def header_class(funcs, consts, vals):
    out = [PREAMBLE, f"""
/**
 * libfabric ({{@code libfabric.so.1}}): exported functions and constants. Loading this class
 * loads the library; callers check availability first (see {{@code FabricLibrary}}).
 */
public class {HDR} extends {HDR}$shared {{

    {HDR}() {{
        // Should not be called directly
    }}

    static final Arena LIBRARY_ARENA = Arena.ofAuto();

    static final SymbolLookup SYMBOL_LOOKUP = SymbolLookup.libraryLookup("libfabric.so.1", LIBRARY_ARENA)
            .or(SymbolLookup.loaderLookup())
            .or(Linker.nativeLinker().defaultLookup());
"""]
    for c in consts:
        v, sz = vals[c]
        if sz == 8:
            out.append(f"""
    private static final long {c} = {v}L;
    /**
     * {{@snippet lang=c :
     * #define {c} {v}
     * }}
     */
    public static long {c}() {{
        return {c};
    }}
""")
        else:
            out.append(f"""
    private static final int {c} = (int){v}L;
    /**
     * {{@snippet lang=c :
     * {c} = {v}
     * }}
     */
    public static int {c}() {{
        return {c};
    }}
""")
    out.append("""
    /**
     * {@snippet lang=c :
     * #define FI_VERSION(major, minor) (((major) << 16) | (minor))
     * }
     * (A function-like macro: jextract skips these; kept here by hand in the same style.)
     */
    public static int FI_VERSION(int major, int minor) {
        return (major << 16) | minor;
    }
""")
    for name, (cret, params) in funcs.items():
        rk = None if cret == "void" else ("ptr" if "*" in cret else ctype_kind(cret))
        pk = [param_type(p) for p in params]
        pn = [p.replace("*", " ").split()[-1] for p in params]
        layouts = ([] if rk is None else [rk]) + pk
        ctor = "FunctionDescriptor.ofVoid(" if rk is None else "FunctionDescriptor.of("
        desc = ctor + ("\n" + ",\n".join(f"            {HDR}.{LAYOUT[k]}" for k in layouts) + "\n        " if layouts else "") + ")"
        ret = "void" if rk is None else JTYPE[rk]
        args = ", ".join(f"{JTYPE[k]} {n}" for k, n in zip(pk, pn))
        names = ", ".join(pn)
        call = f"mh$.invokeExact({names})"
        body = f"{call};" if ret == "void" else f"return ({ret}){call};"
        cdecl = f"{cret} {name}({', '.join(params) if params else 'void'})".replace("* ", "*")
        out.append(f"""
    private static class {name} {{
        public static final FunctionDescriptor DESC = {desc};

        public static final MemorySegment ADDR = {HDR}.findOrThrow("{name}");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }}

    /**
     * Function descriptor for:
     * {{@snippet lang=c :
     * {cdecl}
     * }}
     */
    public static FunctionDescriptor {name}$descriptor() {{
        return {name}.DESC;
    }}

    /**
     * Downcall method handle for:
     * {{@snippet lang=c :
     * {cdecl}
     * }}
     */
    public static MethodHandle {name}$handle() {{
        return {name}.HANDLE;
    }}

    /**
     * Address for:
     * {{@snippet lang=c :
     * {cdecl}
     * }}
     */
    public static MemorySegment {name}$address() {{
        return {name}.ADDR;
    }}

    /**
     * {{@snippet lang=c :
     * {cdecl}
     * }}
     */
    public static {ret} {name}({args}) {{
        var mh$ = {name}.HANDLE;
        try {{
            if (TRACE_DOWNCALLS) {{
                traceDowncall("{name}"{', ' if names else ''}{names});
            }}
            {body}
        }} catch (Throwable ex$) {{
           throw new AssertionError("should not reach here", ex$);
        }}
    }}
""")
    out.append("}\n")
    return "".join(out)


def main():
    syms = read_symbols()
    text = preprocessed()
    structs, bodies = {}, {}
    for s in syms["struct"]:
        bodies[s] = struct_body(text, s)
        structs[s] = parse_fields(bodies[s])
    vals = probe(structs, syms["constant"])
    os.makedirs(OUT, exist_ok=True)
    for s, fields in structs.items():
        with open(os.path.join(OUT, s + ".java"), "w") as f:
            f.write(struct_class(s, fields, vals, bodies[s]))
    with open(os.path.join(OUT, HDR + "$shared.java"), "w") as f:
        f.write(shared_class())
    with open(os.path.join(OUT, HDR + ".java"), "w") as f:
        f.write(header_class({k: FUNCS[k] for k in syms["function"]}, syms["constant"], vals))
    print("wrote", len(structs) + 2, "classes to", OUT)


if __name__ == "__main__":
    main()
