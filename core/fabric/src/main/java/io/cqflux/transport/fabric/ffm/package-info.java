/**
 * FFM bindings of libfabric in the shape jextract generates from
 * {@code scripts/jextract/libfabric-symbols.txt} (regenerate with
 * {@code scripts/jextract/libfabric.sh}). The few exported functions are in {@link
 * io.cqflux.transport.fabric.ffm.fabric_h}; the {@code static inline} data-path API
 * ({@code fi_cq_read}, {@code fi_writemsg}, {@code fi_close}, ...) is reached through the
 * function-pointer fields of the fid ops structs ({@code fi_ops_cq.read.invoke(fp, ...)}).
 * Not exported; hand-written code sits in {@code io.cqflux.transport.fabric}.
 */
package io.cqflux.transport.fabric.ffm;
