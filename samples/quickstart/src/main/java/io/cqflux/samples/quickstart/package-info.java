/** The quickstart demo: durable writes to a memory-mapped file on a server, read back and verified. */
package io.cqflux.samples.quickstart;
