/**
 * The state behind {@link io.cqflux.reactor.PeerPool}: its connection slots and their reconnect
 * state machine (with the attempts' schedule and each slot's per-outage logging), its ordered
 * event stream, the operations waiting for a connection and what its {@code onDispose} waits
 * for, all behind {@link io.cqflux.reactor.internal.pool.PoolCore}. Internal: exported to no
 * module; the public pool forwards here and reaches its package's members through
 * {@link io.cqflux.reactor.internal.resources.ApiAccess}.
 */
package io.cqflux.reactor.internal.pool;
