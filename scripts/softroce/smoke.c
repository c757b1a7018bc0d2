/*
 * smoke.c - librpma write, flush and read over the lane's rxe device, in C.
 *
 * A diagnostic, not part of the test tier: when an rpma test fails in the lane, this tells
 * whether the lane (kernel, rxe, rdma-core, librpma) works at all without any Java involved.
 *
 *   gcc -O2 -Wall -o /tmp/smoke scripts/softroce/smoke.c -lrpma -libverbs
 *   scripts/softroce/run-in-vm.sh -- /tmp/smoke [ADDRESS [PORT]]
 *
 * ADDRESS defaults to $CQFLUX_RPMA_ADDRESS (10.0.2.15 in the lane), PORT to 7204. The process
 * forks: the child is the server (registers a region, sends its descriptor as private data),
 * the parent the client (write 8 bytes, flush, read them back, check every ibv_wc). Exit code 0
 * when all checks pass. Each side is bounded by alarm(): nothing waits forever.
 */
#include <errno.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define REGION 4096
#define LEN 8
#define DEADLINE_S 60

#define CHECK(call)                                                                       \
	do {                                                                              \
		int rc_ = (call);                                                         \
		if (rc_) {                                                                \
			fprintf(stderr, "%s: %s failed: %d (%s)\n", who, #call, rc_,      \
				rpma_err_2str(rc_));                                      \
			return 1;                                                         \
		}                                                                         \
	} while (0)

static const char *who = "smoke";

static int server(const char *addr, const char *port, int ready_fd)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev;
	size_t desc_size;
	char desc[256];
	void *mem;

	who = "server";
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_ep_listen(peer, addr, port, &ep));
	if (posix_memalign(&mem, 4096, REGION))
		return 1;
	memset(mem, 0, REGION);
	/*
	 * READ_SRC for the client's read; FLUSH_TYPE_VISIBILITY because this memory is not pmem:
	 * the client's rpma_flush(VISIBILITY) is checked against it (rpma_flush(3)). Over rxe the
	 * flush is an RDMA read under the hood: its completion has opcode IBV_WC_RDMA_READ.
	 */
	CHECK(rpma_mr_reg(peer, mem, REGION,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			  &mr));
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size));
	if (desc_size > sizeof(desc)) {
		fprintf(stderr, "server: descriptor of %zu bytes\n", desc_size);
		return 1;
	}
	CHECK(rpma_mr_get_descriptor(mr, desc));
	struct rpma_conn_private_data pdata = {desc, (uint8_t)desc_size};

	/* Listening: the client may connect now (before this, it would get REJECTED). */
	if (write(ready_fd, "L", 1) != 1)
		return 1;
	close(ready_fd);

	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
		return 1;
	}
	/* The client disconnects when done. */
	CHECK(rpma_conn_next_event(conn, &ev));
	printf("server: connection %s; region starts with %016" PRIx64 "\n",
	       rpma_utils_conn_event_2str(ev), *(uint64_t *)mem);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_peer_delete(&peer));
	free(mem);
	return ev == RPMA_CONN_CLOSED ? 0 : 1;
}

static int client(const char *addr, const char *port)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *rmr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	enum rpma_conn_event ev;
	struct ibv_wc wc[8];
	int flush_type, seen = 0, failed = 0;
	uint64_t *mem;

	who = "client";
	CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	if (posix_memalign((void **)&mem, 4096, REGION))
		return 1;
	memset(mem, 0, REGION);
	CHECK(rpma_mr_reg(peer, mem, REGION, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr));
	CHECK(rpma_conn_req_new(peer, addr, port, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
		return 1;
	}
	CHECK(rpma_conn_get_private_data(conn, &pdata));
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &rmr));
	CHECK(rpma_mr_remote_get_flush_type(rmr, &flush_type));
	printf("client: connected; remote flush type %s\n",
	       (flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ? "PERSISTENT" : "VISIBILITY");

	mem[0] = UINT64_C(0x0123456789abcdef);
	CHECK(rpma_conn_get_cq(conn, &cq));
	CHECK(rpma_write(conn, rmr, 0, mr, 0, LEN, RPMA_F_COMPLETION_ALWAYS, (void *)1));
	CHECK(rpma_flush(conn, rmr, 0, LEN, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			 (void *)2));
	CHECK(rpma_read(conn, mr, LEN, rmr, 0, LEN, RPMA_F_COMPLETION_ALWAYS, (void *)3));

	while (seen < 3) {
		int n = 0;
		/* One wake-up may carry no completion: RPMA_E_NO_COMPLETION is normal (rpma_cq_get_wc(3)). */
		CHECK(rpma_cq_wait(cq));
		int rc = rpma_cq_get_wc(cq, 8, wc, &n);
		if (rc == RPMA_E_NO_COMPLETION)
			continue;
		CHECK(rc);
		for (int i = 0; i < n; i++) {
			printf("client: wc wr_id=%" PRIu64 " status=%s opcode=%d byte_len=%u\n",
			       (uint64_t)wc[i].wr_id, ibv_wc_status_str(wc[i].status), wc[i].opcode,
			       wc[i].byte_len);
			if (wc[i].status != IBV_WC_SUCCESS)
				failed = 1;
		}
		seen += n;
	}
	if (mem[1] != mem[0]) {
		fprintf(stderr, "client: read back %016" PRIx64 ", wrote %016" PRIx64 "\n", mem[1], mem[0]);
		failed = 1;
	}
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_next_event(conn, &ev));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_remote_delete(&rmr));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(mem);
	printf("client: %s\n", failed ? "FAILED" : "write, flush, read: OK");
	return failed;
}

int main(int argc, char **argv)
{
	const char *addr = argc > 1 ? argv[1] : getenv("CQFLUX_RPMA_ADDRESS");
	const char *port = argc > 2 ? argv[2] : "7204";
	int pipefd[2], status;
	char c;

	if (!addr) {
		fprintf(stderr, "usage: smoke ADDRESS [PORT] (or set CQFLUX_RPMA_ADDRESS)\n");
		return 2;
	}
	if (pipe(pipefd))
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(pipefd[0]);
		alarm(DEADLINE_S);
		int rc = server(addr, port, pipefd[1]);
		fflush(stdout);
		_exit(rc);
	}
	close(pipefd[1]);
	alarm(DEADLINE_S);
	struct pollfd pfd = {pipefd[0], POLLIN, 0};
	if (poll(&pfd, 1, DEADLINE_S * 1000) != 1 || read(pipefd[0], &c, 1) != 1) {
		fprintf(stderr, "client: the server never listened\n");
		waitpid(pid, &status, 0);
		return 1;
	}
	int rc = client(addr, port);
	fflush(stdout);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "smoke: the server failed (status %d)\n", status);
		rc = 1;
	}
	return rc;
}
