package io.cqflux.epoll.loop;

/**
 * The loop's one busy-wait hint, in a method of its own so that tools can tell it apart: a
 * bounded spin ({@link Thread#onSpinWait()}: a CPU pause) is not a blocking call, but BlockHound
 * counts {@code onSpinWait} as one on a non-blocking thread, and its error thrown from the
 * loop's spin, the task queue's producer retry or the poller's close would end the loop or leak
 * its fds. cqflux-reactor's BlockHound integration allows this method, and only it.
 */
final class SpinWait {
    private SpinWait() {
    }

    /** One spin-wait hint. */
    static void pause() {
        Thread.onSpinWait();
    }
}
