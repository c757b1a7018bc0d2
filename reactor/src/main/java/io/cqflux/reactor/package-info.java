/**
 * The reactive API of cqflux: RDMA operations as cold {@link reactor.core.publisher.Mono}s,
 * completions and received messages as {@link reactor.core.publisher.Flux}es.
 *
 * <p>Start with {@link io.cqflux.reactor.Cqflux#builder()}; register memory as a
 * {@link io.cqflux.reactor.Region}; {@link io.cqflux.reactor.Cqflux#bind bind} a server that
 * exposes regions or {@link io.cqflux.reactor.Cqflux#connect connect} to one; then post
 * operations on the {@link io.cqflux.reactor.RdmaConnection}. Signals arrive on the connection's
 * event-loop thread (a {@link reactor.core.scheduler.NonBlocking} thread): use
 * {@code publishOn} before heavy or blocking work. Operations never overrun the native queues:
 * they take send-queue credits and otherwise wait in a bounded queue.
 *
 * <p>{@link io.cqflux.reactor.Cqflux}, {@link io.cqflux.reactor.RdmaServer} and
 * {@link io.cqflux.reactor.RdmaConnection} are Reactor {@link reactor.core.Disposable}s:
 * {@code dispose()} starts the release and returns, {@code onDispose()} completes once it is done,
 * {@code disposeNow(Duration)} waits for it (and refuses to on a {@code NonBlocking} thread).
 *
 * <p>A client that must survive its peer's restarts uses a {@link io.cqflux.reactor.PeerPool}
 * ({@link io.cqflux.reactor.Cqflux#peerPool(java.net.InetSocketAddress, PeerPoolOptions)}):
 * connections to one peer that reconnect with backoff and learn the peer's regions again.
 */
package io.cqflux.reactor;
