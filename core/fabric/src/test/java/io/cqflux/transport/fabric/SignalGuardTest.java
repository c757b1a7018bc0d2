package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.transport.fabric.ffm.signal_h;
import io.cqflux.core.spi.Transport;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** The psm libraries libfabric links must not keep their signal handlers in the JVM. */
class SignalGuardTest {

    @Test
    void afterLoadingAndListingProviders_theJvmSignalHandlersAreStillInstalled() {
        long segv = SignalGuard.handler(signal_h.SIGSEGV());
        long bus = SignalGuard.handler(signal_h.SIGBUS());
        assertTrue(Fabric.isAvailable(), Fabric.unavailabilityCause());
        FabricInfo.providers(); // initialises every provider, the psm ones included
        try (Transport t = Fabric.open(InetAddress.getLoopbackAddress())) {
            assertEquals("fabric/tcp", t.name());
        }
        if (segv != 0) { // 0 would mean this class loaded libfabric before the JVM... never here
            assertEquals(segv, SignalGuard.handler(signal_h.SIGSEGV()), "SIGSEGV handler replaced");
            assertEquals(bus, SignalGuard.handler(signal_h.SIGBUS()), "SIGBUS handler replaced");
        }
        System.out.println("FACT signal handlers put back after libfabric calls: " + SignalGuard.restoredCount());
    }

    @Test
    void sigactionStruct_fitsTheBufferSize() {
        long size = io.cqflux.core.testing.CProbe.run("sigaction_size", """
                #include <stdio.h>
                #include <signal.h>
                int main(void) {
                  printf("sizeof %zu\\n", sizeof(struct sigaction));
                  printf("handler %zu\\n", __builtin_offsetof(struct sigaction, sa_handler));
                  printf("SIGSEGV %d\\nSIGBUS %d\\nSIGILL %d\\nSIGFPE %d\\nSIGABRT %d\\n", SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT);
                  return 0;
                }
                """).get("sizeof");
        assertTrue(size <= SignalGuard.SIGACTION_BYTES, "struct sigaction is " + size + " bytes");
        var v = io.cqflux.core.testing.CProbe.run("signal_numbers", """
                #include <stdio.h>
                #include <signal.h>
                int main(void) {
                  printf("handler %zu\\n", __builtin_offsetof(struct sigaction, sa_handler));
                  printf("SIGSEGV %d\\nSIGBUS %d\\nSIGILL %d\\nSIGFPE %d\\nSIGABRT %d\\n", SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT);
                  return 0;
                }
                """);
        assertEquals(0L, v.get("handler"));
        assertEquals(signal_h.SIGSEGV(), v.get("SIGSEGV").intValue());
        assertEquals(signal_h.SIGBUS(), v.get("SIGBUS").intValue());
        assertEquals(signal_h.SIGILL(), v.get("SIGILL").intValue());
        assertEquals(signal_h.SIGFPE(), v.get("SIGFPE").intValue());
        assertEquals(signal_h.SIGABRT(), v.get("SIGABRT").intValue());
    }
}
