/**
 * The transport SPI: what the event loop and the reactive layer need from a native transport
 * (completion queues and event channels the loop polls, connections, listeners, regions, the
 * connection handshake), and the {@link io.cqflux.core.spi.TransportProvider} through which
 * {@link java.util.ServiceLoader} finds a transport. Transports report what their provider said
 * (a completion's opcode is the device's, not what was posted); the reactive layer owns what it
 * posted. The helpers every transport uses live beside it in {@code io.cqflux.core.internal},
 * exported only to the project's own modules: the one place that maps native return codes to
 * exceptions ({@link io.cqflux.core.internal.NativeErrors}) and the argument check each operation
 * gets before posting ({@link io.cqflux.core.internal.Checks}).
 */
package io.cqflux.core.spi;
