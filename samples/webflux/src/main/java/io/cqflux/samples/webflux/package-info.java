/** The records service sample: a WebFlux application over the cqflux Spring Boot starter. */
package io.cqflux.samples.webflux;
