/*
 * fabric_scale_bench: what libfabric itself costs a busy connection at N idle ones -- the C
 * figure beside ScaleBench's (./cqflux bench scale).
 *
 * libfabric, provider "tcp", FI_EP_MSG over 127.0.0.1, both sides in this one process as in
 * ScaleBench. Each side has one fabric, one domain, one EQ and one CQ (FI_WAIT_FD): the server's
 * passive endpoint and every accepted endpoint are bound to the server's EQ and CQ, every client
 * endpoint to the client's. The first connection is the busy one; the others are connected and
 * left idle on the same EQ and CQ. The main thread is the client, a second thread the server,
 * which only drives progress: tcp has no progress thread, so the target of an RMA only moves data
 * while someone calls into its CQ (fi_cq(3), "progress"; native-facts.md).
 *
 * For each idle count N (growing: connections are only added) it measures the busy connection's
 * chained operations, one in flight, each posted when the previous one's completion was read:
 *
 *   busy   both threads busy-poll fi_cq_read.
 *   epoll  both threads sleep in epoll_wait on their CQ's FI_WAIT_FD fd, calling fi_trywait(3)
 *          before each sleep (-FI_EAGAIN: read the CQ again first).
 *
 * What a shared CQ costs on tcp: libfabric 1.17's tcp provider progresses a CQ on every
 * fi_cq_read (tcpx_cq_progress) by first visiting every endpoint bound to it, under each
 * endpoint's lock, and only then asking its epoll set which sockets are ready; so the busy
 * endpoint's reads here pay for each idle endpoint on the same CQ, which is what this program
 * shows against cqflux's CQ per connection.
 *
 * Writes are posted with FI_DELIVERY_COMPLETE (cqflux's default completion level); reads complete
 * when the data is local. Each CQ is bound FI_TRANSMIT | FI_RECV; the idle endpoints post nothing.
 *
 * Output: "name value unit" lines (CBaselines reads them), e.g.
 *   fabric.scale.100.write.8.busy.p50 14.21 us
 *   fabric.scale.100.fds 214 fds
 *   fabric.scale.100.rss 9876 KiB
 *
 * Usage: fabric_scale_bench [-n 0,10,100,1000] [-o write.8,read.8,write.4096,read.4096]
 *                           [-m busy,epoll] [-i iterations] [-w warm-up]
 * Each connection holds one socket per side: N idle pairs need about 2N fds (raise ulimit -n).
 * Build: gcc -O2 -Wall -o fabric_scale_bench fabric_scale_bench.c -lfabric -lpthread
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define REGION_SIZE (1u << 16)
#define SERVER_KEY 0xC0FFEEu
#define CLIENT_KEY 0xBEEFu
/* Connects in flight while the idle connections are set up: well under the listen backlog. */
#define CONNECT_BATCH 32
#define MAX_COUNTS 16
#define MAX_OPS 8

#define CHECK(call)                                                                             \
    do {                                                                                        \
        int rc_ = (int) (call);                                                                 \
        if (rc_ < 0) {                                                                          \
            fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #call, rc_,            \
                    fi_strerror(-rc_));                                                         \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

enum mode { BUSY, EPOLL };

struct side {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *eq;
    struct fid_cq *cq;
    struct fid_mr *mr;
    void *buf;
    int cq_fd;
    int epfd;
    struct fid_ep **eps;
    int count;
};

static struct side server, client;
static struct fid_pep *pep;
static uint64_t server_addr, server_key;

static _Atomic int server_mode = BUSY;
static _Atomic int server_stop;
static int server_stop_fd;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) {
        return -1; /* no fd left to list them with: reported as -1 */
    }
    while (readdir(d)) {
        n++;
    }
    closedir(d);
    return n - 3; /* ".", ".." and the directory's own fd */
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) {
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return kib;
}

static struct fi_info *hints(void) {
    struct fi_info *h = fi_allocinfo();
    h->ep_attr->type = FI_EP_MSG;
    h->caps = FI_MSG | FI_RMA;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->fabric_attr->prov_name = strdup("tcp");
    return h;
}

static void open_side(struct side *s, struct fi_info *info, int is_server, int capacity) {
    s->info = info;
    CHECK(fi_fabric(info->fabric_attr, &s->fabric, NULL));
    CHECK(fi_domain(s->fabric, info, &s->domain, NULL));
    struct fi_eq_attr eq_attr = { .size = 4 * CONNECT_BATCH, .wait_obj = FI_WAIT_FD };
    CHECK(fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL));
    struct fi_cq_attr cq_attr = { .size = 256, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD };
    CHECK(fi_cq_open(s->domain, &cq_attr, &s->cq, NULL));
    CHECK(fi_control(&s->cq->fid, FI_GETWAIT, &s->cq_fd));
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->cq_fd, &ev) != 0) {
        perror("epoll_ctl");
        exit(2);
    }
    if (posix_memalign(&s->buf, 4096, REGION_SIZE) != 0) {
        exit(2);
    }
    memset(s->buf, is_server ? 0x5a : 0xa5, REGION_SIZE);
    uint64_t access = is_server ? (FI_REMOTE_READ | FI_REMOTE_WRITE) : (FI_READ | FI_WRITE);
    CHECK(fi_mr_reg(s->domain, s->buf, REGION_SIZE, access, 0, is_server ? SERVER_KEY : CLIENT_KEY, 0, &s->mr,
                    NULL));
    if (s->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        fprintf(stderr, "provider wants FI_MR_ENDPOINT: one region per endpoint is not what this measures\n");
        exit(2);
    }
    s->eps = calloc((size_t) capacity, sizeof(struct fid_ep *));
}

static struct fid_ep *open_endpoint(struct side *s, struct fi_info *info) {
    struct fid_ep *ep;
    CHECK(fi_endpoint(s->domain, info, &ep, NULL));
    CHECK(fi_ep_bind(ep, &s->eq->fid, 0));
    CHECK(fi_ep_bind(ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(ep));
    return ep;
}

static void die_eq(struct fid_eq *eq, const char *who) {
    struct fi_eq_err_entry err = { 0 };
    fi_eq_readerr(eq, &err, 0);
    fprintf(stderr, "%s: eq error %d (%s)\n", who, err.err, fi_eq_strerror(eq, err.prov_errno, err.err_data, NULL,
                                                                           0));
    exit(2);
}

/* Reads one side's EQ once; returns 1 when it held an FI_CONNECTED, accepting an FI_CONNREQ on
 * the server side on an endpoint bound to the server's EQ and CQ. */
static int eq_step(struct side *s, int is_server) {
    struct {
        struct fi_eq_cm_entry entry;
        char data[256];
    } buf;
    uint32_t event;
    ssize_t n = fi_eq_read(s->eq, &event, &buf, sizeof buf, 0);
    if (n == -FI_EAGAIN) {
        return 0;
    }
    if (n == -FI_EAVAIL) {
        die_eq(s->eq, is_server ? "server" : "client");
    }
    CHECK(n);
    if (event == FI_CONNREQ && is_server) {
        struct fid_ep *ep = open_endpoint(s, buf.entry.info);
        CHECK(fi_accept(ep, NULL, 0));
        s->eps[s->count++] = ep;
        fi_freeinfo(buf.entry.info);
        return 0;
    }
    if (event == FI_CONNECTED) {
        return 1;
    }
    fprintf(stderr, "%s: unexpected eq event %u while connecting\n", is_server ? "server" : "client", event);
    exit(2);
}

/* Grows the connections to `total` (the busy one included), CONNECT_BATCH at a time. Runs before
 * the server thread is started (or while it is stopped): this thread drives both sides. */
static void connect_to(struct fi_info *connect_info, int total) {
    struct fi_cq_data_entry comp[8];
    while (client.count < total) {
        int batch = total - client.count < CONNECT_BATCH ? total - client.count : CONNECT_BATCH;
        for (int i = 0; i < batch; i++) {
            struct fid_ep *ep = open_endpoint(&client, connect_info);
            CHECK(fi_connect(ep, connect_info->dest_addr, NULL, 0));
            client.eps[client.count + i] = ep;
        }
        int want = 2 * batch;
        double deadline = now_us() + 30e6;
        while (want > 0) {
            want -= eq_step(&server, 1);
            want -= eq_step(&client, 0);
            (void) fi_cq_read(server.cq, comp, 8);
            (void) fi_cq_read(client.cq, comp, 8);
            if (now_us() > deadline) {
                fprintf(stderr, "connecting %d more (of %d): %d events missing after 30 s\n", batch, total, want);
                exit(2);
            }
        }
        client.count += batch;
    }
}

static void die_cq(struct fid_cq *cq, const char *who) {
    struct fi_cq_err_entry err = { 0 };
    fi_cq_readerr(cq, &err, 0);
    fprintf(stderr, "%s: completion error %d (%s)\n", who, err.err, fi_cq_strerror(cq, err.prov_errno, err.err_data,
                                                                                    NULL, 0));
    exit(3);
}

static void wait_cq(struct side *s, int extra_fd) {
    struct fid *fids[1] = { &s->cq->fid };
    if (fi_trywait(s->fabric, fids, 1) != FI_SUCCESS) {
        return; /* -FI_EAGAIN: poll again before sleeping (fi_trywait(3)) */
    }
    struct epoll_event ev[2];
    int n = epoll_wait(s->epfd, ev, 2, 1000);
    for (int i = 0; i < n; i++) {
        if (ev[i].data.u64 == 2) {
            eventfd_t v;
            eventfd_read(extra_fd, &v); /* level-triggered: consume the nudge */
        }
    }
}

static void *server_main(void *arg) {
    (void) arg;
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 2 };
    epoll_ctl(server.epfd, EPOLL_CTL_ADD, server_stop_fd, &ev);
    struct fi_cq_data_entry comp[16];
    while (!atomic_load_explicit(&server_stop, memory_order_relaxed)) {
        ssize_t n = fi_cq_read(server.cq, comp, 16);
        if (n == -FI_EAVAIL) {
            die_cq(server.cq, "server");
        }
        if (n == -FI_EAGAIN && atomic_load_explicit(&server_mode, memory_order_relaxed) == EPOLL) {
            wait_cq(&server, server_stop_fd);
        }
    }
    epoll_ctl(server.epfd, EPOLL_CTL_DEL, server_stop_fd, NULL);
    return NULL;
}

static int post(struct fid_ep *ep, int is_read, size_t len, void *ctx) {
    struct iovec iov = { .iov_base = client.buf, .iov_len = len };
    void *desc = fi_mr_desc(client.mr);
    struct fi_rma_iov rma = { .addr = server_addr, .len = len, .key = server_key };
    struct fi_msg_rma msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = 0,
                              .rma_iov = &rma, .rma_iov_count = 1, .context = ctx, .data = 0 };
    ssize_t rc = is_read ? fi_readmsg(ep, &msg, FI_COMPLETION)
                         : fi_writemsg(ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    if (rc == -FI_EAGAIN) {
        return 0;
    }
    CHECK(rc);
    return 1;
}

static int reap(enum mode mode) {
    struct fi_cq_data_entry comp[4];
    ssize_t n = fi_cq_read(client.cq, comp, 4);
    if (n > 0) {
        return (int) n;
    }
    if (n == -FI_EAVAIL) {
        die_cq(client.cq, "client");
    }
    if (n != -FI_EAGAIN) {
        CHECK(n);
    }
    if (mode == EPOLL) {
        wait_cq(&client, -1);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void latency(int idle, const char *opname, size_t len, enum mode mode, int iters, int warmup) {
    int is_read = strcmp(opname, "read") == 0;
    atomic_store(&server_mode, mode);
    eventfd_write(server_stop_fd, 1); /* nudge the server out of a sleep so it sees the mode */
    double *samples = malloc(sizeof(double) * (size_t) iters);
    struct fi_context2 ctx;
    struct fid_ep *busy = client.eps[0];
    for (int i = -warmup; i < iters; i++) {
        double t0 = now_us();
        while (!post(busy, is_read, len, &ctx)) {
            reap(BUSY);
        }
        while (reap(mode) == 0) {
        }
        if (i >= 0) {
            samples[i] = now_us() - t0;
        }
    }
    qsort(samples, (size_t) iters, sizeof(double), cmp_double);
    const char *m = mode == BUSY ? "busy" : "epoll";
    printf("fabric.scale.%d.%s.%zu.%s.p50 %.2f us\n", idle, opname, len, m, samples[iters / 2]);
    printf("fabric.scale.%d.%s.%zu.%s.p99 %.2f us\n", idle, opname, len, m, samples[(int) (iters * 0.99)]);
    fflush(stdout);
    free(samples);
}

static int parse_list(char *arg, char **out, int max) {
    int n = 0;
    for (char *t = strtok(arg, ","); t != NULL; t = strtok(NULL, ",")) {
        if (n == max) {
            fprintf(stderr, "list %s: more than %d entries\n", arg, max);
            exit(64);
        }
        out[n++] = t;
    }
    return n;
}

static void usage(const char *self) {
    fprintf(stderr, "usage: %s [-n 0,10,100,1000] [-o write.8,read.8,write.4096,read.4096] [-m busy,epoll]"
            " [-i iterations] [-w warm-up]\n", self);
    exit(64);
}

int main(int argc, char **argv) {
    char counts_arg[256] = "0,10,100,1000", ops_arg[256] = "write.8,read.8,write.4096,read.4096",
         modes_arg[64] = "busy,epoll";
    int iters = 20000, warmup = 2000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 == argc) {
            usage(argv[0]);
        } else if (!strcmp(argv[i], "-n")) {
            snprintf(counts_arg, sizeof counts_arg, "%s", argv[++i]);
        } else if (!strcmp(argv[i], "-o")) {
            snprintf(ops_arg, sizeof ops_arg, "%s", argv[++i]);
        } else if (!strcmp(argv[i], "-m")) {
            snprintf(modes_arg, sizeof modes_arg, "%s", argv[++i]);
        } else if (!strcmp(argv[i], "-i")) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-w")) {
            warmup = atoi(argv[++i]);
        } else {
            usage(argv[0]);
        }
    }
    if (iters < 100 || warmup < 0) {
        fprintf(stderr, "-i %d must be >= 100 and -w %d >= 0\n", iters, warmup);
        return 64;
    }
    char *count_s[MAX_COUNTS], *op_s[MAX_OPS], *mode_s[2];
    int ncounts = parse_list(counts_arg, count_s, MAX_COUNTS);
    int nops = parse_list(ops_arg, op_s, MAX_OPS);
    int nmodes = parse_list(modes_arg, mode_s, 2);
    int counts[MAX_COUNTS], max_count = 0;
    for (int c = 0; c < ncounts; c++) {
        counts[c] = atoi(count_s[c]);
        if (counts[c] < 0 || (c > 0 && counts[c] < counts[c - 1])) {
            fprintf(stderr, "-n %s: idle counts must be >= 0 and growing\n", count_s[c]);
            return 64;
        }
        max_count = counts[c];
    }
    char opname[MAX_OPS][8];
    size_t opsize[MAX_OPS];
    for (int o = 0; o < nops; o++) {
        unsigned long size;
        if (sscanf(op_s[o], "%7[a-z].%lu", opname[o], &size) != 2
                || (strcmp(opname[o], "write") != 0 && strcmp(opname[o], "read") != 0) || size < 1
                || size > REGION_SIZE) {
            fprintf(stderr, "-o %s is not <write|read>.<bytes> with bytes in [1, %u]\n", op_s[o], REGION_SIZE);
            return 64;
        }
        opsize[o] = size;
    }
    enum mode modes[2];
    for (int m = 0; m < nmodes; m++) {
        if (strcmp(mode_s[m], "busy") != 0 && strcmp(mode_s[m], "epoll") != 0) {
            fprintf(stderr, "-m %s is neither busy nor epoll\n", mode_s[m]);
            return 64;
        }
        modes[m] = strcmp(mode_s[m], "busy") == 0 ? BUSY : EPOLL;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    int base_fds = open_fds();
    struct fi_info *h = hints(), *listen_info, *connect_info;
    CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, h, &listen_info));
    open_side(&server, listen_info, 1, max_count + 1);
    CHECK(fi_passive_ep(server.fabric, listen_info, &pep, NULL));
    CHECK(fi_pep_bind(pep, &server.eq->fid, 0));
    CHECK(fi_listen(pep));
    char address[64];
    size_t length = sizeof address;
    CHECK(fi_getname(&pep->fid, address, &length));
    char port[16];
    snprintf(port, sizeof port, "%d", ntohs(((struct sockaddr_in *) address)->sin_port));
    CHECK(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", port, 0, h, &connect_info));
    fi_freeinfo(h);
    open_side(&client, connect_info, 0, max_count + 1);
    server_addr = (server.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t) (uintptr_t) server.buf : 0;
    server_key = fi_mr_key(server.mr);
    server_stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (server_stop_fd < 0) {
        perror("eventfd");
        return 1;
    }
    printf("fabric.scale.info provider=%s fds-before-fabric=%d\n", connect_info->fabric_attr->prov_name, base_fds);

    for (int c = 0; c < ncounts; c++) {
        connect_to(connect_info, counts[c] + 1);
        printf("fabric.scale.%d.fds %d fds\n", counts[c], open_fds());
        printf("fabric.scale.%d.rss %ld KiB\n", counts[c], rss_kib());
        atomic_store(&server_stop, 0);
        pthread_t th;
        if (pthread_create(&th, NULL, server_main, NULL) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
        for (int m = 0; m < nmodes; m++) {
            for (int o = 0; o < nops; o++) {
                latency(counts[c], opname[o], opsize[o], modes[m], iters, warmup);
            }
        }
        atomic_store(&server_stop, 1);
        eventfd_write(server_stop_fd, 1);
        pthread_join(th, NULL);
    }

    for (int i = 0; i < client.count; i++) {
        fi_close(&client.eps[i]->fid);
    }
    for (int i = 0; i < server.count; i++) {
        fi_close(&server.eps[i]->fid);
    }
    fi_close(&pep->fid);
    /* The queues, regions, domains and fabrics go with the process: a measurement's exit. */
    return 0;
}
