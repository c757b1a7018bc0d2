/*
 * scoped_domain_probe: can a server scope a key to one accepted connection on libfabric's tcp
 * provider by opening a domain per accepted connection, and what does one more domain cost?
 *
 * fi_domain(3): "fi_domain ... opens a fabric access domain"; memory regions, endpoints and
 * completion queues are opened from a domain, and an endpoint may be bound only to the CQs of
 * its own domain. fi_mr(3): a registration's key is looked up by the target in the domain the
 * target endpoint belongs to. fi_cm(3): an accepted endpoint is opened with the FI_CONNREQ
 * event's fi_info (its handle), and fi_domain may be given that same info.
 *
 *   1. A listener on 127.0.0.1 (passive endpoint on the fabric, its EQ on the fabric). Two
 *      clients (A, B) in one client domain connect. For each FI_CONNREQ the server opens
 *      fi_domain(fabric, req->info), a CQ, an endpoint and one 4 KiB MR (remote read and write,
 *      its own requested key) in that domain, and accepts.
 *   2. Client B reads with its own key (works), then with A's key through B's endpoint. How does
 *      it fail, which error, does B's connection end, does A still work afterwards?
 *   3. Cost: N times fi_domain(fabric, info) alone, then with a CQ (FI_WAIT_FD, as the transport
 *      opens them) and an MR in it: open fds (/proc/self/fd), threads (/proc/self/task), native
 *      heap (mallinfo2 uordblks) and wall time of the opens and of the closes.
 *
 * One thread drives both sides: tcp 1.17 progresses an endpoint when its CQ or EQ is read.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/scoped_domain_probe scoped_domain_probe.c -lfabric && /tmp/scoped_domain_probe 1000
 * Output: "name value" lines.
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
#include <dirent.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(what, call) do { long _r = (long) (call); if (_r < 0) { \
    printf("%s %ld %s\n", what, _r, fi_strerror((int) -_r)); exit(1); } } while (0)

static int fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') n++;
    }
    closedir(d);
    return n - 1; /* the directory's own fd */
}

static int threads(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') n++;
    }
    closedir(d);
    return n;
}

static long heap(void) {
    struct mallinfo2 m = mallinfo2();
    return (long) m.uordblks + (long) m.hblkhd;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static struct fi_info *hints_tcp(void) {
    struct fi_info *h = fi_allocinfo();
    h->caps = FI_MSG | FI_RMA;
    h->ep_attr->type = FI_EP_MSG;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->fabric_attr->prov_name = strdup("tcp");
    return h;
}

struct side {
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fid_mr *mr;
    char *buf;
    uint64_t key;
};

static struct fi_cq_attr cq_attr = {.size = 64, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_FD};
static struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_UNSPEC};

static struct side *servers[2];
static int nservers;
static struct fid_fabric *fabric;
static struct fid_pep *pep;
static struct fid_eq *peq, *seq;

/* Reads the server's listener EQ: accepts each request in a domain of its own. */
static void serve(void) {
    uint32_t event;
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    ssize_t n = fi_eq_read(peq, &event, buf, sizeof(buf), 0);
    if (n < 0 || event != FI_CONNREQ) return;
    struct fi_eq_cm_entry *req = (struct fi_eq_cm_entry *) buf;
    struct side *s = calloc(1, sizeof *s);
    CHECK("fi_domain(per connection)", fi_domain(fabric, req->info, &s->domain, NULL));
    CHECK("fi_cq_open(server)", fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
    CHECK("fi_endpoint(server)", fi_endpoint(s->domain, req->info, &s->ep, NULL));
    CHECK("fi_ep_bind(server eq)", fi_ep_bind(s->ep, &seq->fid, 0));
    CHECK("fi_ep_bind(server cq)", fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(server)", fi_enable(s->ep));
    s->buf = aligned_alloc(4096, 4096);
    memset(s->buf, 'a' + nservers, 4096);
    s->key = 0x5eed0000 + nservers; /* tcp: mr_mode 0, requested keys */
    CHECK("fi_mr_reg(server)", fi_mr_reg(s->domain, s->buf, 4096, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, s->key, 0,
                                         &s->mr, NULL));
    CHECK("fi_accept", fi_accept(s->ep, NULL, 0));
    fi_freeinfo(req->info);
    servers[nservers++] = s;
}

static void progress_servers(void) {
    struct fi_cq_err_entry e;
    for (int i = 0; i < nservers; i++) {
        struct fi_cq_entry ce;
        if (fi_cq_read(servers[i]->cq, &ce, 1) == -FI_EAVAIL) fi_cq_readerr(servers[i]->cq, &e, 0);
    }
    uint32_t ev;
    char b[256];
    fi_eq_read(seq, &ev, b, sizeof b, 0);
}

/* Waits for an event on a client's EQ while driving everything; returns the event or -errno. */
static long client_event(struct fid_eq *ceq, struct side *c, int *err) {
    uint32_t event;
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    for (int i = 0; i < 20000; i++) {
        serve();
        progress_servers();
        struct fi_cq_entry ce;
        fi_cq_read(c->cq, &ce, 1);
        ssize_t n = fi_eq_read(ceq, &event, buf, sizeof(buf), 0);
        if (n == -FI_EAVAIL) {
            struct fi_eq_err_entry ee = {0};
            fi_eq_readerr(ceq, &ee, 0);
            *err = ee.err;
            return -1;
        }
        if (n >= 0) return event;
        usleep(50);
    }
    return -FI_ETIMEDOUT;
}

/* Posts one fi_read of 8 bytes with key into the client's buffer; returns 0 or the CQ error. */
static int read_with(struct side *c, uint64_t key, struct fid_eq *ceq, int *prov_errno, int *eq_event) {
    ssize_t rc;
    do {
        rc = fi_read(c->ep, c->buf, 8, NULL, 0, 0, key, (void *) 0x77);
        serve();
        progress_servers();
    } while (rc == -FI_EAGAIN);
    if (rc) return (int) rc;
    *eq_event = 0;
    for (int i = 0; i < 40000; i++) {
        progress_servers();
        struct fi_cq_entry ce;
        ssize_t n = fi_cq_read(c->cq, &ce, 1);
        if (n == 1) return 0;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry e = {0};
            fi_cq_readerr(c->cq, &e, 0);
            *prov_errno = e.prov_errno;
            /* did the connection end? one look at the client's EQ */
            for (int j = 0; j < 200 && *eq_event == 0; j++) {
                uint32_t ev;
                char b[256];
                progress_servers();
                ssize_t m = fi_eq_read(ceq, &ev, b, sizeof b, 0);
                if (m >= 0) *eq_event = (int) ev;
                else if (m == -FI_EAVAIL) *eq_event = -1;
                usleep(100);
            }
            return -e.err;
        }
        usleep(25);
    }
    return -FI_ETIMEDOUT;
}

static struct side *client(struct fid_domain *cdom, struct fi_info *cinfo, struct fid_eq **ceq) {
    struct side *c = calloc(1, sizeof *c);
    c->domain = cdom;
    CHECK("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, ceq, NULL));
    CHECK("fi_cq_open(client)", fi_cq_open(cdom, &cq_attr, &c->cq, NULL));
    CHECK("fi_endpoint(client)", fi_endpoint(cdom, cinfo, &c->ep, NULL));
    CHECK("fi_ep_bind(client eq)", fi_ep_bind(c->ep, &(*ceq)->fid, 0));
    CHECK("fi_ep_bind(client cq)", fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(client)", fi_enable(c->ep));
    c->buf = aligned_alloc(4096, 4096);
    CHECK("fi_connect", fi_connect(c->ep, cinfo->dest_addr, NULL, 0));
    int err = 0;
    long ev = client_event(*ceq, c, &err);
    printf("client_connect_event %s\n", ev == FI_CONNECTED ? "FI_CONNECTED" : "other");
    if (ev != FI_CONNECTED) exit(1);
    return c;
}

static void cost(struct fi_info *info, int n, int with_children) {
    struct fid_domain **d = calloc(n, sizeof *d);
    struct fid_cq **q = calloc(n, sizeof *q);
    struct fid_mr **m = calloc(n, sizeof *m);
    static char buf[4096] __attribute__((aligned(4096)));
    int f0 = fds();
    int th0 = threads();
    long h0 = heap();
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        CHECK("fi_domain(cost)", fi_domain(fabric, info, &d[i], NULL));
        if (with_children) {
            CHECK("fi_cq_open(cost)", fi_cq_open(d[i], &cq_attr, &q[i], NULL));
            CHECK("fi_mr_reg(cost)", fi_mr_reg(d[i], buf, sizeof buf, FI_REMOTE_READ, 0, 7, 0, &m[i], NULL));
        }
    }
    double t1 = now_us();
    int f1 = fds();
    int th1 = threads();
    long h1 = heap();
    for (int i = 0; i < n; i++) {
        if (with_children) {
            fi_close(&m[i]->fid);
            fi_close(&q[i]->fid);
        }
        CHECK("fi_close(domain)", fi_close(&d[i]->fid));
    }
    double t2 = now_us();
    const char *what = with_children ? "domain_cq_mr" : "domain";
    printf("%s_count %d\n", what, n);
    printf("%s_fds_per %.2f\n", what, (double) (f1 - f0) / n);
    printf("%s_heap_bytes_per %ld\n", what, (h1 - h0) / n);
    printf("%s_threads_added %d\n", what, th1 - th0);
    printf("%s_open_us_per %.2f\n", what, (t1 - t0) / n);
    printf("%s_close_us_per %.2f\n", what, (t2 - t1) / n);
    printf("%s_fds_after_close_delta %d\n", what, fds() - f0);
    printf("%s_heap_after_close_delta %ld\n", what, heap() - h0);
    free(d);
    free(q);
    free(m);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    struct fi_info *hints = hints_tcp(), *info = NULL, *cinfo = NULL;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    printf("mr_mode %d\n", info->domain_attr->mr_mode);
    printf("progress_data %d progress_control %d\n", info->domain_attr->data_progress,
           info->domain_attr->control_progress);
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_eq_open(listener)", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_eq_open(server connections)", fi_eq_open(fabric, &eq_attr, &seq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));

    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &cinfo));
    struct fid_domain *cdom;
    CHECK("fi_domain(client)", fi_domain(fabric, cinfo, &cdom, NULL));
    struct fid_eq *aeq, *beq;
    struct side *a = client(cdom, cinfo, &aeq);
    struct side *b = client(cdom, cinfo, &beq);
    printf("server_domains_distinct %d\n", nservers == 2 && servers[0]->domain != servers[1]->domain);

    int pe = 0, ev = 0;
    int rc = read_with(b, servers[1]->key, beq, &pe, &ev);
    printf("b_reads_with_own_key_rc %d bytes_ok %d\n", rc, rc == 0 && b->buf[0] == 'b');
    rc = read_with(a, servers[0]->key, aeq, &pe, &ev);
    printf("a_reads_with_own_key_rc %d bytes_ok %d\n", rc, rc == 0 && a->buf[0] == 'a');
    memset(b->buf, 0, 8);
    rc = read_with(b, servers[0]->key, beq, &pe, &ev);
    printf("b_reads_with_a_key_rc %d (%s) prov_errno %d bytes_of_a_read %d\n", rc, rc ? fi_strerror(-rc) : "success",
           pe, b->buf[0] == 'a');
    printf("b_eq_after_failure %s\n", ev == FI_SHUTDOWN ? "FI_SHUTDOWN" : ev == -1 ? "error entry"
                                      : ev == 0 ? "nothing" : "other");
    /* the same key, presented once more on B: is B still usable? */
    rc = read_with(b, servers[1]->key, beq, &pe, &ev);
    printf("b_reads_with_own_key_after_rc %d (%s)\n", rc, rc ? fi_strerror(-rc) : "success");
    memset(a->buf, 0, 8);
    rc = read_with(a, servers[0]->key, aeq, &pe, &ev);
    printf("a_reads_with_own_key_after_rc %d bytes_ok %d\n", rc, rc == 0 && a->buf[0] == 'a');

    cost(info, n, 0);
    cost(info, n, 1);
    cost(info, n, 0); /* again, warm */
    return 0;
}
