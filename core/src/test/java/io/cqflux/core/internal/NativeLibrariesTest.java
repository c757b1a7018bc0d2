package io.cqflux.core.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class NativeLibrariesTest {

    @Test
    void aLibraryThatIsInstalled_isNotReportedAsMissing() {
        // libc is on every machine this runs on: a load failure of it must point at its
        // dependencies, never advise installing it.
        String cause = NativeLibraries.loadFailure(List.of("libc.so.6"), "test failure", "apt-get install libc6");
        assertTrue(cause.contains("is installed but cannot be loaded") && cause.contains("ldd"), cause);
        assertTrue(NativeLibraries.locate("libc.so.6").isPresent());
    }

    @Test
    void aLibraryThatIsNowhere_isReportedAsNotInstalled_withTheInstallHint() {
        String cause = NativeLibraries.loadFailure(List.of("libcqflux-none.so.9"), "not found", "apt-get install none");
        assertTrue(cause.contains("is not installed") && cause.contains("apt-get install none"), cause);
    }
}
