package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.spring.boot.CqfluxLifecycle;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.Ordered;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The service's context closed ({@code server.shutdown=graceful}, as the sample ships) while 32
 * keep-alive HTTP/1.1 clients keep posting durable writes to a remote storage peer, over the real
 * fabric/tcp transport on loopback. Every attempt carries its number in a header, so what each
 * client observed can be set beside what the service saw:
 *
 * <ul>
 * <li>every request the service received (its first filter saw it) is answered: 201, or a 503
 *     saying the service is shutting down, with {@code Connection: close}; a client error (refused
 *     connection, connection closed before an answer) is allowed only for a request the service
 *     never received;
 * <li>every request that reached {@link RecordStore} is answered, and every 201's record is at
 *     the peer (the last 201's bytes, or those of a later attempt that reached the store);
 * <li>nothing reaches {@link RecordStore} once cqflux's stop has begun (the drain and the close
 *     of the peers come after it), so no request is answered "peer pool ... is disposed".
 * </ul>
 *
 * The client runs on its own Reactor Netty loops and pool, with retries off: the service's
 * context disposes the global ones when it closes, which would cut the client's connections for
 * a reason of the test's own.
 */
class GracefulShutdownUnderLoadTest {
    static final int SLOT = 1024;
    static final int CLIENTS = 32;
    static final int ROUNDS = 3;
    static final String ATTEMPT = "X-Probe-Attempt";
    /** {@code cqflux.shutdown-timeout}: the close must end within it (plus the context's own steps). */
    static final Duration SHUTDOWN_BUDGET = Duration.ofSeconds(20);
    /** {@code records.timeout}: below the gate's wait for requests, three quarters of the budget. */
    static final Duration REQUEST_DEADLINE = Duration.ofSeconds(10);

    static final LoopResources CLIENT_LOOPS = LoopResources.create("probe-client", 2, true);
    static final ConnectionProvider CLIENT_POOL = ConnectionProvider.builder("probe-client").maxConnections(64)
            .pendingAcquireMaxCount(-1).build();

    @AfterAll
    static void down() {
        CLIENT_POOL.disposeLater().block(Duration.ofSeconds(10));
        CLIENT_LOOPS.disposeLater(Duration.ZERO, Duration.ofSeconds(5)).block(Duration.ofSeconds(10));
    }

    @Test
    void contextClosedUnderLoad_everyRequestAnswered_noneRunsPastTheDrain() throws Exception {
        List<String> violations = new ArrayList<>();
        int refusals = 0;
        for (int round = 0; round < ROUNDS; round++) {
            Round r = closeRound(round);
            violations.addAll(r.violations);
            refusals += r.refusals;
        }
        assertThat(violations).as("requests left unanswered or run past the start of cqflux's drain").isEmpty();
        assertThat(refusals).as("requests refused by the shutting-down service (the gate was exercised)").isPositive();
    }

    /** What a client saw of one attempt: an HTTP answer, or an error instead. */
    record Outcome(int worker, int id, String text, int status, String connection, String body, String error) {
        boolean answered() {
            return error == null;
        }
    }

    /** A call into {@link RecordStore}: which method, the attempt whose bytes it carried, and whether cqflux's stop had begun. */
    record StoreCall(String method, Integer attempt, boolean afterStopBegan) {
    }

    record Round(List<String> violations, int refusals) {
    }

    private Round closeRound(int round) throws Exception {
        StoragePeer remote = new StoragePeer(new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()),
                "fabric", CLIENTS * 32, SLOT);
        remote.start();
        try {
            Map<Integer, Long> seen = new ConcurrentHashMap<>();
            List<StoreCall> storeCalls = new CopyOnWriteArrayList<>();
            AtomicBoolean stopBegan = new AtomicBoolean();
            AtomicLong stopBeganAt = new AtomicLong();
            ConfigurableApplicationContext ctx = new SpringApplicationBuilder(RecordsApplication.class)
                    .initializers(c -> instrument(c, seen, storeCalls, stopBegan, stopBeganAt))
                    .run("--server.port=0", "--cqflux.transport=fabric", "--records.storage-transport=fabric",
                            "--records.slots=" + CLIENTS * 32, "--records.embedded-storage=false",
                            "--cqflux.peers.store.port=" + remote.address().getPort(),
                            // Deadlines far above a write's time on a loaded host, the request's inside
                            // the gate's wait (three quarters of shutdown-timeout): only the shutdown
                            // path decides what a request gets.
                            "--records.timeout=" + REQUEST_DEADLINE.toSeconds() + "s",
                            "--cqflux.shutdown-timeout=" + SHUTDOWN_BUDGET.toSeconds() + "s",
                            "--logging.level.root=WARN", "--logging.level.io.cqflux=INFO",
                            "--logging.level.org.springframework.boot.web=INFO");
            int port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
            WebClient client = WebClient.builder()
                    .clientConnector(new ReactorClientHttpConnector(HttpClient.create(CLIENT_POOL).runOn(CLIENT_LOOPS)
                            .disableRetry(true).responseTimeout(Duration.ofSeconds(30))))
                    .baseUrl("http://127.0.0.1:" + port).build();
            Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
            AtomicBoolean stopLoad = new AtomicBoolean();
            AtomicInteger seq = new AtomicInteger();
            var running = Flux.range(0, CLIENTS).flatMap(worker -> Mono.defer(() -> {
                int n = seq.getAndIncrement();
                int id = worker * 32 + n % 32; // each worker its own ids, one request at a time
                String text = "s" + n + " " + "p".repeat(n % 600);
                return client.post().uri("/records/{id}", id).header(ATTEMPT, Integer.toString(n))
                        .bodyValue(text.getBytes(StandardCharsets.UTF_8))
                        .exchangeToMono(r -> r.bodyToMono(String.class).defaultIfEmpty("")
                                .map(b -> new Outcome(worker, id, text, r.statusCode().value(),
                                        r.headers().asHttpHeaders().getConnection().toString(), b, null)))
                        .onErrorResume(e -> Mono.just(new Outcome(worker, id, text, 0, null, null, describe(e))))
                        .doOnNext(o -> outcomes.put(n, o))
                        // A refused or failed attempt: a client would try another instance; this one waits a little.
                        .flatMap(o -> o.status == 201 ? Mono.just(o)
                                : Mono.just(o).delayElement(Duration.ofMillis(o.answered() ? 5 : 20)));
            }).repeat(() -> !stopLoad.get()), CLIENTS).then().toFuture();
            Thread.sleep(700);
            long t0 = System.nanoTime();
            ctx.close();
            long closeMs = (System.nanoTime() - t0) / 1_000_000;
            Thread.sleep(100); // clients now meet a closed port
            stopLoad.set(true);
            running.get(30, TimeUnit.SECONDS);

            List<String> violations = new ArrayList<>();
            Map<String, Integer> tally = new TreeMap<>();
            Map<Integer, List<Integer>> attemptsById = new TreeMap<>();
            new TreeMap<>(outcomes).forEach((n, o) -> attemptsById.computeIfAbsent(o.id, k -> new ArrayList<>()).add(n));
            java.util.Set<Integer> reachedStore = new java.util.HashSet<>();
            for (StoreCall c : storeCalls) {
                if (c.attempt != null) {
                    reachedStore.add(c.attempt);
                }
                if (c.afterStopBegan) {
                    violations.add("round " + round + ": RecordStore." + c.method + " (attempt " + c.attempt
                            + ") after cqflux's stop began");
                }
            }
            int refusals = 0;
            for (var e : outcomes.entrySet()) {
                int n = e.getKey();
                Outcome o = e.getValue();
                boolean wasSeen = seen.containsKey(n);
                String kind;
                if (o.status == 201) {
                    kind = "201";
                } else if (o.status == 503 && o.body.contains("shutting down")) {
                    kind = "503 shutting down";
                    refusals++;
                    if (!o.connection.contains("close")) {
                        violations.add("round " + round + ": attempt " + n + " refused without Connection: close ("
                                + o.connection + ")");
                    }
                    if (reachedStore.contains(n)) {
                        violations.add("round " + round + ": attempt " + n + " refused after it reached RecordStore");
                    }
                } else if (o.status != 0) {
                    kind = o.status + " other";
                    violations.add("round " + round + ": attempt " + n + " answered " + o.status + " " + o.body);
                } else {
                    kind = "no answer, " + (wasSeen ? "received by the service" : "never received") + ": " + o.error;
                    if (wasSeen) {
                        violations.add("round " + round + ": attempt " + n + " received by the service"
                                + (reachedStore.contains(n) ? " and run through RecordStore" : "")
                                + ", client got no answer: " + o.error);
                    }
                }
                tally.merge(kind, 1, Integer::sum);
            }
            for (int n : reachedStore) {
                if (!outcomes.containsKey(n)) {
                    violations.add("round " + round + ": attempt " + n + " reached RecordStore but its client saw no end");
                }
            }
            // Every 201 is at the peer: its bytes, or those of a later attempt of the same id that reached the store.
            int checked = 0;
            for (var e : attemptsById.entrySet()) {
                List<Integer> tries = e.getValue();
                int last201 = -1;
                for (int i = 0; i < tries.size(); i++) {
                    if (outcomes.get(tries.get(i)).status == 201) {
                        last201 = i;
                    }
                }
                if (last201 < 0) {
                    continue;
                }
                checked++;
                List<String> allowed = new ArrayList<>();
                for (int i = last201; i < tries.size(); i++) {
                    if (i == last201 || reachedStore.contains(tries.get(i))) {
                        allowed.add(outcomes.get(tries.get(i)).text);
                    }
                }
                String held = atPeer(remote.memory(), e.getKey());
                if (held == null || !allowed.contains(held)) {
                    violations.add("round " + round + ": record " + e.getKey() + " at the peer is "
                            + (held == null ? "missing" : "'" + held.substring(0, Math.min(10, held.length())) + "...'")
                            + ", its last 201 was attempt " + tries.get(last201));
                }
            }
            assertThat(remote.verify().corrupt()).isZero();
            long afterStop = storeCalls.stream().filter(StoreCall::afterStopBegan).count();
            System.out.printf("PROBE graceful round %d: close %d ms; %d attempts %s; %d records' 201 checked at the peer;"
                    + " RecordStore calls %d, after cqflux's stop began %d%n", round, closeMs, outcomes.size(), tally,
                    checked, storeCalls.size(), afterStop);
            assertThat(closeMs).as("the close (shutdown budget %d s)", SHUTDOWN_BUDGET.toSeconds())
                    .isLessThan(SHUTDOWN_BUDGET.plusSeconds(5).toMillis());
            assertThat(checked).as("records created before the close").isPositive();
            return new Round(violations, refusals);
        } finally {
            remote.close();
        }
    }

    /**
     * Adds to the service, without changing it: a first filter that notes every attempt it
     * receives, a proxy around {@link RecordStore} that notes every call and the attempt whose
     * bytes it carries, and a lifecycle bean that notes when cqflux's stop begins (it stops just
     * before {@link CqfluxLifecycle}, whose drain comes after that).
     */
    private static void instrument(ConfigurableApplicationContext c, Map<Integer, Long> seen, List<StoreCall> storeCalls,
            AtomicBoolean stopBegan, AtomicLong stopBeganAt) {
        var beans = c.getBeanFactory();
        beans.registerSingleton("probeFirstFilter", new ProbeFilter(seen));
        beans.registerSingleton("probeStopMarker", new StopMarker(stopBegan, stopBeganAt));
        beans.addBeanPostProcessor(new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                if (!(bean instanceof RecordStore)) {
                    return bean;
                }
                ProxyFactory pf = new ProxyFactory(bean);
                pf.setProxyTargetClass(true);
                pf.addAdvice((MethodInterceptor) inv -> {
                    if (inv.getMethod().getDeclaringClass() == RecordStore.class) {
                        Integer attempt = null;
                        for (Object a : inv.getArguments()) {
                            String text = a instanceof ByteBuffer b ? StandardCharsets.UTF_8.decode(b.duplicate()).toString()
                                    : a instanceof byte[] b ? new String(b, StandardCharsets.UTF_8)
                                    : a instanceof org.springframework.core.io.buffer.DataBuffer d
                                            ? d.toString(d.readPosition(), d.readableByteCount(), StandardCharsets.UTF_8)
                                    : null;
                            if (text != null) {
                                attempt = attemptOf(text);
                            }
                        }
                        storeCalls.add(new StoreCall(inv.getMethod().getName(), attempt, stopBegan.get()));
                    }
                    return inv.proceed();
                });
                return pf.getProxy(bean.getClass().getClassLoader());
            }
        });
    }

    /** The attempt a record's text came from ({@code "s<n> ppp..."}). */
    static Integer attemptOf(String text) {
        int sp = text.indexOf(' ');
        if (!text.startsWith("s") || sp < 0) {
            return null;
        }
        try {
            return Integer.valueOf(text.substring(1, sp));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Sees every request first; notes the attempt it carries. */
    record ProbeFilter(Map<Integer, Long> seen) implements WebFilter, Ordered {
        @Override
        public Mono<Void> filter(org.springframework.web.server.ServerWebExchange exchange,
                org.springframework.web.server.WebFilterChain chain) {
            String a = exchange.getRequest().getHeaders().getFirst(ATTEMPT);
            if (a != null) {
                seen.put(Integer.valueOf(a), System.nanoTime());
            }
            return chain.filter(exchange);
        }

        @Override
        public int getOrder() {
            return Ordered.HIGHEST_PRECEDENCE;
        }
    }

    /** Stops right before {@link CqfluxLifecycle}: from here on, nothing may reach the store. */
    static final class StopMarker implements SmartLifecycle {
        private final AtomicBoolean began;
        private final AtomicLong at;
        private volatile boolean running;

        StopMarker(AtomicBoolean began, AtomicLong at) {
            this.began = began;
            this.at = at;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            at.set(System.nanoTime());
            began.set(true);
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return CqfluxLifecycle.PHASE + 1;
        }
    }

    private static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String m = root.getMessage() == null ? "" : root.getMessage();
        return root.getClass().getSimpleName() + (m.isEmpty() ? "" : ": " + m.replaceAll("\\[id: [^]]*]", "").trim());
    }

    /** The record's text as the peer holds it in its own memory (no RDMA); null when the slot holds none. */
    static String atPeer(MemorySegment memory, long id) {
        MemorySegment slot = memory.asSlice(id * SLOT, SLOT);
        if (RecordFormat.check(slot, id) != RecordFormat.Check.OK) {
            return null;
        }
        ByteBuffer p = RecordFormat.payload(slot.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
        return StandardCharsets.UTF_8.decode(p).toString();
    }
}
