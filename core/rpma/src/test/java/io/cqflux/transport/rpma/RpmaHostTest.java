package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.NativeCallException;
import io.cqflux.core.TransportUnavailableException;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The rpma transport on a build host WITHOUT an RDMA device (the project's machines: no
 * CONFIG_INFINIBAND). Tagged {@code host-only}: inside the Soft-RoCE lane a device exists and
 * these expectations do not hold; the lane's command excludes the tag.
 */
@Tag("host-only")
class RpmaHostTest {

    @Test
    void isAvailable_withLibrpmaInstalled_isTrueAndHasNoCause() {
        assertTrue(Rpma.isAvailable(), Rpma.unavailabilityCause());
        assertEquals("", Rpma.unavailabilityCause());
    }

    @Test
    void open_withoutRdmaDevice_failsNamingTheDeviceSoftRoceAndFabric() throws Exception {
        assertEquals(List.of(), RpmaTransport.rdmaDevices(), "this test expects a host without RDMA devices");
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> Rpma.open(InetAddress.getByName("127.0.0.1")));
        String m = e.getMessage();
        assertTrue(m.contains("no RDMA device"), m);
        assertTrue(m.contains("Soft-RoCE") && m.contains("rdma link add rxe0 type rxe netdev"), m);
        assertTrue(m.contains("fabric transport"), m);
        assertEquals("rpma", e.transport());
        NativeCallException cause = (NativeCallException) e.getCause();
        assertEquals("rpma_utils_get_ibv_context", cause.call());
        assertEquals("RPMA_E_PROVIDER", cause.codeName());
    }

    @Test
    void open_withoutRdmaDevice_routesLibrpmaLogToSystemLoggerWithoutArguments_demotedToDebug() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        // The device probe's failure is expected on hosts without RDMA and its exception carries
        // the reason, so librpma's ERROR lines about it arrive demoted to DEBUG (RpmaLog.PROBING).
        // On the class path System.Logger is backed by java.util.logging: the JUL logger of the
        // same name is where its records land (the production code knows only System.Logger).
        Logger jul = Logger.getLogger(RpmaLog.LOGGER.getName());
        Level before = jul.getLevel();
        jul.setLevel(Level.FINE);
        jul.addHandler(h);
        try {
            RpmaLog.syncThreshold(); // the threshold follows the logger; it may have been installed earlier
            assertThrows(TransportUnavailableException.class, () -> Rpma.open(InetAddress.getByName("127.0.0.1")));
        } finally {
            jul.removeHandler(h);
            jul.setLevel(before);
            RpmaLog.syncThreshold();
        }
        assertTrue(records.stream().noneMatch(x -> x.getLevel().intValue() > Level.FINE.intValue()),
                "probe errors must not be logged above FINE: " + records);
        // System.Logger.Level.DEBUG is FINE under java.util.logging
        LogRecord r = records.stream().filter(x -> x.getLevel() == Level.FINE).findFirst()
                .orElseThrow(() -> new AssertionError("no DEBUG (FINE) record from librpma: " + records));
        // the upcall sees only the fixed arguments: the unexpanded format, the function and file:line
        String m = r.getMessage();
        assertTrue(m.startsWith("librpma: "), m);
        assertTrue(m.contains("%"), "format arguments are not expanded: " + m);
        assertTrue(m.matches("(?s).* \\[\\w+ at [^ ]+\\.c:\\d+; format arguments not available.*"), m);
    }
}
