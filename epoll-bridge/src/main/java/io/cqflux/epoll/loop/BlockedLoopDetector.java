package io.cqflux.epoll.loop;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Blocked-loop detection for one {@link EventLoop}: measures each unit of work that may run
 * subscriber code and reports one that holds the loop thread past the threshold.
 *
 * <p>Thread safety: loop thread only, not thread-safe.
 */
final class BlockedLoopDetector {

    /*
     * Why: subscriber code runs on this thread when a sink completes (a Mono's onComplete, a
     * Flux's onNext); a callback that blocks for 500 ms stalls every other connection on the loop
     * for 500 ms, and nothing else tells. What: the loop reads the clock once per unit of work
     * that may run user code — one task, one native poll that delivered completions (the whole
     * batch: one clock read per batch, not per completion), one readiness handler — plus once per
     * turn that follows a turn without a judged unit, and once after each sleep (so that
     * spinning or sleeping never counts; after a judged unit only the turn's own few
     * instructions come before the next unit, so its clock value serves). A unit longer
     * than the threshold is counted in LoopStats.blocked and logged at WARN at most once per
     * BLOCKED_LOG_INTERVAL (with the number not logged since). Off (threshold 0): one final-field
     * check per unit, no clock read. The reactive layer names what it runs with
     * noteOperation(label): one plain store, no clock read; the warning names the last one of
     * the unit (the culprit in a batch of one; in a larger batch, the last completed).
     */

    private final Thread thread;
    /** {@link LoopConfig#blockedThreshold()} in nanoseconds; 0: off. */
    private final long blockedThresholdNanos;
    private final LoopCounters counters;
    /** {@code System.nanoTime()} at the end of the last measured unit (or the last wake-up). */
    private long unitStart;
    /**
     * Where the current unit began: {@link #unitStart} without the restarts of a part
     * ({@link #endPart}), so that the longest unit is what the loop's other sources waited.
     */
    private long unitBegan;
    /** The last turn judged a unit: {@link #unitStart} was read after its work. */
    private boolean clockFresh;
    /** What the reactive layer said it is running (an operation kind), or {@code null}. */
    private String unitLabel;
    /** The unit is the library's own set-up work ({@link #noteSetup}), not subscriber code. */
    private boolean unitIsSetup;
    /** When the last blocked-loop warning was logged, and how many were not logged since. */
    private long lastBlockedLog;
    private long blockedNotLogged;
    private boolean blockedLogged;

    /**
     * @param thread the loop thread (named in the warnings)
     * @param blockedThresholdNanos the threshold; 0 turns the detection off
     * @param counters where a blocked unit is counted
     */
    BlockedLoopDetector(Thread thread, long blockedThresholdNanos, LoopCounters counters) {
        this.thread = thread;
        this.blockedThresholdNanos = blockedThresholdNanos;
        this.counters = counters;
    }

    /** {@return the loop's last clock reading (see EventLoop.unitClock)} */
    long unitStart() {
        return unitStart;
    }

    /**
     * A loop turn begins: one clock read, so that a spinning turn is not a blocked unit; unless
     * the last turn judged a unit (its judge read the clock after all the work that could be
     * long, and only the turn's own few instructions came since): a busy loop that does one
     * operation per turn reads the clock once per operation, not twice.
     */
    void turnStarted() {
        if (!clockFresh) {
            unitStart = System.nanoTime();
            unitBegan = unitStart;
        }
        clockFresh = false;
    }

    /** The clock restarts: what came before (a sleep, a shutdown's tasks) is no unit's time. */
    void restart() {
        unitStart = System.nanoTime();
        unitBegan = unitStart;
    }


    /** The least time between two blocked-loop warnings of one loop: 10 s. */
    static final Duration LOG_INTERVAL = Duration.ofSeconds(10);

    static final int UNIT_TASK = 0;
    static final int UNIT_BATCH = 1;
    static final int UNIT_HANDLER = 2;
    /** Subscriber code within a unit of the library's own work (see endPart). */
    static final int UNIT_PART = 3;

    /**
     * Names what the loop is about to run for the blocked-loop report, e.g. the kind of the
     * operation whose subscriber is about to be signalled ({@code cqflux.read}); one plain store.
     * Loop thread only (elsewhere it does nothing).
     *
     * @param label a constant string (kept, not copied), or {@code null}
     */
    void noteOperation(String label) {
        if (unitIsSetup) {
            endPart(); // the set-up before it is not the subscriber code's time
        }
        unitLabel = label;
        unitIsSetup = false; // subscriber code runs in this unit: it is reported as such
    }

    /**
     * Names the library's own set-up work about to run (a connect or a bind: native calls and, the
     * first time in a JVM, linking the native bindings, which can take a few hundred ms). A unit
     * so marked that exceeds the threshold is logged at DEBUG and not counted in
     * {@link LoopStats#blocked()}, which is about subscriber code and tasks: a WARN at every
     * application start would teach users to ignore the warning. A later
     * {@link #noteOperation} in the same unit (subscriber code about to run) ends the set-up part
     * (judged as above) and measures what follows as an ordinary unit; named subscriber code
     * before this call is judged on its own likewise. Loop thread only.
     *
     * @param label a constant string, e.g. {@code cqflux.connect}
     */
    void noteSetup(String label) {
        if (!unitIsSetup && unitLabel != null) {
            endPart(); // named subscriber code ran before it in this unit: judged alone
        }
        unitLabel = label;
        unitIsSetup = true;
    }

    /*
     * A unit can mix the library's set-up with subscriber code (a bind task that completes its
     * sink, an accept whose connection is established and handed to the handler, a connection's
     * end that fails its queued operations and then closes the native connection). Measured
     * whole, the set-up's time would be reported as the subscriber's (under load, accept
     * handling of 150 ms named "cqflux.established"), or the subscriber's hidden as set-up. So
     * where the kind changes the part so far is judged on its own and the clock restarts: one
     * clock read per change, which happens only in these rare units, never in a batch.
     */

    /**
     * Ends the part of the current unit run so far (set-up or named subscriber code, as
     * {@code unitIsSetup} says) where the kind changes, and judges it alone.
     */
    private void endPart() {
        if (blockedThresholdNanos != 0) {
            judge(UNIT_PART, null, 0, unitLabel, unitIsSetup);
        }
    }

    /**
     * Ends a measured unit: one clock read; a unit over the threshold is counted and maybe logged.
     *
     * @param unit what kind of unit
     * @param what the task, or the source
     * @param n completions in a batch
     */
    void endUnit(int unit, Object what, int n) {
        String label = unitLabel;
        unitLabel = null;
        boolean setup = unitIsSetup;
        unitIsSetup = false;
        long end = judge(unit, what, n, label, setup);
        // The whole unit, its parts together and set-up included: how long every other source
        // of the loop waited (LoopStats.longestUnitNanos). One compare; the clock was read above.
        counters.unit(end - unitBegan);
        unitBegan = unitStart;
    }

    /**
     * Reads the clock once and judges the time since {@code unitStart}: over the threshold,
     * library set-up is logged at DEBUG, anything else is a blocked loop (counted, maybe logged);
     * the clock restarts for what follows.
     *
     * @return the clock reading that ended the unit (before any report)
     */
    private long judge(int unit, Object what, int n, String label, boolean setup) {
        long now = System.nanoTime();
        long held = now - unitStart;
        unitStart = now;
        clockFresh = true;
        if (held > blockedThresholdNanos) {
            if (setup) {
                EventLoop.LOG.log(System.Logger.Level.DEBUG, "event loop thread {0}: {1} held it for {2} ms",
                        thread.getName(), label, TimeUnit.NANOSECONDS.toMillis(held));
                return now;
            }
            blocked(held, unit, what, n, label);
            unitStart = System.nanoTime(); // the report itself is not the next unit's time
        }
        return now;
    }

    /**
     * What the caller the warning names can do: subscriber code hops off the loop with
     * {@code publishOn} (blocking work to the scheduler made for it, long CPU work to the parallel
     * one, a WebFlux response path likewise before it builds the response); a task or readiness
     * handler is not subscriber code, and no {@code publishOn} reaches it.
     */
    private static String advice(int unit) {
        return switch (unit) {
            case UNIT_BATCH, UNIT_PART -> "Hop off the loop before that code: publishOn(Schedulers.boundedElastic())"
                    + " if it blocks (I/O, locks, block()), publishOn(Schedulers.parallel()) if it only computes";
            case UNIT_HANDLER -> "A readiness handler must not block: it is the library's or the registrant's own code";
            default -> "A task given to the loop must not block: run blocking work on Schedulers.boundedElastic()"
                    + " and hand only its result to the loop";
        };
    }

    private void blocked(long heldNanos, int unit, Object what, int n, String label) {
        counters.blocked();
        long now = System.nanoTime();
        if (blockedLogged && now - lastBlockedLog < LOG_INTERVAL.toNanos()) {
            blockedNotLogged++;
            return;
        }
        blockedLogged = true;
        lastBlockedLog = now;
        long notLogged = blockedNotLogged;
        blockedNotLogged = 0;
        String unitText = switch (unit) {
            case UNIT_BATCH -> "a batch of " + n + " completion(s) from " + what + " (subscriber code run on the loop)";
            case UNIT_HANDLER -> "the readiness handler of " + what;
            case UNIT_PART -> "subscriber code run within the library's own work";
            default -> "the task " + what;
        };
        EventLoop.LOG.log(System.Logger.Level.WARNING, "event loop thread " + thread.getName() + " was blocked for "
                + TimeUnit.NANOSECONDS.toMillis(heldNanos) + " ms (threshold "
                + TimeUnit.NANOSECONDS.toMillis(blockedThresholdNanos) + " ms) by " + unitText
                + (label != null ? "; operation: " + label : "")
                + "; every connection on this loop waited meanwhile. " + advice(unit)
                + (notLogged > 0 ? " [" + notLogged + " more not logged since the last report]" : ""));
    }
}
