# shellcheck shell=bash
# The modules whose classes the Soft-RoCE lane runs, in build order: run-tests.sh compiles,
# resolves and copies these. Sourced, not run.
# shellcheck disable=SC2034  # used by the scripts that source it
LANE_MODULES=(core core/rpma core/fabric epoll-bridge reactor test-kit samples/quickstart samples/pipeline)
