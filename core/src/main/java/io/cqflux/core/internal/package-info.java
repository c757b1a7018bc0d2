/**
 * What every transport and the layers above them share, exported only to the project's own
 * modules: the one argument check per operation ({@link io.cqflux.core.internal.Checks}), the one
 * place native return codes become exceptions ({@link io.cqflux.core.internal.NativeErrors}), the
 * transport choice and why a native library did not load, the arena whose close does not wait on
 * the caller's thread, and the readers of native memory two transports share (C socket addresses,
 * RDMA CM's id, bytes copied out on a loop). Nothing here is API: it changes with its users.
 */
package io.cqflux.core.internal;
