/**
 * The optional BlockHound integration of cqflux-reactor (not exported: BlockHound finds it
 * through {@code ServiceLoader} on the class path).
 */
package io.cqflux.reactor.blockhound;
