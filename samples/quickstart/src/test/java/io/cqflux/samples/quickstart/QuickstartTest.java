package io.cqflux.samples.quickstart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class QuickstartTest {

    record Run(int status, String out, String err) {
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Quickstart.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void smallRun_overFabric_verifiesEveryByte_andExitsZero() {
        Run r = run("--transport", "fabric", "--count", "600", "--size", "1000", "--concurrency", "8", "--quiet");
        assertEquals(0, r.status(), r.out() + r.err());
        assertTrue(r.out().contains("verified 600/600 records via RDMA read, 600/600 in the server's mapped file: OK"),
                r.out());
        assertTrue(r.out().contains("p99.9"), r.out());
    }

    @Test
    void corruptedServerFile_isDetected_andExitsOne() {
        Options o = Options.parse(new String[] {"--transport", "fabric", "--count", "64", "--size", "256", "--quiet"});
        o.injectCorruption = true;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Quickstart.run(o, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(1, status, out.toString(StandardCharsets.UTF_8));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("record 32 differs"), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * Records within the options' bounds that do not fit where the file goes are refused before
     * anything is written, naming the options and the space; before, the run wrote until the disk
     * was full, then failed with an InternalError from the mapped memory. The check with a given
     * free space (1 MiB), so that it holds on a machine of any disk; and the run's own path, with
     * about 0.95 TiB of records where this machine's temp directory holds less.
     */
    @Test
    void recordsThatDoNotFitTheDisk_areRefusedBeforeAnythingIsWritten_andExitTwo() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("cqflux-quickstart-test");
        java.nio.file.Path file = dir.resolve("big.dat");
        try {
            Options o = Options.parse(new String[] {"--count", "64", "--size", "65536"});
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Quickstart.checkSpace(o, file, 1 << 20));
            assertTrue(e.getMessage().contains("--count 64 x --size 65536 = 4194304 bytes")
                    && e.getMessage().contains("1048576 bytes usable"), e.getMessage());
            Quickstart.checkSpace(o, file, 8 << 20); // fits
            long total = 1_000_000L * 1_048_576L;
            if (java.nio.file.Files.getFileStore(dir).getUsableSpace() < total) {
                Run r = run("--transport", "fabric", "--count", "1000000", "--size", "1048576", "--quiet",
                        "--file", file.toString());
                assertEquals(2, r.status(), r.out() + r.err());
                assertTrue(r.err().contains("do not fit"), r.err());
                assertTrue(!java.nio.file.Files.exists(file), "nothing was written");
            }
        } finally {
            java.nio.file.Files.deleteIfExists(file);
            java.nio.file.Files.delete(dir);
        }
    }

    @Test
    void invalidOption_printsUsage_andExitsTwo() {
        Run r = run("--count", "zero");
        assertEquals(2, r.status());
        assertTrue(r.err().contains("--count zero is not a number"), r.err());
        assertTrue(r.err().contains("Usage: quickstart"), r.err());
        assertEquals(2, run("--wait", "sometimes").status());
        assertEquals(2, run("--bogus").status());
        Run dir = run("--file", "/nonexistent-dir-of-cqflux/x");
        assertEquals(2, dir.status());
        assertTrue(dir.err().contains("does not exist"), dir.err());
        Run spins = run("--wait", "adaptive:99999999999");
        assertEquals(2, spins.status());
        assertTrue(spins.err().contains("[1, 2147483647]"), spins.err());
    }

    @Test
    void providerOption_isParsed_andNeedsTheFabricTransport() {
        assertEquals("verbs", Options.parse(new String[] {"--transport", "fabric", "--provider", "verbs"}).provider);
        IllegalArgumentException noFabric = assertThrows(IllegalArgumentException.class,
                () -> Options.parse(new String[] {"--provider", "tcp"}));
        assertTrue(noFabric.getMessage().contains("needs --transport fabric"), noFabric.getMessage());
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> Options.parse(new String[] {"--transport", "fabric", "--provider", "sockets"}));
        assertTrue(unknown.getMessage().contains("--provider sockets is not one of tcp, verbs"), unknown.getMessage());
    }

    @Test
    void help_printsUsage_andExitsZero() {
        Run r = run("--help");
        assertEquals(0, r.status());
        assertTrue(r.out().contains("--concurrency"), r.out());
    }

    @Test
    void recordPattern_differsBetweenRecords_andIsDeterministic() {
        assertEquals(Quickstart.word(5, 3), Quickstart.word(5, 3));
        assertTrue(Quickstart.word(5, 3) != Quickstart.word(6, 3));
        assertTrue(Quickstart.word(5, 3) != Quickstart.word(5, 4));
    }
}
