/*
 * rpma_lat_bench: the native baseline for cqflux's rpma transport (issue 13's rpma anchor).
 *
 * librpma over an RDMA device (rxe0 in the Soft-RoCE lane): the process forks; the child is a
 * passive server (registers a region for WRITE_DST | READ_SRC | FLUSH_TYPE_VISIBILITY, sends its
 * descriptor as connection private data, then sleeps in rpma_conn_next_event until the client
 * disconnects: one-sided operations need nothing from its CPU), the parent the client. The client
 * posts exactly the work requests cqflux's reactive API posts (reactor/OpKind.java), one
 * operation in flight:
 *
 *   read         rpma_read, RPMA_F_COMPLETION_ALWAYS
 *   write        rpma_write, RPMA_F_COMPLETION_ALWAYS
 *   dwrite       durableWrite(): rpma_write with RPMA_F_COMPLETION_ON_ERROR (unsignaled) and then
 *                rpma_flush(RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS) of the same range;
 *                the flush's completion ends the operation (rpma_flush(3): over rxe it is an RDMA
 *                read under the hood, completing with opcode IBV_WC_RDMA_READ)
 *
 * and waits for its completion in one of two ways:
 *
 *   busy   spin on rpma_cq_get_wc(3) (cqflux's WaitStrategy.BUSY_POLL)
 *   epoll  the CQ's completion-channel fd (rpma_cq_get_fd(3), made non-blocking) in an epoll set;
 *          rpma_cq_get_wc first, and when it finds nothing epoll_wait, rpma_cq_wait (acks the
 *          event and re-arms the CQ) and rpma_cq_get_wc again (cqflux's WaitStrategy.BLOCKING).
 *          A wake-up may carry no completion (RPMA_E_NO_COMPLETION, rpma_cq_get_wc(3)).
 *
 * Each sample is the time from just before the post to the completion (clock_gettime
 * CLOCK_MONOTONIC). Output, in the format of fabric_rma_bench.c (CBaselines.java parses it):
 *   rpma.read.8.busy.lat.p50 31.20 us
 * with .mean, .p50 and .p99 per operation, size (8, 4096) and wait mode.
 *
 * Throughput (issue 13's goal: 8-byte writes with 64 in flight): after the latency figures of a
 * wait mode, `-t` 8-byte writes (after a tenth as many unmeasured) with TPUT_WINDOW in flight, each
 * rpma_write with RPMA_F_COMPLETION_ALWAYS (the work request cqflux's write() posts; its writeAll
 * keeps sendCredits/2 = 64 in flight with the default 128 credits), write i to offset
 * (i mod 64) * 8 on both sides as cqflux's RpmaLatBench does, completions reaped up to 64 at a time:
 *   rpma.write.8.busy.tput.w64 41234 ops/s
 * and then the same window with selective signaling (one write in 16 signaled; see throughput()):
 *   rpma.write.8.busy.tput.w64.sel16 45678 ops/s
 * The client's connection has cqflux's ConnectionConfig.DEFAULT queue sizes (SQ 128, RQ 128, one
 * CQ of 256 for sends and receives, no separate receive CQ; rpma_conn_cfg_set_*(3)), as 64 in
 * flight needs more than librpma's default queue of 10.
 *
 * Usage: rpma_lat_bench [-n iterations] [-w warmup] [-t writes] [-p port] [-m busy|epoll|both] [ADDRESS]
 *   ADDRESS defaults to $CQFLUX_RPMA_ADDRESS (10.0.2.15 in the lane).
 * Build: gcc -O2 -Wall -o rpma_lat_bench rpma_lat_bench.c -lrpma -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <librpma.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define REGION (64 * 1024)
#define TPUT_WINDOW 64
#define TPUT_SIZE 8
#define DEADLINE_S 600

#define CHECK(call)                                                                             \
    do {                                                                                        \
        int rc_ = (call);                                                                       \
        if (rc_) {                                                                              \
            fprintf(stderr, "%s:%d: %s = %d (%s)\n", who, __LINE__, #call, rc_, rpma_err_2str(rc_)); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

enum mode { BUSY, EPOLL };
enum op { READ, WRITE, DWRITE };
static const char *op_names[] = { "read", "write", "dwrite" };

static const char *who = "rpma_lat_bench";

static struct rpma_conn *conn;
static struct rpma_cq *cq;
static struct rpma_mr_local *lmr;
static struct rpma_mr_remote *rmr;
static int epfd;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void server(const char *addr, const char *port, int ready_fd) {
    struct ibv_context *dev;
    struct rpma_peer *peer;
    struct rpma_ep *ep;
    struct rpma_mr_local *mr;
    struct rpma_conn_req *req;
    struct rpma_conn *c;
    enum rpma_conn_event ev;
    size_t desc_size;
    char desc[256];
    void *mem;

    who = "server";
    CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
    CHECK(rpma_peer_new(dev, &peer));
    CHECK(rpma_ep_listen(peer, addr, port, &ep));
    if (posix_memalign(&mem, 4096, REGION))
        exit(2);
    memset(mem, 0x5a, REGION);
    /* The access cqflux's benchmark server grants: plain memory, so VISIBILITY flushes only. */
    CHECK(rpma_mr_reg(peer, mem, REGION,
                      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
    CHECK(rpma_mr_get_descriptor_size(mr, &desc_size));
    if (desc_size > sizeof(desc))
        exit(2);
    CHECK(rpma_mr_get_descriptor(mr, desc));
    struct rpma_conn_private_data pdata = { desc, (uint8_t) desc_size };
    if (write(ready_fd, "L", 1) != 1)
        exit(2);
    close(ready_fd);
    CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
    CHECK(rpma_conn_req_connect(&req, &pdata, &c));
    CHECK(rpma_conn_next_event(c, &ev));
    if (ev != RPMA_CONN_ESTABLISHED) {
        fprintf(stderr, "server: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
        exit(2);
    }
    /* Passive until the client disconnects: one-sided operations need no server CPU. */
    CHECK(rpma_conn_next_event(c, &ev));
    CHECK(rpma_conn_disconnect(c));
    CHECK(rpma_conn_delete(&c));
    CHECK(rpma_mr_dereg(&mr));
    CHECK(rpma_ep_shutdown(&ep));
    CHECK(rpma_peer_delete(&peer));
    exit(ev == RPMA_CONN_CLOSED ? 0 : 1);
}

/* Waits for exactly one completion (one operation in flight); fails loudly on an error status. */
static void wait_one(enum mode mode, uint64_t want) {
    struct ibv_wc wc;
    int n;
    for (;;) {
        int rc = rpma_cq_get_wc(cq, 1, &wc, &n);
        if (rc == 0 && n == 1) {
            if (wc.status != IBV_WC_SUCCESS || wc.wr_id != want) {
                fprintf(stderr, "client: completion wr_id=%" PRIu64 " (wanted %" PRIu64 ") status %s\n",
                        (uint64_t) wc.wr_id, want, ibv_wc_status_str(wc.status));
                exit(2);
            }
            return;
        }
        if (rc != RPMA_E_NO_COMPLETION)
            CHECK(rc);
        if (mode == EPOLL) {
            struct epoll_event ev;
            int k = epoll_wait(epfd, &ev, 1, -1);
            if (k < 0 && errno != EINTR) {
                perror("epoll_wait");
                exit(2);
            }
            if (k == 1) {
                /* Acks the event and re-arms the CQ; nothing pending is not an error. */
                rc = rpma_cq_wait(cq);
                if (rc != RPMA_E_NO_COMPLETION)
                    CHECK(rc);
            }
        }
    }
}

static void post(enum op op, size_t len, uint64_t id) {
    switch (op) {
    case READ:
        CHECK(rpma_read(conn, lmr, 0, rmr, 0, len, RPMA_F_COMPLETION_ALWAYS, (void *) (uintptr_t) id));
        break;
    case WRITE:
        CHECK(rpma_write(conn, rmr, 0, lmr, 0, len, RPMA_F_COMPLETION_ALWAYS, (void *) (uintptr_t) id));
        break;
    case DWRITE:
        CHECK(rpma_write(conn, rmr, 0, lmr, 0, len, RPMA_F_COMPLETION_ON_ERROR, (void *) (uintptr_t) (id | 1ULL << 63)));
        CHECK(rpma_flush(conn, rmr, 0, len, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
                         (void *) (uintptr_t) id));
        break;
    }
}

static void latency(enum op op, size_t len, enum mode mode, int iters, int warmup) {
    double *samples = malloc(sizeof(double) * iters);
    if (!samples)
        exit(2);
    for (int i = -warmup; i < iters; i++) {
        uint64_t id = (uint64_t) (i + warmup + 1);
        double t0 = now_us();
        post(op, len, id);
        wait_one(mode, id);
        if (i >= 0)
            samples[i] = now_us() - t0;
    }
    qsort(samples, iters, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < iters; i++)
        sum += samples[i];
    const char *m = mode == BUSY ? "busy" : "epoll";
    printf("rpma.%s.%zu.%s.lat.mean %.2f us\n", op_names[op], len, m, sum / iters);
    printf("rpma.%s.%zu.%s.lat.p50 %.2f us\n", op_names[op], len, m, samples[iters / 2]);
    printf("rpma.%s.%zu.%s.lat.p99 %.2f us\n", op_names[op], len, m, samples[(int) (iters * 0.99)]);
    fflush(stdout);
    free(samples);
}

/* Sleeps until the CQ's channel fd fires, then acks and re-arms (rpma_cq_wait(3)). */
static void wait_channel(void) {
    struct epoll_event ev;
    int k = epoll_wait(epfd, &ev, 1, -1);
    if (k < 0 && errno != EINTR) {
        perror("epoll_wait");
        exit(2);
    }
    if (k == 1) {
        int rc = rpma_cq_wait(cq);
        if (rc != RPMA_E_NO_COMPLETION)
            CHECK(rc);
    }
}

/*
 * `total` 8-byte writes with TPUT_WINDOW in flight, after total / 10 unmeasured ones; ops/s.
 * sel == 0: every write signaled (RPMA_F_COMPLETION_ALWAYS), as cqflux's writeAll posts them.
 * sel > 0: selective signaling (issue 13): one write in `sel`, the write that fills the window and
 * the last one are signaled; the others are posted with RPMA_F_COMPLETION_ON_ERROR
 * (rpma_write(3)) and retired by the next signaled completion: an RC send queue completes in
 * order (ibv_post_send(3): an unsignaled WR's slot is freed by the next signaled completion), so
 * a signaled write's success means every write before it succeeded. wr_id carries the write's
 * sequence, so `done` jumps to it.
 */
static void throughput(enum mode mode, int total, int sel) {
    struct ibv_wc wc[64];
    int warm = total / 10;
    long posted = 0, done = 0, target = total + warm;
    double t0 = 0;
    while (done < target) {
        while (posted - done < TPUT_WINDOW && posted < target) {
            size_t off = (size_t) (posted % TPUT_WINDOW) * TPUT_SIZE;
            long seq = posted + 1;
            int signaled = sel == 0 || seq % sel == 0 || seq == target || seq - done == TPUT_WINDOW;
            CHECK(rpma_write(conn, rmr, off, lmr, off, TPUT_SIZE,
                             signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
                             (void *) (uintptr_t) seq));
            posted++;
        }
        int n = 0;
        int rc = rpma_cq_get_wc(cq, 64, wc, &n);
        if (rc == 0) {
            for (int i = 0; i < n; i++) {
                if (wc[i].status != IBV_WC_SUCCESS) {
                    fprintf(stderr, "client: write completion wr_id=%" PRIu64 " status %s\n", (uint64_t) wc[i].wr_id,
                            ibv_wc_status_str(wc[i].status));
                    exit(2);
                }
            }
            if (sel == 0) {
                done += n;
            } else if (n > 0) {
                done = (long) wc[n - 1].wr_id; /* in order: the last one retires all before it */
            }
        } else if (rc != RPMA_E_NO_COMPLETION) {
            CHECK(rc);
        } else if (mode == EPOLL) {
            wait_channel();
        }
        if (t0 == 0 && done >= warm) {
            t0 = now_us();
            target = done + total;
        }
    }
    double secs = (now_us() - t0) / 1e6;
    if (sel == 0)
        printf("rpma.write.%d.%s.tput.w%d %.0f ops/s\n", TPUT_SIZE, mode == BUSY ? "busy" : "epoll", TPUT_WINDOW,
               total / secs);
    else
        printf("rpma.write.%d.%s.tput.w%d.sel%d %.0f ops/s\n", TPUT_SIZE, mode == BUSY ? "busy" : "epoll",
               TPUT_WINDOW, sel, total / secs);
    fflush(stdout);
}

static int client(const char *addr, const char *port, int iters, int warmup, int modes, int tput) {
    struct ibv_context *dev;
    struct rpma_peer *peer;
    struct rpma_conn_req *req;
    struct rpma_conn_private_data pdata;
    enum rpma_conn_event ev;
    void *mem;

    who = "client";
    CHECK(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev));
    CHECK(rpma_peer_new(dev, &peer));
    if (posix_memalign(&mem, 4096, REGION))
        return 2;
    memset(mem, 0xa5, REGION);
    CHECK(rpma_mr_reg(peer, mem, REGION, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &lmr));
    /* cqflux's ConnectionConfig.DEFAULT queue sizes (RpmaTransport sets the same four). */
    struct rpma_conn_cfg *cfg;
    CHECK(rpma_conn_cfg_new(&cfg));
    CHECK(rpma_conn_cfg_set_sq_size(cfg, 128));
    CHECK(rpma_conn_cfg_set_rq_size(cfg, 128));
    CHECK(rpma_conn_cfg_set_cq_size(cfg, 256));
    CHECK(rpma_conn_cfg_set_rcq_size(cfg, 0)); /* no separate receive CQ: receives share the main one */
    CHECK(rpma_conn_req_new(peer, addr, port, cfg, &req));
    CHECK(rpma_conn_cfg_delete(&cfg));
    CHECK(rpma_conn_req_connect(&req, NULL, &conn));
    CHECK(rpma_conn_next_event(conn, &ev));
    if (ev != RPMA_CONN_ESTABLISHED) {
        fprintf(stderr, "client: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
        return 2;
    }
    CHECK(rpma_conn_get_private_data(conn, &pdata));
    CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &rmr));
    CHECK(rpma_conn_get_cq(conn, &cq));

    int fd;
    CHECK(rpma_cq_get_fd(cq, &fd));
    /* Non-blocking, as cqflux's transport makes it: rpma_cq_wait then never blocks the waiter. */
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
        perror("fcntl");
        return 2;
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event eev = { .events = EPOLLIN, .data.u64 = 1 };
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &eev) != 0) {
        perror("epoll_ctl");
        return 2;
    }

    printf("rpma.info address=%s iterations=%d warmup=%d\n", addr, iters, warmup);
    static const size_t sizes[] = { 8, 4096 };
    for (int m = BUSY; m <= EPOLL; m++) {
        if (!(modes & (1 << m)))
            continue;
        for (int o = READ; o <= DWRITE; o++)
            for (int s = 0; s < 2; s++)
                latency((enum op) o, sizes[s], (enum mode) m, iters, warmup);
        if (tput > 0) {
            throughput((enum mode) m, tput, 0);
            throughput((enum mode) m, tput, 16);
        }
    }

    CHECK(rpma_conn_disconnect(conn));
    CHECK(rpma_conn_next_event(conn, &ev));
    CHECK(rpma_conn_delete(&conn));
    CHECK(rpma_mr_remote_delete(&rmr));
    CHECK(rpma_mr_dereg(&lmr));
    CHECK(rpma_peer_delete(&peer));
    free(mem);
    return 0;
}

int main(int argc, char **argv) {
    int iters = 5000, warmup = 500, modes = 3, tput = 0, opt, pipefd[2], status;
    const char *port = "7310";
    char c;

    while ((opt = getopt(argc, argv, "n:w:p:m:t:")) != -1) {
        switch (opt) {
        case 'n': iters = atoi(optarg); break;
        case 't': tput = atoi(optarg); break;
        case 'w': warmup = atoi(optarg); break;
        case 'p': port = optarg; break;
        case 'm':
            modes = !strcmp(optarg, "busy") ? 1 : !strcmp(optarg, "epoll") ? 2 : !strcmp(optarg, "both") ? 3 : 0;
            break;
        default: modes = 0;
        }
    }
    if (iters < 100 || warmup < 0 || modes == 0 || tput < 0) {
        fprintf(stderr, "usage: %s [-n iterations >= 100] [-w warmup >= 0] [-t writes >= 0] [-p port] [-m busy|epoll|both] [ADDRESS]\n",
                argv[0]);
        return 2;
    }
    const char *addr = optind < argc ? argv[optind] : getenv("CQFLUX_RPMA_ADDRESS");
    if (!addr) {
        fprintf(stderr, "rpma_lat_bench: no ADDRESS given and CQFLUX_RPMA_ADDRESS is not set\n");
        return 2;
    }
    if (pipe(pipefd))
        return 2;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        close(pipefd[0]);
        alarm(DEADLINE_S);
        server(addr, port, pipefd[1]);
    }
    close(pipefd[1]);
    alarm(DEADLINE_S);
    struct pollfd pfd = { pipefd[0], POLLIN, 0 };
    if (poll(&pfd, 1, 60 * 1000) != 1 || read(pipefd[0], &c, 1) != 1) {
        fprintf(stderr, "client: the server never listened\n");
        waitpid(pid, &status, 0);
        return 2;
    }
    int rc = client(addr, port, iters, warmup, modes, tput);
    fflush(stdout);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "rpma_lat_bench: the server failed (status %d)\n", status);
        rc = 2;
    }
    return rc;
}
