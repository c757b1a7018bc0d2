/*
 * fabric_shared_queues: what one EQ and one CQ shared by many FI_EP_MSG endpoints cost and do on
 * libfabric's tcp provider -- the facts behind "one CQ per loop, one EQ per loop or listener".
 *
 * One fabric, one domain, one EQ and one CQ (both FI_WAIT_FD); a passive endpoint on 127.0.0.1
 * bound to that EQ; K client endpoints and the K endpoints accepted for them, every one bound to
 * the same EQ and the same CQ (FI_TRANSMIT | FI_RECV). It prints:
 *
 *   - the fds of the EQ and the CQ, of the listener, and per connection per side;
 *   - each EQ event with the endpoint its fid names (fi_eq(3): fi_eq_cm_entry.fid and
 *     fi_eq_err_entry.fid name the endpoint the event is for), through a connect of all K and an
 *     fi_shutdown of one client;
 *   - what fi_close of the CQ or the EQ answers while endpoints are still bound to it.
 *
 * Build and run:  gcc -O2 -Wall -o fabric_shared_queues fabric_shared_queues.c -lfabric
 *                 ./fabric_shared_queues            (closes everything in order)
 *                 CLOSE_EQ_EARLY=1 ./fabric_shared_queues
 *                 CLOSE_CQ_EARLY=1 ./fabric_shared_queues
 *
 * The last one shows why the owner of a shared CQ must count its endpoints instead of asking
 * libfabric: on tcp 1.17 fi_close of a CQ with endpoints bound returns -FI_EBUSY, and the proper
 * close after the endpoints are gone then aborts with "free(): double free detected".
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 3
#define CHECK(call)                                                                   \
	do {                                                                              \
		int rc_ = (int)(call);                                                        \
		if (rc_) {                                                                    \
			printf("%s = %d (%s)\n", #call, rc_, fi_strerror(-rc_));                  \
			exit(1);                                                                  \
		}                                                                             \
	} while (0)

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_eq *eq;
static struct fid_cq *cq;
static struct fid_ep *clients[K], *servers[K];
static int accepted;

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static const char *endpoint_name(fid_t fid)
{
	static char name[32];
	for (int i = 0; i < K; i++) {
		if (clients[i] && fid == &clients[i]->fid) {
			snprintf(name, sizeof name, "client %d", i);
			return name;
		}
		if (servers[i] && fid == &servers[i]->fid) {
			snprintf(name, sizeof name, "server %d", i);
			return name;
		}
	}
	snprintf(name, sizeof name, "unknown fid %p", (void *)fid);
	return name;
}

static struct fid_ep *open_endpoint(struct fi_info *info)
{
	struct fid_ep *ep;
	CHECK(fi_endpoint(domain, info, &ep, NULL));
	CHECK(fi_ep_bind(ep, &eq->fid, 0));
	CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_enable(ep));
	return ep;
}

/* Reads the EQ (and the CQ: tcp has no progress thread) until `events` events other than
 * FI_CONNREQ arrived; accepts each request on an endpoint bound to the same EQ and CQ. */
static void drive(int events)
{
	for (long spins = 0; spins < 50000000L && events > 0; spins++) {
		struct {
			struct fi_eq_cm_entry entry;
			char data[256];
		} buf;
		uint32_t event;
		struct fi_cq_data_entry completion;
		(void)fi_cq_read(cq, &completion, 1);
		ssize_t n = fi_eq_read(eq, &event, &buf, sizeof buf, 0);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err = {0};
			(void)fi_eq_readerr(eq, &err, 0);
			printf("EQ error entry: err %d for %s\n", err.err, endpoint_name(err.fid));
			events--;
			continue;
		}
		if (n < 0) {
			printf("fi_eq_read = %zd (%s)\n", n, fi_strerror((int)-n));
			exit(1);
		}
		if (event == FI_CONNREQ) {
			servers[accepted] = open_endpoint(buf.entry.info);
			CHECK(fi_accept(servers[accepted], NULL, 0));
			fi_freeinfo(buf.entry.info);
			printf("FI_CONNREQ on the listener: accepted as server %d\n", accepted++);
		} else {
			printf("%s for %s\n", event == FI_CONNECTED ? "FI_CONNECTED" : event == FI_SHUTDOWN
					? "FI_SHUTDOWN" : "another event", endpoint_name(buf.entry.fid));
			events--;
		}
	}
	if (events > 0) {
		printf("gave up waiting for %d more events\n", events);
		exit(1);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	struct fi_info *hints = fi_allocinfo(), *listen_info, *connect_info;
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->fabric_attr->prov_name = strdup("tcp");
	CHECK(fi_getinfo(FI_VERSION(1, 11), "127.0.0.1", "0", FI_SOURCE, hints, &listen_info));
	CHECK(fi_fabric(listen_info->fabric_attr, &fabric, NULL));
	CHECK(fi_domain(fabric, listen_info, &domain, NULL));

	int before = open_fds();
	struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_FD};
	CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL));
	int after_eq = open_fds();
	struct fi_cq_attr cq_attr = {.size = 256, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD};
	CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
	int after_cq = open_fds();
	printf("EQ: %d fds, CQ: %d fds\n", after_eq - before, after_cq - after_eq);

	struct fid_pep *pep;
	CHECK(fi_passive_ep(fabric, listen_info, &pep, NULL));
	CHECK(fi_pep_bind(pep, &eq->fid, 0));
	CHECK(fi_listen(pep));
	char address[64];
	size_t length = sizeof address;
	CHECK(fi_getname(&pep->fid, address, &length));
	char port[16];
	snprintf(port, sizeof port, "%d", ntohs(((struct sockaddr_in *)address)->sin_port));
	int after_listen = open_fds();
	printf("listener on the shared EQ: %d fds\n", after_listen - after_cq);

	CHECK(fi_getinfo(FI_VERSION(1, 11), "127.0.0.1", port, 0, hints, &connect_info));
	for (int i = 0; i < K; i++) {
		clients[i] = open_endpoint(connect_info);
		CHECK(fi_connect(clients[i], connect_info->dest_addr, NULL, 0));
	}
	drive(2 * K);
	printf("%d connections, both sides in this process: %d fds, %.1f per connection per side\n", K,
			open_fds() - after_listen, (open_fds() - after_listen) / (2.0 * K));

	CHECK(fi_shutdown(clients[1], 0));
	drive(2);

	if (getenv("CLOSE_CQ_EARLY")) {
		int rc = fi_close(&cq->fid);
		printf("fi_close(cq) with %d endpoints bound = %d (%s)\n", 2 * K, rc, fi_strerror(-rc));
	}
	if (getenv("CLOSE_EQ_EARLY")) {
		int rc = fi_close(&eq->fid);
		printf("fi_close(eq) with %d endpoints and the listener bound = %d (%s)\n", 2 * K, rc, fi_strerror(-rc));
	}
	for (int i = 0; i < K; i++) {
		CHECK(fi_close(&clients[i]->fid));
		CHECK(fi_close(&servers[i]->fid));
	}
	CHECK(fi_close(&pep->fid));
	printf("fi_close(cq) after its endpoints = %d\n", fi_close(&cq->fid));
	printf("fi_close(eq) after its endpoints = %d\n", fi_close(&eq->fid));
	CHECK(fi_close(&domain->fid));
	CHECK(fi_close(&fabric->fid));
	fi_freeinfo(connect_info);
	fi_freeinfo(listen_info);
	fi_freeinfo(hints);
	printf("fds after closing everything: %+d\n", open_fds() - before);
	return 0;
}
