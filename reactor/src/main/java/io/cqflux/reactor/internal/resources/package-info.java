/**
 * What one {@link io.cqflux.reactor.Cqflux} instance owns and shares across its connections, and
 * how it comes up ({@link io.cqflux.reactor.internal.resources.Startup}): the loop threads, the
 * library timer, the listeners' instrumentation, what it made and its shutdown closes
 * ({@link io.cqflux.reactor.internal.resources.Holdings}), the argument checks its public types
 * share, and the bridge ({@link io.cqflux.reactor.internal.resources.ApiAccess}) to the public
 * types' package-private members. Internal: exported to no module; nothing here is API.
 */
package io.cqflux.reactor.internal.resources;
