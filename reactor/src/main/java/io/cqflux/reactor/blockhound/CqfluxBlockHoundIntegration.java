package io.cqflux.reactor.blockhound;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;
import reactor.core.scheduler.NonBlocking;

/**
 * Tells BlockHound what cqflux's event loops are: non-blocking threads (they are Reactor
 * {@link NonBlocking} threads, which Reactor's own integration also declares, so a blocking call
 * in subscriber code that runs on a loop — {@code Thread.sleep}, blocking I/O, {@code block()} —
 * fails with BlockHound's {@code BlockingOperationError}), and the one kind of blocking call the
 * library itself makes there: writing a log record (the blocked-loop warning, a lost connection's
 * WARN), which a console or file handler does synchronously, and its spin-wait hint
 * ({@code Thread.onSpinWait}, which BlockHound counts as blocking; without this a busy-polling
 * loop would die under BlockHound and a closing loop would leak its fds).
 *
 * <p>Found by BlockHound's {@code ServiceLoader} ({@code BlockHound.install()}): on the class path
 * through {@code META-INF/services}, on the module path through the module's {@code provides}
 * (the application's module {@code requires reactor.blockhound}); or pass it yourself,
 * {@code BlockHound.install(new CqfluxBlockHoundIntegration())}. cqflux-reactor needs no
 * BlockHound otherwise (a {@code requires static} dependency). On JDK 13 and newer
 * BlockHound needs the JVM flag {@code -XX:+AllowRedefinitionToAddDeleteMethods}.
 */
public final class CqfluxBlockHoundIntegration implements BlockHoundIntegration {

    /** For {@code ServiceLoader}. */
    public CqfluxBlockHoundIntegration() {
    }

    /**
     * Declares the loop threads non-blocking and allows log writes.
     *
     * @param builder BlockHound's builder
     */
    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.nonBlockingThreadPredicate(current -> current.or(t -> t instanceof NonBlocking));
        // java.util.logging backs System.Logger (the event loop) and Reactor's Loggers when no
        // SLF4J is present: its handlers write synchronously. A rare WARN is accepted; without
        // this, BlockHound's error would be thrown from inside the connection's end.
        // The loop's spin-wait hint (busy-poll rounds, the task queue's retry, the poller's
        // close): a CPU pause, not a blocking call; BlockHound counts Thread.onSpinWait as one.
        builder.allowBlockingCallsInside("io.cqflux.epoll.loop.SpinWait", "pause");
        // A fabric/tcp listener's close joins its request reader's thread (a bounded wait). A
        // server runs it on the instance's close thread; only where that thread takes nothing any
        // more (the instance's last steps), here, after the loop's end.
        builder.allowBlockingCallsInside("io.cqflux.reactor.internal.server.ServerCore", "closeNatively");
        builder.allowBlockingCallsInside("java.util.logging.Logger", "log");
        builder.allowBlockingCallsInside("java.util.logging.Logger", "logp");
        builder.allowBlockingCallsInside("reactor.util.Loggers$ConsoleLogger", "warn");
        builder.allowBlockingCallsInside("reactor.util.Loggers$ConsoleLogger", "error");
        builder.allowBlockingCallsInside("reactor.util.Loggers$ConsoleLogger", "info");
    }
}
