package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.Faults;
import io.cqflux.test.LoopbackPeer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

class CqfluxDataBuffersTest {
    private static final DefaultDataBufferFactory F = DefaultDataBufferFactory.sharedInstance;

    private ApplicationContextRunner runner(LoopbackPeer server, Faults faults, String... more) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=faulty", "cqflux.transport-properties[faulty.id]=" + faults.id(),
                        "cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + server.address().getPort(),
                        "cqflux.buffer-pool.buffers=2", "cqflux.buffer-pool.buffer-size=128")
                .withPropertyValues(more);
    }

    @Test
    void durableWrite_ofAHeapDataBuffer_isCopiedAndLandsAtThePeer_andReadReturnsIt() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                byte[] bytes = "a data buffer's bytes".getBytes(StandardCharsets.UTF_8);
                StepVerifier.create(store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 64, F.wrap(bytes))))
                        .expectComplete().verify(Duration.ofSeconds(10));
                assertThat(server.memory().asSlice(64, bytes.length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                        .isEqualTo(bytes);
                DataBuffer back = store.withConnection(c -> buffers.read(c, c.remoteRegion(0), 64, bytes.length, F))
                        .block(Duration.ofSeconds(10));
                byte[] got = new byte[back.readableByteCount()];
                back.read(got);
                assertThat(got).isEqualTo(bytes);
            });
        }
    }

    @Test
    void durableWrite_ofAComposite_copiesEachPieceIntoOnePooledBuffer_andSignalsOffTheLoop() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                Cqflux cq = ctx.getBean(Cqflux.class);
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                // Netty's join is a composite: its readable bytes are two pieces, never gathered.
                org.springframework.core.io.buffer.NettyDataBufferFactory netty =
                        new org.springframework.core.io.buffer.NettyDataBufferFactory(
                                io.netty.buffer.UnpooledByteBufAllocator.DEFAULT);
                DataBuffer data = netty.join(java.util.List.of(netty.wrap("header|".getBytes(StandardCharsets.UTF_8)),
                        netty.wrap("payload".getBytes(StandardCharsets.UTF_8))));
                int pieces = 0;
                try (DataBuffer.ByteBufferIterator it = data.readableByteBuffers()) {
                    for (; it.hasNext(); it.next()) {
                        pieces++;
                    }
                }
                assertThat(pieces).isEqualTo(2);
                java.util.concurrent.atomic.AtomicReference<String> signalledOn = new java.util.concurrent.atomic.AtomicReference<>();
                StepVerifier.create(store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 16, data))
                                .doOnSuccess(v -> signalledOn.set(Thread.currentThread().getName())))
                        .expectComplete().verify(Duration.ofSeconds(10));
                assertThat(server.memory().asSlice(16, 14).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                        .isEqualTo("header|payload".getBytes(StandardCharsets.UTF_8));
                // Handed to Reactor's parallel scheduler, not left on the connection's loop.
                assertThat(signalledOn.get()).startsWith("parallel-");
                assertThat(cq.loopNames()).doesNotContain(signalledOn.get());
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> cq.buffers().leased() == 0);
                org.springframework.core.io.buffer.DataBufferUtils.release(data);
            });
        }
    }

    @Test
    void operationsSubscribedOnANettyLoop_signalOnThatLoop_notOnParallelNorTheCqfluxLoop() throws Exception {
        io.netty.util.concurrent.DefaultEventExecutor nettyLoop = nonBlockingNettyLoop();
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                Cqflux cq = ctx.getBean(Cqflux.class);
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                store.withConnection(c -> reactor.core.publisher.Mono.just(c)).block(Duration.ofSeconds(10));
                java.util.concurrent.CompletableFuture<Boolean> writeOnLoop = new java.util.concurrent.CompletableFuture<>();
                java.util.concurrent.CompletableFuture<Boolean> readOnLoop = new java.util.concurrent.CompletableFuture<>();
                java.util.concurrent.atomic.AtomicReference<String> readThread = new java.util.concurrent.atomic.AtomicReference<>();
                // As WebFlux on Reactor Netty does: the handler's Mono is subscribed on the request's loop.
                nettyLoop.execute(() -> store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 0,
                                F.wrap("on the loop".getBytes(StandardCharsets.UTF_8))))
                        .subscribe(null, writeOnLoop::completeExceptionally,
                                () -> writeOnLoop.complete(nettyLoop.inEventLoop())));
                assertThat(writeOnLoop.get(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                nettyLoop.execute(() -> store.withConnection(c -> buffers.read(c, c.remoteRegion(0), 0, 11, F))
                        .subscribe(b -> {
                            readThread.set(Thread.currentThread().getName());
                            readOnLoop.complete(nettyLoop.inEventLoop());
                        }, readOnLoop::completeExceptionally));
                assertThat(readOnLoop.get(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                assertThat(cq.loopNames()).doesNotContain(readThread.get());
            });
        } finally {
            nettyLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void callerLoopOrParallel_runsATimerSetOnANettyLoopOnThatLoop_andIsParallelOffAnyLoop() throws Exception {
        assertThat(CqfluxDataBuffers.callerLoopOrParallel()).isSameAs(reactor.core.scheduler.Schedulers.parallel());
        io.netty.util.concurrent.DefaultEventExecutor nettyLoop = nonBlockingNettyLoop();
        try {
            java.util.concurrent.CompletableFuture<Boolean> firedOnLoop = new java.util.concurrent.CompletableFuture<>();
            nettyLoop.execute(() -> reactor.core.publisher.Mono.delay(Duration.ofMillis(20),
                            CqfluxDataBuffers.callerLoopOrParallel())
                    .subscribe(v -> firedOnLoop.complete(nettyLoop.inEventLoop()), firedOnLoop::completeExceptionally));
            assertThat(firedOnLoop.get(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            // A caller that disposes the scheduler must not end Netty's loop.
            nettyLoop.submit(() -> CqfluxDataBuffers.callerLoopOrParallel().dispose()).get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(nettyLoop.isShuttingDown()).isFalse();
            assertThat(nettyLoop.submit(() -> nettyLoop.inEventLoop()).get(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        } finally {
            nettyLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** A Netty loop whose thread is Reactor's {@code NonBlocking}, as Reactor Netty's loops are. */
    private static io.netty.util.concurrent.DefaultEventExecutor nonBlockingNettyLoop() {
        return new io.netty.util.concurrent.DefaultEventExecutor(NonBlockingThread::new);
    }

    private static final class NonBlockingThread extends Thread implements reactor.core.scheduler.NonBlocking {
        NonBlockingThread(Runnable r) {
            super(r, "test-netty-loop");
            setDaemon(true);
        }
    }

    @Test
    void onANettyLoopWhereBlockingIsAllowed_resultsGoToParallel_soABlockThereCannotWaitForItself() throws Exception {
        io.netty.util.concurrent.DefaultEventExecutor plain = new io.netty.util.concurrent.DefaultEventExecutor();
        try {
            assertThat(plain.submit(CqfluxDataBuffers::callerLoopOrParallel).get(10, java.util.concurrent.TimeUnit.SECONDS))
                    .isSameAs(reactor.core.scheduler.Schedulers.parallel());
            // A result handed to the loop that blocks for it would never run; on parallel it does.
            assertThat(plain.submit(() -> reactor.core.publisher.Mono.just("x")
                            .publishOn(CqfluxDataBuffers.callerLoopOrParallel()).block(Duration.ofSeconds(5)))
                    .get(10, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("x");
        } finally {
            plain.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void aTaskForANettyLoopThatHasShutDown_runsOnParallel_insteadOfWaitingForever() throws Exception {
        io.netty.util.concurrent.DefaultEventExecutor nettyLoop = nonBlockingNettyLoop();
        reactor.core.scheduler.Scheduler onLoop = nettyLoop.submit(CqfluxDataBuffers::callerLoopOrParallel)
                .get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(onLoop).isNotSameAs(reactor.core.scheduler.Schedulers.parallel());
        nettyLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).await(10, java.util.concurrent.TimeUnit.SECONDS);
        java.util.concurrent.CompletableFuture<String> ranOn = new java.util.concurrent.CompletableFuture<>();
        onLoop.schedule(() -> ranOn.complete(Thread.currentThread().getName()));
        assertThat(ranOn.get(10, java.util.concurrent.TimeUnit.SECONDS)).startsWith("parallel-");
        // A worker's tasks still run one at a time, in order: on one parallel worker of its own.
        reactor.core.scheduler.Scheduler.Worker worker = onLoop.createWorker();
        java.util.List<String> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CompletableFuture<Void> both = new java.util.concurrent.CompletableFuture<>();
        worker.schedule(() -> ran.add("first " + Thread.currentThread().getName()));
        worker.schedule(() -> {
            ran.add("second " + Thread.currentThread().getName());
            both.complete(null);
        });
        both.get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(ran).hasSize(2);
        assertThat(ran.get(0)).startsWith("first parallel-");
        assertThat(ran.get(1)).isEqualTo("second" + ran.get(0).substring("first".length()));
        // A disposed worker refuses, as Reactor's do, instead of running the task elsewhere.
        worker.dispose();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> worker.schedule(() -> { }))
                .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
    }

    @Test
    void aSchedulerGivenToTheConstructor_isUsedEvenWhenSubscribedOnANettyLoop() throws Exception {
        io.netty.util.concurrent.DefaultEventExecutor nettyLoop = nonBlockingNettyLoop();
        reactor.core.scheduler.Scheduler mine = reactor.core.scheduler.Schedulers.newSingle("mine");
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                CqfluxDataBuffers buffers = new CqfluxDataBuffers(ctx.getBean(Cqflux.class), mine);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                java.util.concurrent.CompletableFuture<String> signalledOn = new java.util.concurrent.CompletableFuture<>();
                nettyLoop.execute(() -> store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 0,
                                F.wrap("elsewhere".getBytes(StandardCharsets.UTF_8))))
                        .subscribe(null, signalledOn::completeExceptionally,
                                () -> signalledOn.complete(Thread.currentThread().getName())));
                assertThat(signalledOn.get(10, java.util.concurrent.TimeUnit.SECONDS)).startsWith("mine-");
            });
        } finally {
            mine.dispose();
            nettyLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    @Test
    void write_neverUsesADataBuffersByteBufferViewAfterItsIteratorClosed() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                byte[] bytes = "bytes seen only while iterated".getBytes(StandardCharsets.UTF_8);
                DataBuffer data = viewsEndWithIteration(F.wrap(bytes));
                StepVerifier.create(store.withConnection(c -> buffers.write(c, c.remoteRegion(0), 32, data)))
                        .expectComplete().verify(Duration.ofSeconds(10));
                assertThat(server.memory().asSlice(32, bytes.length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                        .isEqualTo(bytes);
            });
        }
    }

    /**
     * {@code delegate}, except that closing a {@link DataBuffer#readableByteBuffers()} iterator
     * empties the views it handed out, as an implementation that recycles them may
     * (Spring: the views are valid only during the iteration).
     */
    private static DataBuffer viewsEndWithIteration(DataBuffer delegate) {
        return (DataBuffer) java.lang.reflect.Proxy.newProxyInstance(DataBuffer.class.getClassLoader(),
                new Class<?>[] {DataBuffer.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("readableByteBuffers")) {
                        try {
                            return method.invoke(delegate, args);
                        } catch (java.lang.reflect.InvocationTargetException e) {
                            throw e.getCause();
                        }
                    }
                    DataBuffer.ByteBufferIterator it = delegate.readableByteBuffers();
                    java.util.List<ByteBuffer> handed = new java.util.ArrayList<>();
                    return new DataBuffer.ByteBufferIterator() {
                        @Override
                        public boolean hasNext() {
                            return it.hasNext();
                        }

                        @Override
                        public ByteBuffer next() {
                            ByteBuffer b = it.next();
                            handed.add(b);
                            return b;
                        }

                        @Override
                        public void close() {
                            handed.forEach(b -> b.position(b.limit()));
                            it.close();
                        }
                    };
                });
    }

    @Test
    void dataBufferLargerThanAPooledBuffer_failsNamingTheSize() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, Faults.create()).run(ctx -> {
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                StepVerifier.create(ctx.getBean(CqfluxPeers.class).get("store")
                                .withConnection(c -> buffers.write(c, c.remoteRegion(0), 0, F.wrap(new byte[129]))))
                        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalArgumentException.class)
                                .hasMessageContaining("129").hasMessageContaining("buffer size 128"))
                        .verify(Duration.ofSeconds(10));
            });
        }
    }

    @Test
    void dataBufferInsideADeclaredRegion_isPostedInPlace() {
        Faults faults = Faults.create();
        try (LoopbackPeer server = CqfluxTest.loopback().start(); Arena arena = Arena.ofShared()) {
            runner(server, faults, "cqflux.shutdown-timeout=1s").run(ctx -> {
                Cqflux cq = ctx.getBean(Cqflux.class);
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                MemorySegment mem = arena.allocate(4096, 64);
                Region region = cq.register(mem, RegionAccess.WRITE_SRC);
                buffers.zeroCopy(region);
                ByteBuffer view = mem.asSlice(1024, 100).asByteBuffer();
                // The flush never completes: the operation stays in flight until the instance closes.
                faults.on(Opcode.FLUSH).once().hang();
                Disposable d = ctx.getBean(CqfluxPeers.class).get("store")
                        .withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 0, F.wrap(view)))
                        .subscribe();
                // The operation holds the declared region itself, and no pooled buffer.
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> region.inFlight() > 0);
                assertThat(cq.buffers().leased()).isZero();
                d.dispose();
            });
        }
    }

    @Test
    void cancelledWrite_keepsItsPooledBufferUntilTheNicIsDone_andAWaiterIsServedOnlyThen() {
        Faults faults = Faults.create();
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner(server, faults).run(ctx -> {
                Cqflux cq = ctx.getBean(Cqflux.class);
                CqfluxDataBuffers buffers = ctx.getBean(CqfluxDataBuffers.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                // Late by 3 s: a window no scheduling hiccup of a loaded build machine closes before the checks.
                faults.on(Opcode.FLUSH).delay(Duration.ofSeconds(3));
                // Both pooled buffers taken by writes whose subscribers leave once they are posted.
                for (int i = 0; i < 2; i++) {
                    // The credits held before this write: a durable write holds its flush's credit
                    // until the (delayed) flush completes, so the count only grows here.
                    int creditsBefore = store.inFlight();
                    Disposable d = store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 0,
                            F.wrap(new byte[8]))).subscribe();
                    int held = i + 1;
                    // Leased is not enough: the buffer is leased before the loop posts the write, and
                    // an operation cancelled before it is posted gives its buffer back at once. Cancel
                    // only once the write holds send credits, i.e. is at the NIC (as CqfluxLifecycleTest).
                    Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                            .until(() -> cq.buffers().leased() == held && store.inFlight() > creditsBefore);
                    d.dispose();
                }
                assertThat(cq.buffers().leased()).isEqualTo(2); // cancelled, still at the NIC
                faults.clear();
                StepVerifier.create(store.withConnection(c -> buffers.durableWrite(c, c.remoteRegion(0), 0,
                                F.wrap(new byte[8]))))
                        .expectComplete().verify(Duration.ofSeconds(10));
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> cq.buffers().leased() == 0);
            });
        }
    }
}
