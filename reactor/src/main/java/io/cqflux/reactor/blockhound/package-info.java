/**
 * The optional BlockHound integration of cqflux-reactor: BlockHound's {@code ServiceLoader} finds
 * {@link io.cqflux.reactor.blockhound.CqfluxBlockHoundIntegration} on the class path
 * ({@code META-INF/services}) and on the module path (the module's {@code provides}); it can also
 * be passed to {@code BlockHound.install(...)} directly. Loading the class needs BlockHound.
 */
package io.cqflux.reactor.blockhound;
