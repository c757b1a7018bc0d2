package io.cqflux.spring.boot;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The Netty event loop the calling thread runs, as a {@link Scheduler}: where WebFlux on Reactor
 * Netty subscribes a handler's Mono, and where that request's response is written. Handing an
 * RDMA result there costs one wake-up of that loop; handing it to {@code Schedulers.parallel()}
 * costs a wake-up of a parallel worker and then, when the worker writes the response, another of
 * the Netty loop (Netty runs a channel's writes from other threads as tasks on its loop). A timer
 * set there from the loop itself (a request's timeout) costs no wake-up at all, where one on
 * {@code Schedulers.parallel()} wakes a worker whenever it becomes that worker's earliest.
 *
 * <p>Only a loop whose threads are Reactor's {@code NonBlocking} (Reactor Netty's are) counts: on
 * another Netty loop (a plain {@code NioEventLoop}, a client library's) Reactor allows
 * {@code block()}, and a result handed to the very loop that blocks for it would never run.
 *
 * <p>A loop that has shut down takes nothing more: what is handed to it from then on goes to
 * {@code Schedulers.parallel()} instead. A timer it had already taken when it shut down is
 * Netty's to run or cancel.
 *
 * <p>Netty publishes the current thread's event executor only through
 * {@code io.netty.util.internal.ThreadExecutorMap#currentExecutor()}, set by its single-thread
 * executors for their thread: looked up once, reflectively, so that the starter needs no Netty at
 * all, and where it is missing or changed every caller counts as off any loop.
 */
final class CallerLoop {
    private static final MethodHandle CURRENT = currentExecutorHandle();
    /** The scheduler of each Netty loop thread's own executor, which never changes for that thread. */
    private static final ThreadLocal<LoopScheduler> SCHEDULER = new ThreadLocal<>();

    private CallerLoop() {
    }

    /** {@return the calling thread's Netty event loop as a scheduler, or {@code orElse} off any} */
    static Scheduler orElse(Scheduler orElse) {
        Executor loop = current();
        if (loop == null || !Schedulers.isInNonBlockingThread()) {
            return orElse;
        }
        LoopScheduler s = SCHEDULER.get();
        if (s == null || s.loop != loop) {
            // Netty's event executors are scheduled executors: the scheduler takes timers too.
            s = new LoopScheduler(loop, new Undisposable(loop, loop instanceof ScheduledExecutorService ses
                    ? Schedulers.fromExecutorService(ses, "netty-loop") : Schedulers.fromExecutor(loop)));
            SCHEDULER.set(s);
        }
        return s.scheduler;
    }

    private static Executor current() {
        if (CURRENT == null) {
            return null;
        }
        try {
            return (Executor) CURRENT.invokeExact();
        } catch (Throwable e) {
            return null;
        }
    }

    private static MethodHandle currentExecutorHandle() {
        try {
            Class<?> map = Class.forName("io.netty.util.internal.ThreadExecutorMap", false,
                    CallerLoop.class.getClassLoader());
            Class<?> executor = Class.forName("io.netty.util.concurrent.EventExecutor", false,
                    CallerLoop.class.getClassLoader());
            return MethodHandles.publicLookup().findStatic(map, "currentExecutor", MethodType.methodType(executor))
                    .asType(MethodType.methodType(Executor.class));
        } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
            return null;
        }
    }

    private record LoopScheduler(Executor loop, Scheduler scheduler) {
    }

    /**
     * A scheduler whose dispose does nothing: disposing a scheduler made from an executor service
     * shuts the service down, and this one is Netty's loop, which only Netty may end. A task the
     * loop no longer takes (it shut down, or refuses) goes to {@code Schedulers.parallel()}.
     */
    private record Undisposable(Executor loop, Scheduler delegate) implements Scheduler {
        /** Schedules on the loop, or on parallel where the loop has shut down or refuses the task. */
        private Disposable onLoopOrParallel(Supplier<Disposable> onLoop, Supplier<Disposable> onParallel) {
            if (!(loop instanceof ExecutorService es && es.isShutdown())) {
                try {
                    return onLoop.get();
                } catch (RejectedExecutionException e) {
                    // the loop is ending: on parallel
                }
            }
            return onParallel.get();
        }

        @Override
        public Disposable schedule(Runnable task) {
            return onLoopOrParallel(() -> delegate.schedule(task), () -> Schedulers.parallel().schedule(task));
        }

        @Override
        public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
            return onLoopOrParallel(() -> delegate.schedule(task, delay, unit),
                    () -> Schedulers.parallel().schedule(task, delay, unit));
        }

        @Override
        public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
            return onLoopOrParallel(() -> delegate.schedulePeriodically(task, initialDelay, period, unit),
                    () -> Schedulers.parallel().schedulePeriodically(task, initialDelay, period, unit));
        }

        @Override
        public Worker createWorker() {
            return new LoopWorker(delegate.createWorker());
        }

        /**
         * The loop's worker; once the loop no longer takes its tasks, one parallel worker of its
         * own takes them, one at a time, in order (a task the loop took just before its shutdown
         * may still run there meanwhile: Netty runs what it accepted before it ends). A task for a
         * worker that was disposed is refused, as Reactor's workers refuse it, never run elsewhere.
         */
        private final class LoopWorker implements Worker {
            private final Worker onLoop;
            private Worker fallback;
            private boolean disposed;

            LoopWorker(Worker onLoop) {
                this.onLoop = onLoop;
            }

            private synchronized Worker fallback() {
                if (disposed) {
                    throw reactor.core.Exceptions.failWithRejected();
                }
                if (fallback == null) {
                    fallback = Schedulers.parallel().createWorker();
                }
                return fallback;
            }

            private Disposable schedule(Supplier<Disposable> here, java.util.function.Function<Worker, Disposable> there) {
                if (onLoop.isDisposed()) {
                    throw reactor.core.Exceptions.failWithRejected();
                }
                return onLoopOrParallel(here, () -> there.apply(fallback()));
            }

            @Override
            public Disposable schedule(Runnable task) {
                return schedule(() -> onLoop.schedule(task), w -> w.schedule(task));
            }

            @Override
            public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
                return schedule(() -> onLoop.schedule(task, delay, unit), w -> w.schedule(task, delay, unit));
            }

            @Override
            public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
                return schedule(() -> onLoop.schedulePeriodically(task, initialDelay, period, unit),
                        w -> w.schedulePeriodically(task, initialDelay, period, unit));
            }

            @Override
            public void dispose() {
                onLoop.dispose();
                synchronized (this) {
                    disposed = true;
                    if (fallback != null) {
                        fallback.dispose();
                    }
                }
            }

            @Override
            public boolean isDisposed() {
                return onLoop.isDisposed();
            }
        }
    }
}
