/**
 * The rpma transport: librpma through the FFM API. Only {@link io.cqflux.core.rpma.Rpma} is
 * public; the bindings are in the non-exported {@code io.cqflux.core.rpma.ffm}.
 */
package io.cqflux.core.rpma;
