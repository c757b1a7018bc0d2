/**
 * The fabric transport: libfabric through the FFM API, with the inline API called through the
 * fid ops tables. Only {@link io.cqflux.core.fabric.Fabric} is public; the bindings are in the
 * non-exported {@code io.cqflux.core.fabric.ffm}.
 */
package io.cqflux.core.fabric;
