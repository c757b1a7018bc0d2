package io.cqflux.core.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Explains why a native library did not load: "not installed" and "installed but cannot be
 * loaded" need different advice (the second is a missing dependency, a wrong architecture or a
 * broken install; telling the user to install what is installed sends them the wrong way).
 */
public final class NativeLibraries {

    private NativeLibraries() {
    }

    /**
     * Looks for a shared library's file where the dynamic loader looks by default
     * ({@code ld.so(8)}: {@code LD_LIBRARY_PATH}, then the multiarch and plain library
     * directories).
     *
     * @param soname the file name, e.g. {@code librpma.so.0}
     * @return the first file found
     */
    public static Optional<Path> locate(String soname) {
        Set<String> dirs = new LinkedHashSet<>();
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            for (String d : ld.split(":")) {
                if (!d.isEmpty()) {
                    dirs.add(d);
                }
            }
        }
        String arch = System.getProperty("os.arch", "");
        String multiarch = switch (arch) {
            case "amd64", "x86_64" -> "x86_64-linux-gnu";
            case "aarch64" -> "aarch64-linux-gnu";
            default -> arch + "-linux-gnu";
        };
        dirs.addAll(List.of("/usr/local/lib", "/lib/" + multiarch, "/usr/lib/" + multiarch, "/lib64", "/usr/lib64",
                "/lib", "/usr/lib"));
        for (String d : new ArrayList<>(dirs)) {
            Path p = Path.of(d, soname);
            if (Files.exists(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /**
     * The cause to report for a library that did not load.
     *
     * @param sonames the file names tried
     * @param failure what the loader said
     * @param installHint how to install it, e.g. {@code apt-get install librpma0}
     * @return "installed at … but cannot be loaded (…)" when a file exists, else "not installed … install it with …"
     */
    public static String loadFailure(List<String> sonames, String failure, String installHint) {
        for (String s : sonames) {
            Optional<Path> p = locate(s);
            if (p.isPresent()) {
                return p.get() + " is installed but cannot be loaded (" + failure + "): one of its own"
                        + " dependencies is probably missing or of another architecture; `ldd " + p.get()
                        + "` names it";
            }
        }
        return String.join(" or ", sonames) + " is not installed (" + failure + "); install it with " + installHint;
    }
}
