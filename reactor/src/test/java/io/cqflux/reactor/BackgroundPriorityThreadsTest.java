package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * With {@code backgroundPriority(true)} an instance's set-up and close threads run at a lower CPU
 * priority than its loops (the set-up thread's "Priority" paragraph), and nothing else does: a
 * thread inherits the nice value of the thread that starts it (sched(7)), so a library thread or a
 * Reactor scheduler's worker first started from a set-up task would serve latency work at
 * background priority for the rest of its life. The set-up paths are walked (connects, accepts, a
 * refused connect, a connect given up on during its set-up, closes, the instances' shutdown),
 * then every thread of the JVM is read from /proc (proc(5): /proc/self/task/TID/comm and stat
 * field 19). A native thread a provider starts from a set-up thread would carry that thread's
 * name too, so the threads named so are counted against the Java threads of those names. Without
 * the option the two threads keep the loops' priority, and beside BUSY_POLL loops it is refused.
 */
class BackgroundPriorityThreadsTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final Duration T = Duration.ofSeconds(30);
    /** The most a nice value can be (setpriority(2)). */
    private static final int MAX_NICE = 19;

    /** The prefix of the instances that ask for background priority here. */
    private static final String LOWERED = "bplow";

    /** A background thread of this test's lowered instances: {@code bplow-?-setup} or {@code -close}. */
    private static boolean background(String comm) {
        return comm.contains(" " + LOWERED + "-") && (comm.endsWith("-setup") || comm.endsWith("-close"));
    }

    /** {@return the nice value of every thread of this process, by "tid name"} */
    private static Map<String, Integer> niceByThread() throws IOException {
        Map<String, Integer> out = new TreeMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String comm;
                String stat;
                try {
                    comm = new String(Files.readAllBytes(task.resolve("comm")), StandardCharsets.ISO_8859_1).strip();
                    stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    // The thread ended while we listed: its directory is gone (NoSuchFileException),
                    // or it was still there and its files answer ESRCH ("No such process").
                    if (e instanceof java.nio.file.NoSuchFileException || "No such process".equals(e.getMessage())) {
                        continue;
                    }
                    throw e;
                }
                String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                out.put(task.getFileName() + " " + comm, Integer.parseInt(after[19 - 3]));
            }
        }
        return out;
    }

    /** {@return the live Java threads named like a lowered instance's set-up or close thread} */
    private static long javaBackgroundThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> background("0 " + t.getName())).count();
    }

    /** {@return how many of {@code nice}'s threads are named like a lowered instance's set-up or close thread} */
    private static long countBackground(Map<String, Integer> nice) {
        return nice.keySet().stream().filter(BackgroundPriorityThreadsTest::background).count();
    }

    /** Credentials that note the nice value of the thread that asks for them (the set-up thread). */
    private static java.util.function.Supplier<byte[]> notingNice(AtomicReference<Integer> nice) {
        return () -> {
            try {
                nice.set(niceOfCallingThread());
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return new byte[] {1};
        };
    }

    private static int niceOfCallingThread() throws IOException {
        String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19 - 3]);
    }

    @Test
    void withBackgroundPriority_setupAndCloseThreadsRunLowered_andNoOtherThreadInheritsIt() throws Exception {
        int base = niceOfCallingThread();
        int lowered = Math.min(MAX_NICE, base + io.cqflux.epoll.loop.BackgroundPriority.INCREMENT);
        Map<String, Integer> seenBackground = new TreeMap<>();
        AtomicReference<Integer> niceInSetup = new AtomicReference<>();
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                     .backgroundPriority(true).threadNamePrefix(LOWERED + "-s").build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                     .backgroundPriority(true).threadNamePrefix(LOWERED + "-c").build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            List<RdmaConnection> made = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                RdmaConnection c = client.connect(s.address(), ConnectOptions.defaults().credentials(notingNice(niceInSetup))).block(T);
                assertNotNull(c);
                c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
                made.add(c);
            }
            assertEquals(lowered, niceInSetup.get(), "the credentials ran on the lowered set-up thread");
            // A connect refused by the peer's host (nothing listens there): its failure path.
            int closedPort;
            try (ServerSocket free = new ServerSocket(0, 1, LO)) {
                closedPort = free.getLocalPort();
            }
            Throwable refused = assertThrows(RuntimeException.class,
                    () -> client.connect(new InetSocketAddress(LO, closedPort)).block(T));
            assertNotNull(refused.getMessage());
            // A connect given up on during its set-up: the queue goes on on a fresh worker.
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Disposable given = client.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SetupThreadTest.heldCredentials(entered, release, new AtomicReference<>())))
                    .subscribe(c -> c.dispose(), e -> { });
            assertTrue(entered.await(T.toSeconds(), TimeUnit.SECONDS), "the held connect's set-up began");
            given.dispose();
            RdmaConnection after = client.connect(s.address()).block(T); // on the fresh worker
            assertNotNull(after);
            release.countDown();
            made.add(after);
            for (RdmaConnection c : made) {
                c.disposeNow(T);
            }
            // The given-up task's worker ends after it (SetupThread), so the two views are compared
            // once they agree or the bound passes: a native thread named after a set-up thread
            // keeps them apart for good.
            // The Java count is taken before and after /proc's, so that a Java thread starting in
            // between cannot make up for a native one.
            long javaBefore = javaBackgroundThreads();
            Map<String, Integer> during = niceByThread();
            long javaBackground = javaBackgroundThreads();
            long deadline = System.nanoTime() + T.toNanos() / 3;
            while ((javaBefore != javaBackground || javaBackground != countBackground(during))
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
                javaBefore = javaBackgroundThreads();
                during = niceByThread();
                javaBackground = javaBackgroundThreads();
            }
            assertEquals(javaBackground, countBackground(during), "threads named like a set-up or close thread that"
                    + " are no Java thread of that name (a native thread started from one): " + during);
            during.forEach((thread, nice) -> {
                if (background(thread)) {
                    seenBackground.put(thread, nice);
                }
            });
            assertOnlyBackgroundLowered(during, base, lowered);
        }
        assertTrue(seenBackground.keySet().stream().anyMatch(t -> t.endsWith("-setup")),
                "a set-up thread was alive to look at: " + seenBackground);
        assertTrue(seenBackground.keySet().stream().anyMatch(t -> t.endsWith("-close")),
                "a close thread was alive to look at: " + seenBackground);
        seenBackground.forEach((thread, nice) -> assertEquals(lowered, nice, thread + " runs lowered"));
        assertOnlyBackgroundLowered(niceByThread(), base, lowered);
    }

    @Test
    void byDefault_setupAndCloseThreadsKeepTheLoopsPriority() throws Exception {
        int base = niceOfCallingThread();
        AtomicReference<Integer> niceInSetup = new AtomicReference<>();
        Map<String, Integer> closeThreads = new TreeMap<>();
        try (Arena arena = Arena.ofShared();
             Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                     .threadNamePrefix("bpdef-s").build();
             Cqflux client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                     .threadNamePrefix("bpdef-c").build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
            RdmaServer s = server.bind(new InetSocketAddress(LO, 0), exposed).block(T);
            assertNotNull(s);
            RdmaConnection c = client.connect(s.address(), ConnectOptions.defaults().credentials(notingNice(niceInSetup))).block(T);
            assertNotNull(c);
            c.disposeNow(T);
            niceByThread().forEach((thread, nice) -> {
                if (thread.endsWith(" bpdef-c-close") || thread.endsWith(" bpdef-s-close")) {
                    closeThreads.put(thread, nice);
                }
            });
        }
        assertEquals(base, niceInSetup.get(), "the set-up thread keeps the loops' priority");
        assertTrue(!closeThreads.isEmpty(), "a close thread was alive to look at");
        closeThreads.forEach((thread, nice) -> assertEquals(base, nice, thread + " keeps the loops' priority"));
        // Nothing of the JVM runs lowered but the other case's instances (if any of their threads
        // is still on its way out).
        assertOnlyBackgroundLowered(niceByThread(), base,
                Math.min(MAX_NICE, base + io.cqflux.epoll.loop.BackgroundPriority.INCREMENT));
    }

    @Test
    void besideBusyPollLoops_backgroundPriorityIsRefused_namingWhy() {
        Cqflux.Builder b = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(LO).loops(1)
                .waitStrategy(io.cqflux.epoll.WaitStrategy.BUSY_POLL).backgroundPriority(true);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertEquals("backgroundPriority(true) beside BUSY_POLL loops: they never sleep, so set-ups and closes would"
                + " get about 1.5 % of a core for the instance's life; use BLOCKING or adaptive loops, or leave it"
                + " off", e.getMessage());
    }

    /**
     * Every thread but the lowered instances' background ones runs at {@code base}: the loops, the
     * library's timer and arena closer (started by {@code build()} on the builder's thread), the
     * schedulers' workers.
     */
    private static void assertOnlyBackgroundLowered(Map<String, Integer> nice, int base, int lowered) {
        List<String> wrong = new ArrayList<>();
        nice.forEach((thread, n) -> {
            boolean ok = background(thread) ? n == lowered : n == base;
            if (!ok) {
                wrong.add(thread + " at nice " + n);
            }
        });
        assertEquals(List.of(), wrong, "threads at the wrong priority (base " + base + ", background " + lowered
                + "); all: " + nice);
    }
}
