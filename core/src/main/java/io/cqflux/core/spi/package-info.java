/**
 * The transport SPI: what the event loop and the reactive layer need from a native transport
 * (completion queues and event channels the loop polls, connections, listeners, regions), plus
 * the one place that maps native return codes to exceptions ({@link io.cqflux.core.internal.NativeErrors})
 * and the argument checks every transport applies before posting ({@link io.cqflux.core.internal.Checks}).
 */
package io.cqflux.core.spi;
