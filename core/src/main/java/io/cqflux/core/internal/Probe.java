package io.cqflux.core.internal;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLongArray;

/** SCRATCH: per-phase thread CPU time on one named thread (-Dcqflux.probe=thread-name). */
public final class Probe {
    public static final String[] NAMES = {"listen", "adopt", "adopt.ctor", "adopt.timer", "adopt.recv", "start",
            "start.reg", "start.poll", "established", "est.hello", "est.establish", "est.callback", "est.announce",
            "sharedEq", "turn", "tasks", "io", "sleep", "prepare", "start.intake", "adopt.closed", "l.next", "l.serve", "eq.read", "deadl.start", "l.admit", "l.nextNull", "eq.readNull", "lst.eqread", "lst.request"};
    private static final String THREAD = System.getProperty("cqflux.probe");
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final AtomicLongArray SUM = new AtomicLongArray(NAMES.length);
    private static final AtomicLongArray N = new AtomicLongArray(NAMES.length);

    static {
        if (THREAD != null) {
            Runtime.getRuntime().addShutdownHook(new Thread(Probe::dump));
        }
    }

    private Probe() {
    }

    public static long t() {
        if (THREAD == null || !Thread.currentThread().getName().equals(THREAD)) {
            return 0;
        }
        return MX.getCurrentThreadCpuTime();
    }

    public static void add(int phase, long t0) {
        if (t0 == 0) {
            return;
        }
        SUM.addAndGet(phase, MX.getCurrentThreadCpuTime() - t0);
        N.incrementAndGet(phase);
    }

    public static void dump() {
        StringBuilder b = new StringBuilder("PROBE " + THREAD + "\n");
        for (int i = 0; i < NAMES.length; i++) {
            long n = N.get(i);
            if (n > 0) {
                b.append(String.format("PROBE %-14s n=%8d total_ms=%9.2f mean_us=%8.2f%n", NAMES[i], n,
                        SUM.get(i) / 1e6, SUM.get(i) / 1e3 / n));
            }
        }
        System.err.print(b);
    }
}
