/** The reactive API of cqflux. */
package io.cqflux.reactor;
