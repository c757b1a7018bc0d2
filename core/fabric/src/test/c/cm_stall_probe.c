/*
 * cm_stall_probe: does libfabric 1.17's tcp provider read a connection request's header and
 * private data with a blocking recv inside fi_eq_read(3) of the passive endpoint's event queue,
 * so that a client which sends part of a request and then nothing holds the reader? And does a
 * receive timeout on the listening socket (socket(7) SO_RCVTIMEO, which an accepted socket takes
 * over from its listener on Linux) bound that read, the request then dropped by the provider?
 *
 * One process, 127.0.0.1: a passive endpoint listens; a raw TCP socket connects and sends the
 * 32-byte header of a request that announces 4 bytes of private data (struct ofi_ctrl_hdr of
 * libfabric 1.17: version 3, type ofi_ctrl_connreq 0, seg_size 4 in network order) and none of
 * the data; the EQ is read (fi_eq_read, non-blocking by its contract) and the call timed. Then the
 * same with SO_RCVTIMEO of 100 ms on the listening socket, found among /proc/self/fd as the socket
 * that listens (SO_ACCEPTCONN) on the passive endpoint's port (fi_getname). A well-formed client
 * (fi_connect) after it must still be reported (FI_CONNREQ).
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/cm_stall_probe cm_stall_probe.c -lfabric && /tmp/cm_stall_probe
 * Output: "name value" lines; the blocking read is cut by an alarm after 2 s in the first case.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHECK(what, call) do { int _r = (int) (call); if (_r < 0) { \
    printf("%s %d %s\n", what, _r, fi_strerror(-_r)); exit(1); } } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void on_alarm(int sig) {
    (void) sig; /* interrupts the blocking recv (no SA_RESTART) */
}

static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    while (d && readdir(d) != NULL) {
        n++;
    }
    if (d) {
        closedir(d);
    }
    return n;
}

/* The fd that listens on port, or -1. */
static int listening_fd(int port) {
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int found = -1;
    while (d && (e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        struct sockaddr_in a;
        socklen_t al = sizeof(a);
        int acc = 0;
        socklen_t accl = sizeof(acc);
        if (e->d_name[0] == '.' || getsockname(fd, (struct sockaddr *) &a, &al) != 0) {
            continue;
        }
        if (a.sin_family == AF_INET && ntohs(a.sin_port) == port
                && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &accl) == 0 && acc) {
            found = fd;
        }
    }
    if (d) {
        closedir(d);
    }
    return found;
}

static int partial_request(struct sockaddr_in *to) {
    /* struct ofi_ctrl_hdr (32 bytes in 1.17): version 3, type connreq 0, seg_size 4 (big-endian
     * u16 at 2), then zeros but byte 24, as a real client's request reads (captured). */
    unsigned char hdr[32] = {3, 0, 0, 4};
    hdr[24] = 1;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *) to, sizeof(*to)) != 0 || send(s, hdr, sizeof(hdr), 0) != sizeof(hdr)) {
        printf("raw_client_failed 1\n");
        exit(1);
    }
    return s;
}

/* Reads the EQ until an entry or the deadline; {returns the last fi_eq_read result}. */
static double longest_call_ms;

static ssize_t read_eq(struct fid_eq *eq, double ms, uint32_t *event) {
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    double end = now_ms() + ms;
    ssize_t n;
    longest_call_ms = 0;
    do {
        double c0 = now_ms();
        n = fi_eq_read(eq, event, buf, sizeof(buf), 0);
        if (now_ms() - c0 > longest_call_ms) {
            longest_call_ms = now_ms() - c0;
        }
        if (n >= 0 && *event == FI_CONNREQ) {
            struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *) buf;
            fi_reject((struct fid_pep *) cm->fid, cm->info->handle, NULL, 0);
            fi_freeinfo(cm->info);
        }
    } while (n == -FI_EAGAIN && now_ms() < end);
    return n;
}

int main(void) {
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    struct fid_fabric *fabric;
    struct fid_eq *peq;
    struct fid_pep *pep;
    struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);

    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup("tcp");
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info));
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_eq_open", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));
    int port = ntohs(addr.sin_port);
    printf("listening_port %d\n", port);

    /* 1: no timeout. */
    uint32_t event = 0;
    int s1 = partial_request(&addr);
    usleep(20000); /* the header is there: the listener's EQ sees the socket readable */
    alarm(2);
    double t0 = now_ms();
    ssize_t n = read_eq(peq, 500, &event);
    double took = now_ms() - t0;
    alarm(0);
    printf("without_timeout_eq_read_ms %.0f\n", took);
    printf("without_timeout_longest_call_ms %.0f\n", longest_call_ms);
    printf("without_timeout_eq_read_result %zd\n", n);
    close(s1);
    read_eq(peq, 100, &event); /* whatever the provider does with the closed socket */

    /* 2: SO_RCVTIMEO 100 ms on the listening socket. */
    int lfd = listening_fd(port);
    printf("listening_fd_found %d\n", lfd >= 0);
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
        printf("setsockopt_failed 1\n");
        return 1;
    }
    int fds0 = open_fds();
    int s2 = partial_request(&addr);
    usleep(20000);
    alarm(2);
    t0 = now_ms();
    n = read_eq(peq, 500, &event);
    took = now_ms() - t0;
    alarm(0);
    printf("with_timeout_eq_read_ms %.0f\n", took);
    printf("with_timeout_longest_call_ms %.0f\n", longest_call_ms);
    char b;
    struct timeval ctv = {.tv_sec = 1};
    setsockopt(s2, SOL_SOCKET, SO_RCVTIMEO, &ctv, sizeof(ctv));
    ssize_t r = recv(s2, &b, 1, 0);
    printf("with_timeout_raw_client_closed_by_server %d\n", r == 0);
    printf("with_timeout_server_fds_held_beside_the_client_socket %d\n", open_fds() - fds0 - 1);
    close(s2);
    read_eq(peq, 100, &event);
    printf("with_timeout_server_fds_held_after_the_client_closed %d\n", open_fds() - fds0);

    /* 3: a well-formed client is still reported. */
    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    struct fi_info *cinfo = NULL;
    struct fid_domain *domain;
    struct fid_eq *ceq;
    struct fid_ep *cep;
    struct fid_cq *ccq;
    struct fi_cq_attr cq_attr = {.size = 16, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &cinfo));
    CHECK("fi_domain", fi_domain(fabric, cinfo, &domain, NULL));
    CHECK("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, &ceq, NULL));
    CHECK("fi_endpoint(client)", fi_endpoint(domain, cinfo, &cep, NULL));
    CHECK("fi_ep_bind(client eq)", fi_ep_bind(cep, &ceq->fid, 0));
    CHECK("fi_cq_open(client)", fi_cq_open(domain, &cq_attr, &ccq, NULL));
    CHECK("fi_ep_bind(client cq)", fi_ep_bind(cep, &ccq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(client)", fi_enable(cep));
    CHECK("fi_connect", fi_connect(cep, cinfo->dest_addr, "hello", 5));
    event = 0;
    double end = now_ms() + 2000;
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    n = -FI_EAGAIN;
    while (now_ms() < end) {
        fi_eq_read(ceq, &event, buf, sizeof(buf), 0); /* the client's progress */
        n = fi_eq_read(peq, &event, buf, sizeof(buf), 0);
        if (n >= 0) {
            break;
        }
    }
    printf("well_formed_client_reported %d\n", n >= 0 && event == FI_CONNREQ);
    return 0;
}
