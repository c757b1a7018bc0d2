package io.cqflux.transport.fabric;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether this process may pin memory without bound: its soft {@code RLIMIT_MEMLOCK} is
 * unlimited, or it holds {@code CAP_IPC_LOCK}, which memory registration does not count against
 * the limit (getrlimit(2), capabilities(7): "CAP_IPC_LOCK: lock memory (mlock(2), ...)"; the
 * kernel's {@code ib_umem_get} checks the pinned-page count against the limit only without it).
 * Read from {@code /proc/self/limits} ("Max locked memory", the soft column) and
 * {@code /proc/self/status} ({@code CapEff}, bit 14), as text: nothing native.
 *
 * <p>Why the verbs transport asks: each connection with keys scoped to it registers the
 * instance's buffer pool and receive chunks again in its own protection domain (ScopedLocalMr),
 * and each such registration counts against the limit again, about 6 MiB per connection with the
 * defaults (docs/security.md, section 5); under a finite limit a default server would fail
 * operations once a few connections used them, so there scoping is not the default.
 */
final class LockedMemory {

    /** {@code CAP_IPC_LOCK}, capability(7)'s number 14. */
    static final int CAP_IPC_LOCK = 14;

    private LockedMemory() {
    }

    /** {@return null when pinning is unbounded for this process, else the soft limit in bytes (or -1 when unreadable)} */
    static Long boundOrNull() {
        try {
            if (hasCapability(Files.readString(Path.of("/proc/self/status")), CAP_IPC_LOCK)) {
                return null;
            }
            long soft = softLimit(Files.readString(Path.of("/proc/self/limits")));
            return soft == Long.MAX_VALUE ? null : soft;
        } catch (IOException | RuntimeException e) {
            return -1L;
        }
    }

    /**
     * {@return the soft "Max locked memory" of a {@code /proc/<pid>/limits} text in bytes,
     * {@link Long#MAX_VALUE} for unlimited}
     *
     * @throws IllegalArgumentException when the text has no such line
     */
    static long softLimit(String limits) {
        for (String line : limits.split("\n")) {
            if (line.startsWith("Max locked memory")) {
                String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                return "unlimited".equals(f[0]) ? Long.MAX_VALUE : Long.parseLong(f[0]);
            }
        }
        throw new IllegalArgumentException("no \"Max locked memory\" line");
    }

    /** {@return whether the {@code CapEff} mask of a {@code /proc/<pid>/status} text holds capability {@code bit}} */
    static boolean hasCapability(String status, int bit) {
        for (String line : status.split("\n")) {
            if (line.startsWith("CapEff:")) {
                long mask = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
                return (mask >>> bit & 1) != 0;
            }
        }
        return false;
    }
}
