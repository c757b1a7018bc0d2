package io.cqflux.samples.pipeline;

/**
 * One progress sample.
 *
 * @param seconds since the start
 * @param verified records verified by the consumer so far
 * @param recordsPerSecond verified records per second over the last interval
 * @param mbPerSecond verified record bytes per second over the last interval, in MB (10^6 B)
 * @param inFlight send-queue credits held by posted operations
 * @param waiting operations waiting for a credit
 * @param ringOccupied ring slots written or reserved and not yet consumed
 * @param producerAhead records the source produced that the consumer has not acknowledged
 * @param heapUsed heap bytes in use
 */
record Sample(double seconds, long verified, double recordsPerSecond, double mbPerSecond, int inFlight, int waiting,
              long ringOccupied, long producerAhead, long heapUsed) {
    static final String CSV_HEADER =
            "seconds,verified,records_per_s,mb_per_s,in_flight_ops,waiting_ops,ring_occupied,producer_ahead,heap_used_bytes";

    String csv() {
        return String.format(java.util.Locale.ROOT, "%.3f,%d,%.0f,%.2f,%d,%d,%d,%d,%d", seconds, verified,
                recordsPerSecond, mbPerSecond, inFlight, waiting, ringOccupied, producerAhead, heapUsed);
    }
}
