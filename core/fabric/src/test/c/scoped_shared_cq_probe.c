/*
 * scoped_shared_cq_probe: may an endpoint opened in a domain of its own (keys scoped to one
 * accepted connection) be bound to a completion queue of another domain on libfabric's tcp
 * provider, so that scoped connections share completion queues as unscoped ones do?
 *
 * fi_domain(3) calls a domain "the boundary for associating different resources together";
 * fi_endpoint(3) names no rule for binding an endpoint to a CQ of another domain. So this is
 * measured, not read (ProviderProfile#sharesQueuesAcrossDomains depends on it):
 *
 *   1. The server opens an "instance" domain with one CQ (FI_WAIT_FD) and a 4 KiB MR (key
 *      0x1111). For each FI_CONNREQ it opens fi_domain(fabric, req->info), an endpoint and a
 *      4 KiB MR (key 0x5eed000N) there, binds the endpoint to the instance's CQ, posts a
 *      receive, and accepts. Three clients (A, B, C) connect.
 *   2. From then on the server reads only the shared CQ (never its connections' EQ), and waits
 *      on the CQ's wait fd (FI_GETWAIT, fi_trywait, poll): does it make progress for the scoped
 *      endpoints (A and B read their own MRs), deliver their completions (a server send to A, a
 *      client send from B into the posted receive), and wake the fd for them?
 *   3. Isolation: C reads with the instance's key, B writes with A's key. Does each fail and end
 *      the forger's connection alone, A's memory unchanged, A still reading?
 *   4. Closing B's endpoint, MR and domain while the shared CQ stays open; A goes on; the
 *      domains close after their endpoints (before: -FI_EBUSY), the CQ last.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/scoped_shared_cq_probe scoped_shared_cq_probe.c -lfabric && /tmp/scoped_shared_cq_probe
 * Measured (1.17): every fi_ep_bind 0; A_read_own and B_read_own ok; server_send completes on the
 * shared CQ and A receives it; poll on the CQ fd 1 after B's send, which lands in the server's
 * receive; C_read_instance_key -125 (FI_ECANCELED) and C's EQ FI_SHUTDOWN; B's forged write
 * completes at B (tcp completes a write once sent) but never lands (A's memory intact), and B's EQ
 * then reports FI_SHUTDOWN (3): the server dropped B; A reads on; every close 0 in that order.
 */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define CHECK(what, call) do { long _r = (long) (call); printf("%s %ld\n", what, _r); if (_r < 0) { \
    printf("%s %ld %s\n", what, _r, fi_strerror((int) -_r)); exit(1); } } while (0)
struct side { struct fid_domain *domain; struct fid_ep *ep; struct fid_cq *cq; struct fid_mr *mr; char *buf; uint64_t key; };
static struct fi_cq_attr cq_attr = {.size = 64, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD};
static struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_UNSPEC};
static struct side *servers[4]; static int nservers;
static struct fid_fabric *fabric; static struct fid_pep *pep; static struct fid_eq *peq, *seq;
static struct fid_domain *idom; static struct fid_cq *shared; static struct fid_mr *imr; static char *ibuf;
static int server_cq_ok, server_cq_err; static int no_eq;
#include <poll.h>
static int cqfd;
static void serve(void) {
    uint32_t event; char buf[sizeof(struct fi_eq_cm_entry) + 256];
    ssize_t n = fi_eq_read(peq, &event, buf, sizeof(buf), 0);
    if (n < 0 || event != FI_CONNREQ) return;
    struct fi_eq_cm_entry *req = (struct fi_eq_cm_entry *) buf;
    struct side *s = calloc(1, sizeof *s);
    CHECK("fi_domain(per connection)", fi_domain(fabric, req->info, &s->domain, NULL));
    CHECK("fi_endpoint(server, scoped)", fi_endpoint(s->domain, req->info, &s->ep, NULL));
    CHECK("fi_ep_bind(server eq)", fi_ep_bind(s->ep, &seq->fid, 0));
    CHECK("fi_ep_bind(server ep -> instance-domain cq)", fi_ep_bind(s->ep, &shared->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(server)", fi_enable(s->ep));
    s->buf = aligned_alloc(4096, 4096); memset(s->buf, 'a' + nservers, 4096);
    s->key = 0x5eed0000 + nservers;
    CHECK("fi_mr_reg(server scoped)", fi_mr_reg(s->domain, s->buf, 4096, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, s->key, 0, &s->mr, NULL));
    /* a receive posted on the scoped endpoint */
    CHECK("fi_recv(server)", fi_recv(s->ep, s->buf + 2048, 64, NULL, 0, (void *) (long) (100 + nservers)));
    CHECK("fi_accept", fi_accept(s->ep, NULL, 0));
    fi_freeinfo(req->info);
    servers[nservers++] = s;
}
static void progress_servers(void) {
    struct fi_cq_err_entry e; struct fi_cq_entry ce[8];
    ssize_t n = fi_cq_read(shared, ce, 8);
    if (n > 0) { for (int i = 0; i < n; i++) { printf("shared_cq_completion ctx %ld\n", (long) ce[i].op_context); } server_cq_ok += n; }
    if (n == -FI_EAVAIL) { fi_cq_readerr(shared, &e, 0); server_cq_err++; printf("shared_cq_error ctx %ld err %d\n", (long) e.op_context, e.err); }
    if (no_eq) return;
    uint32_t ev; char b[256]; ssize_t m = fi_eq_read(seq, &ev, b, sizeof b, 0);
    if (m >= 0) printf("server_eq_event %u fid %p\n", ev, (void *) ((struct fi_eq_entry *) b)->fid);
    if (m == -FI_EAVAIL) { struct fi_eq_err_entry ee = {0}; fi_eq_readerr(seq, &ee, 0); printf("server_eq_error %d\n", ee.err); }
}
static long client_event(struct fid_eq *ceq, struct side *c, int *err) {
    uint32_t event; char buf[sizeof(struct fi_eq_cm_entry) + 256];
    for (int i = 0; i < 20000; i++) {
        serve(); progress_servers();
        struct fi_cq_entry ce; fi_cq_read(c->cq, &ce, 1);
        ssize_t n = fi_eq_read(ceq, &event, buf, sizeof(buf), 0);
        if (n == -FI_EAVAIL) { struct fi_eq_err_entry ee = {0}; fi_eq_readerr(ceq, &ee, 0); *err = ee.err; return -1; }
        if (n >= 0) return event;
        usleep(50);
    }
    return -FI_ETIMEDOUT;
}
static int wait_client(struct side *c, struct fid_eq *ceq, int *eq_event) {
    *eq_event = 0;
    for (int i = 0; i < 40000; i++) {
        progress_servers();
        struct fi_cq_entry ce; ssize_t n = fi_cq_read(c->cq, &ce, 1);
        if (n == 1) return 0;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry e = {0}; fi_cq_readerr(c->cq, &e, 0);
            for (int j = 0; j < 200 && *eq_event == 0; j++) {
                uint32_t ev; char b[256]; progress_servers();
                ssize_t m = fi_eq_read(ceq, &ev, b, sizeof b, 0);
                if (m >= 0) *eq_event = (int) ev; else if (m == -FI_EAVAIL) *eq_event = -1;
                usleep(100);
            }
            return -e.err;
        }
        usleep(25);
    }
    return -FI_ETIMEDOUT;
}
static int read_with(struct side *c, uint64_t key, struct fid_eq *ceq, int *eq_event) {
    ssize_t rc;
    do { rc = fi_read(c->ep, c->buf, 8, NULL, 0, 0, key, (void *) 0x77); serve(); progress_servers(); } while (rc == -FI_EAGAIN);
    if (rc) return (int) rc;
    return wait_client(c, ceq, eq_event);
}
static int write_with(struct side *c, uint64_t key, struct fid_eq *ceq, int *eq_event) {
    ssize_t rc;
    do { rc = fi_write(c->ep, c->buf, 8, NULL, 0, 0, key, (void *) 0x78); serve(); progress_servers(); } while (rc == -FI_EAGAIN);
    if (rc) return (int) rc;
    return wait_client(c, ceq, eq_event);
}
static struct side *client(struct fid_domain *cdom, struct fi_info *cinfo, struct fid_eq **ceq) {
    struct side *c = calloc(1, sizeof *c); c->domain = cdom;
    CHECK("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, ceq, NULL));
    CHECK("fi_cq_open(client)", fi_cq_open(cdom, &cq_attr, &c->cq, NULL));
    CHECK("fi_endpoint(client)", fi_endpoint(cdom, cinfo, &c->ep, NULL));
    CHECK("fi_ep_bind(client eq)", fi_ep_bind(c->ep, &(*ceq)->fid, 0));
    CHECK("fi_ep_bind(client cq)", fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(client)", fi_enable(c->ep));
    c->buf = aligned_alloc(4096, 4096);
    CHECK("fi_connect", fi_connect(c->ep, cinfo->dest_addr, NULL, 0));
    int err = 0; long ev = client_event(*ceq, c, &err);
    printf("client_connect_event %s\n", ev == FI_CONNECTED ? "FI_CONNECTED" : "other");
    if (ev != FI_CONNECTED) exit(1);
    return c;
}
int main(void) {
    struct fi_info *hints = fi_allocinfo(), *info = NULL, *cinfo = NULL;
    hints->caps = FI_MSG | FI_RMA; hints->ep_attr->type = FI_EP_MSG;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_SAFE; hints->fabric_attr->prov_name = strdup("tcp");
    struct sockaddr_in addr = {.sin_family = AF_INET}; size_t addrlen = sizeof(addr);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr)); memcpy(hints->src_addr, &addr, sizeof(addr)); hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    printf("version %u.%u\n", FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_domain(instance)", fi_domain(fabric, info, &idom, NULL));
    CHECK("fi_cq_open(instance shared)", fi_cq_open(idom, &cq_attr, &shared, NULL));
    ibuf = aligned_alloc(4096, 4096); memset(ibuf, 'I', 4096);
    CHECK("fi_mr_reg(instance)", fi_mr_reg(idom, ibuf, 4096, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0x1111, 0, &imr, NULL));
    CHECK("fi_eq_open(listener)", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_eq_open(server connections)", fi_eq_open(fabric, &eq_attr, &seq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));
    free(hints->src_addr); hints->src_addr = NULL; hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr)); memcpy(hints->dest_addr, &addr, sizeof(addr)); hints->dest_addrlen = sizeof(addr);
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &cinfo));
    struct fid_domain *cdom; CHECK("fi_domain(client)", fi_domain(fabric, cinfo, &cdom, NULL));
    struct fid_eq *aeq, *beq, *ceq;
    struct side *a = client(cdom, cinfo, &aeq);
    struct side *b = client(cdom, cinfo, &beq);
    struct side *c = client(cdom, cinfo, &ceq);
    int ev = 0, rc;
    no_eq = 1;
    CHECK("getwait", fi_control(&shared->fid, FI_GETWAIT, &cqfd));
    { struct fid *f = &shared->fid; printf("trywait %d\n", fi_trywait(fabric, &f, 1)); }
    { struct pollfd p = {cqfd, POLLIN, 0}; printf("poll_before %d\n", poll(&p, 1, 0)); }
    rc = read_with(a, servers[0]->key, aeq, &ev); printf("A_read_own rc %d ok %d\n", rc, rc == 0 && a->buf[0] == 'a');
    rc = read_with(b, servers[1]->key, beq, &ev); printf("B_read_own rc %d ok %d\n", rc, rc == 0 && b->buf[0] == 'b');
    /* server -> client send over scoped ep, completion on shared CQ; client posts recv first */
    fi_recv(a->ep, a->buf + 1024, 64, NULL, 0, (void *) 0x99);
    ssize_t s = fi_send(servers[0]->ep, servers[0]->buf, 16, NULL, 0, (void *) 555); printf("server_send rc %zd\n", s);
    { struct fid *f = &shared->fid; printf("trywait2 %d\n", fi_trywait(fabric, &f, 1)); }
    { struct pollfd p = {cqfd, POLLIN, 0}; printf("poll_after_send %d\n", poll(&p, 1, 500)); }
    rc = wait_client(a, aeq, &ev); printf("A_recv rc %d ok %d\n", rc, rc == 0 && a->buf[1024] == 'a');
    for (int i = 0; i < 100; i++) { progress_servers(); usleep(100); }
    /* client -> server send: completes server's posted recv on shared CQ */
    { struct fid *f = &shared->fid; printf("trywait3 %d\n", fi_trywait(fabric, &f, 1)); }
    memset(b->buf, 'Z', 64); fi_send(b->ep, b->buf, 16, NULL, 0, (void *) 0x55);
    { struct pollfd p = {cqfd, POLLIN, 0}; printf("poll_after_client_send %d\n", poll(&p, 1, 500)); }
    rc = wait_client(b, beq, &ev); printf("B_send rc %d\n", rc);
    for (int i = 0; i < 100; i++) { progress_servers(); usleep(100); }
    printf("server_recv_landed %d\n", servers[1]->buf[2048] == 'Z');
    /* C with the instance-domain key: must fail (not in C's domain) */
    rc = read_with(c, 0x1111, ceq, &ev); printf("C_read_instance_key rc %d eq_event %d\n", rc, ev);
    /* B writes with A's key */
    memset(b->buf, 'X', 8);
    rc = write_with(b, servers[0]->key, beq, &ev);
    /* tcp completes a write at the initiator once sent: B's end shows on B's EQ, once the server's
       progress (its shared CQ read) met the unknown key and dropped B's socket */
    int b_end = 0;
    for (int i = 0; i < 20000 && b_end == 0; i++) {
        uint32_t bev; char bb[256]; struct fi_cq_entry ce;
        progress_servers(); fi_cq_read(b->cq, &ce, 1);
        ssize_t m = fi_eq_read(beq, &bev, bb, sizeof bb, 0);
        if (m >= 0) b_end = (int) bev; else if (m == -FI_EAVAIL) b_end = -1;
        usleep(100);
    }
    printf("B_write_A_key rc %d B_eq_after %d (SHUTDOWN=%d) A_mem_intact %d\n", rc, b_end, FI_SHUTDOWN, servers[0]->buf[0] == 'a');
    /* A still goes on */
    memset(a->buf, 0, 8);
    rc = read_with(a, servers[0]->key, aeq, &ev); printf("A_read_own_after rc %d ok %d\n", rc, rc == 0 && a->buf[0] == 'a');
    /* close B's server side: ep, mr, domain, with the shared cq open */
    CHECK("close B ep", fi_close(&servers[1]->ep->fid));
    CHECK("close B mr", fi_close(&servers[1]->mr->fid));
    CHECK("close B domain", fi_close(&servers[1]->domain->fid));
    memset(a->buf, 0, 8);
    rc = read_with(a, servers[0]->key, aeq, &ev); printf("A_read_own_after_B_closed rc %d ok %d\n", rc, rc == 0 && a->buf[0] == 'a');
    /* try closing A's domain before its ep: expect EBUSY */
    printf("close A domain before ep %d\n", fi_close(&servers[0]->domain->fid));
    CHECK("close A ep", fi_close(&servers[0]->ep->fid));
    CHECK("close A mr", fi_close(&servers[0]->mr->fid));
    CHECK("close A domain", fi_close(&servers[0]->domain->fid));
    CHECK("close C ep", fi_close(&servers[2]->ep->fid));
    CHECK("close C mr", fi_close(&servers[2]->mr->fid));
    CHECK("close C domain", fi_close(&servers[2]->domain->fid));
    CHECK("close shared cq", fi_close(&shared->fid));
    CHECK("close imr", fi_close(&imr->fid));
    CHECK("close idom", fi_close(&idom->fid));
    printf("server_cq ok %d err %d\n", server_cq_ok, server_cq_err);
    return 0;
}
