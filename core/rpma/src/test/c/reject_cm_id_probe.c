/*
 * reject_cm_id_probe: what does librpma leave of an incoming connection request it rejects?
 *
 * rpma_conn_req_delete(3) "deletes the connection requests both incoming and outgoing"; for an
 * incoming one librpma destroys the request's QP and CQs and calls rdma_reject(3). rdma_cm(7)
 * leaves destroying the rdma_cm_id of a rejected request to the application (rdma_destroy_id(3)).
 *
 * One process on the rxe address given (the Soft-RoCE lane's eth0: 10.0.2.15) listens, and
 * connects to itself N times; the listener rejects each request with rpma_conn_req_delete, and
 * the client reads RPMA_CONN_REJECTED and deletes its connection. Then N more, this time with
 * rdma_destroy_id on the request's id after the delete: the id is the second word of librpma's
 * opaque struct rpma_conn_req (every librpma version keeps it there), taken only when it points at
 * an rdma_cm_id of the listener's device (the id's first member, verbs, is the ibv_context that
 * rpma_utils_get_ibv_context gave). The rdma_cm_ids of the whole system are counted with
 * `rdma resource show cm_id` before, between and after, and after rpma_ep_shutdown.
 *
 * Build and run (Debian 12, librpma 1.2), in the lane:
 *   gcc -O2 -o /tmp/reject_cm_id_probe reject_cm_id_probe.c -lrpma -lrdmacm
 *   scripts/softroce/run-in-vm.sh -- /tmp/reject_cm_id_probe 10.0.2.15 200
 * Measured: cm_ids 1 before (the listener's), 201 after 200 plain rejections (one per request,
 * 736 bytes of malloc each), 201 after 200 more with the destroy, 0 after the shutdown.
 * Output: "name value" lines.
 */
#include <librpma.h>
#include <rdma/rdma_cma.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#define PORT "7471"

static long cm_ids(void)
{
	FILE *f = popen("rdma resource show cm_id 2>/dev/null | wc -l", "r");
	long n = -1;
	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -2;
		pclose(f);
	}
	return n;
}

/* One client request, rejected by the listener; with destroy_id, its id destroyed afterwards. */
static int reject_one(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr,
		struct ibv_context *device, int destroy_id)
{
	struct rpma_conn_req *creq, *sreq;
	struct rpma_conn *cconn;
	enum rpma_conn_event ev;
	if (rpma_conn_req_new(peer, addr, PORT, NULL, &creq) || rpma_conn_req_connect(&creq, NULL, &cconn))
		return -1;
	if (rpma_ep_next_conn_req(ep, NULL, &sreq))
		return -2;
	struct rdma_cm_id *id = ((struct rdma_cm_id **)sreq)[1];
	if (destroy_id && (id == NULL || id->verbs != device))
		return -3;
	(void) rpma_conn_req_delete(&sreq);
	if (destroy_id && rdma_destroy_id(id))
		return -4;
	if (rpma_conn_next_event(cconn, &ev) || ev != RPMA_CONN_REJECTED)
		return -5;
	(void) rpma_conn_delete(&cconn);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = argc > 1 ? argv[1] : "10.0.2.15";
	int n = argc > 2 ? atoi(argv[2]) : 20;
	struct ibv_context *device;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	if (rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device) || device == NULL
			|| rpma_peer_new(device, &peer) || rpma_ep_listen(peer, addr, PORT, &ep)) {
		printf("setup_failed 1\n");
		return 1;
	}
	printf("cm_ids_listening %ld\n", cm_ids());
	struct mallinfo2 m0 = mallinfo2();
	for (int i = 0; i < n; i++) {
		int r = reject_one(peer, ep, addr, device, 0);
		if (r) {
			printf("plain_failed %d\n", r);
			return 1;
		}
	}
	struct mallinfo2 m1 = mallinfo2();
	printf("cm_ids_after_plain_rejections %ld\n", cm_ids());
	printf("malloc_bytes_per_plain_rejection %ld\n", (long)(m1.uordblks - m0.uordblks) / n);
	for (int i = 0; i < n; i++) {
		int r = reject_one(peer, ep, addr, device, 1);
		if (r) {
			printf("destroying_failed %d\n", r);
			return 1;
		}
	}
	struct mallinfo2 m2 = mallinfo2();
	printf("cm_ids_after_rejections_with_destroy %ld\n", cm_ids());
	printf("malloc_bytes_per_rejection_with_destroy %ld\n", (long)(m2.uordblks - m1.uordblks) / n);
	(void) rpma_ep_shutdown(&ep);
	printf("cm_ids_after_shutdown %ld\n", cm_ids());
	(void) rpma_peer_delete(&peer);
	return 0;
}
