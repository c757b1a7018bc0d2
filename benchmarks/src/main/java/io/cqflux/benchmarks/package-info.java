/**
 * JMH benchmarks of cqflux's Java paths: the event loop's wake-up and drain, the fabric
 * transport through the SPI, and the reactive API on top. Each is shaped like a C baseline in
 * {@code benchmarks/c/} so that {@code benchmarks/run.sh} can report Java/C and reactor/SPI
 * ratios measured in the same run. Not part of the default build (root pom profile
 * {@code bench}); no timed assertions anywhere.
 */
package io.cqflux.benchmarks;
