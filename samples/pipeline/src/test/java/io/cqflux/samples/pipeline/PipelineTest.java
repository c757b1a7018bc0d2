package io.cqflux.samples.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineTest {
    @TempDir
    Path dir;

    record Run(Pipeline.Result result, String out, String err) {
    }

    static Run run(Options o) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Pipeline.Result r = Pipeline.run(o, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(r, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Pipeline.Result r = Pipeline.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(r, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /**
     * An --out directory that cannot take the report fails before the run, not after it: for root,
     * /proc passes the options' check of the nearest existing ancestor (permission bits do not
     * bind root) and takes no new file.
     */
    @Test
    void anOutDirectoryThatCannotTakeTheReport_failsBeforeTheRun() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        long t0 = System.nanoTime();
        Pipeline.Result r = Pipeline.run(new String[] {"--records", "2000000", "--quiet", "--out", "/proc/cqflux-x"},
                new java.io.PrintStream(out, true), new java.io.PrintStream(err, true));
        assertEquals(Pipeline.USAGE, r.status(), err.toString());
        // Root passes the options' check of /proc (its permission bits do not bind root) and meets
        // the probe; anyone else is refused by the options' check already.
        assertTrue(err.toString().contains("--out /proc/cqflux-x"), err.toString());
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "failed only after the run");
    }

    @Test
    void twoHundredThousandRecords_throughASmallRing_allVerified_sourceHeldBackToTheRing() throws IOException {
        // A ring of 1024 slots for 200k records: it wraps about 200 times. The consumer sleeps
        // 100 µs per batch, so it is the slowest stage on any machine: the ring fills, and only
        // backpressure keeps the source from running ahead.
        Run run = run(Options.parse(new String[] {"--transport", "fabric", "--records", "200000",
                "--ring-slots", "1024", "--batch", "32", "--consumer-delay-us", "100", "--interval-ms", "100",
                "--quiet", "--out", dir.toString()}));
        Pipeline.Result r = run.result();
        assertEquals(Pipeline.OK, r.status(), run.out() + run.err());
        assertEquals(200_000, r.verified(), run.out());
        assertTrue(run.out().contains("pipeline: OK (200,000 records verified in order"), run.out());
        // Backpressure engaged: the source waited for the ring, and never got further ahead of the
        // consumer than the ring plus the batches being assembled.
        assertTrue(r.ringWaits() > 0, run.out());
        assertTrue(r.maxAhead() <= 1024 + 3 * 32, "source ran " + r.maxAhead() + " records ahead: " + run.out());
        assertTrue(r.maxAhead() >= 1024, "the ring never filled: " + run.out());
        // Operations outstanding on the writer's connection: writeAll's at most sendCredits/2 durable
        // writes (one operation each, holding two credits) and at most COMMIT_WINDOW commits (each
        // one operation at a time: write with immediate, then flush). The credits themselves cap
        // what is posted, so what shows an unbounded stage is the queue waiting for a credit: it can
        // never hold more than those operations (sampled at each interval).
        assertTrue(r.maxInFlight() > 0, run.out());
        int outstanding = Math.max(1, r.sendCredits() / 2) + Pipeline.COMMIT_WINDOW;
        assertTrue(r.maxWaiting() <= outstanding, "operations waiting for a credit: " + r.maxWaiting()
                + ", bound " + outstanding + ": " + run.out());
        // Memory: the records held at once are the ring's and a few batches' worth; all 200k of them
        // (about 29 MB of record bytes, some 38 MB as arrays) would have to be retained if anything
        // buffered without bound. The heap retained after a collection stays far below that.
        assertTrue(r.peakLive() > 0 && r.peakLive() < (32L << 20), "retained heap " + r.peakLive() + ": " + run.out());
        assertTrue(r.peakHeap() > 0 && r.peakRss() > 0, run.out());
        List<String> csv = Files.readAllLines(dir.resolve("pipeline.csv"));
        assertEquals(Sample.CSV_HEADER, csv.getFirst());
        assertTrue(csv.size() >= 3, csv.toString());
        byte[] png = Files.readAllBytes(dir.resolve("pipeline.png"));
        assertEquals((byte) 0x89, png[0]);
        assertEquals("PNG", new String(png, 1, 3, StandardCharsets.US_ASCII));
    }

    @Test
    void corruptedRecordInTheRing_isDetectedByItsChecksum_andFails() {
        Options o = Options.parse(new String[] {"--transport", "fabric", "--records", "20000", "--ring-slots", "256",
                "--batch", "16", "--quiet", "--out", dir.toString()});
        o.corruptRecord = 12_345;
        Run run = run(o);
        assertEquals(Pipeline.FAILED, run.result().status(), run.out());
        assertTrue(run.err().contains("record 12345: CRC32C"), run.err());
        assertTrue(run.err().contains("(corrupted)"), run.err());
    }

    @Test
    void consumerThatStopsVerifying_failsWithinTheStallTimeout_namingWhatStalled() {
        Options o = Options.parse(new String[] {"--transport", "fabric", "--records", "20000", "--ring-slots", "256",
                "--batch", "16", "--stall-timeout", "2", "--quiet", "--out", dir.toString()});
        o.consumerStopsAfter = 3000;
        // Generous: the run must end through the watchdog (2 s of no progress), not hang.
        Run run = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> run(o));
        assertEquals(Pipeline.FAILED, run.result().status(), run.out() + run.err());
        assertTrue(run.err().contains("pipeline stalled: no progress for 2 s (--stall-timeout)"), run.err());
        assertTrue(run.err().contains("the consumer stopped verifying"), run.err());
        assertTrue(run.err().contains("last verified sequence"), run.err());
    }

    @Test
    void linesOfAFile_areReplicatedAsRecords() throws IOException {
        Path log = dir.resolve("wal.txt");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            b.append("INSERT INTO t VALUES (").append(i).append(", 'row ").append(i).append("')\n");
        }
        b.append('\n'); // an empty line is an empty record
        Files.writeString(log, b);
        Run run = run("--transport", "fabric", "--source", log.toString(), "--ring-slots", "512", "--quiet",
                "--out", dir.toString());
        assertEquals(Pipeline.OK, run.result().status(), run.out() + run.err());
        assertEquals(5001, run.result().verified(), run.out());
    }

    @Test
    void lineLongerThanThePayload_failsNamingTheLineAndTheBound() throws IOException {
        Path log = dir.resolve("wal.txt");
        Files.writeString(log, "short\n" + "x".repeat(300) + "\n");
        Run run = run("--transport", "fabric", "--source", log.toString(), "--quiet", "--out", dir.toString());
        assertEquals(Pipeline.FAILED, run.result().status(), run.out());
        assertTrue(run.err().contains("line 2 has 300 bytes, more than --payload 240"), run.err());
    }

    @Test
    void badOptions_printUsage_andExitTwo() throws IOException {
        Run r = run("--batch", "600", "--ring-slots", "1024");
        assertEquals(Pipeline.USAGE, r.result().status());
        assertTrue(r.err().contains("--batch 600 exceeds half the ring (512 of --ring-slots 1024)"), r.err());
        assertTrue(r.err().contains("Usage: pipeline"), r.err());
        assertEquals(Pipeline.USAGE, run("--records", "many").result().status());
        assertEquals(Pipeline.USAGE, run("--bogus").result().status());
        Run stall = run("--stall-timeout", "0");
        assertEquals(Pipeline.USAGE, stall.result().status());
        assertTrue(stall.err().contains("--stall-timeout 0 is outside [1, 86400]"), stall.err());
        assertEquals(Pipeline.OK, run("--help").result().status());
        // Paths are checked before anything connects.
        Path file = Files.createTempFile("pipeline-out", ".txt");
        try {
            Run out = run("--out", file.toString());
            assertEquals(Pipeline.USAGE, out.result().status());
            assertTrue(out.err().contains("exists and is not a directory"), out.err());
            Run under = run("--out", file.resolve("sub").toString());
            assertEquals(Pipeline.USAGE, under.result().status());
            assertTrue(under.err().contains("exists and is not a directory"), under.err());
            Run missing = run("--source", file + ".missing");
            assertEquals(Pipeline.USAGE, missing.result().status());
            assertTrue(missing.err().contains("does not exist"), missing.err());
            Run dir = run("--source", file.getParent().toString());
            assertEquals(Pipeline.USAGE, dir.result().status());
            assertTrue(dir.err().contains("is a directory"), dir.err());
        } finally {
            Files.deleteIfExists(file);
        }
        Run spins = run("--wait", "adaptive:99999999999");
        assertEquals(Pipeline.USAGE, spins.result().status());
        assertTrue(spins.err().contains("[1, 2147483647]"), spins.err());
    }
}
