/*
 * eventfd_loop_bench: the cost of the wake-up path alone, the floor for the Java event loop's
 * cross-thread EventLoop.execute().
 *
 * A "loop" thread sleeps in epoll_wait on an eventfd, the way cqflux's loop does (eventfd(2):
 * a write adds to the counter and makes the fd readable; a read returns and resets it).
 *
 *   spin  the caller writes the loop's eventfd and spins on an atomic flag that the loop sets
 *         after epoll_wait returned and it read the eventfd. One sleeping wake-up per round
 *         trip: the same shape as the JMH benchmark that calls execute() and spins until the
 *         task has run.
 *   pingpong  both threads sleep in epoll on their own eventfd and wake each other: two
 *         sleeping wake-ups per round trip.
 *
 * Measured on the project's 2-vCPU VMs: "spin" (one sleeping wake-up) is SLOWER than "pingpong"
 * (two), ~15-18 us against ~6-7 us median. In pingpong the waker goes to sleep right after its
 * write, so the scheduler can run the wakee on the waker's own CPU (a plain context switch); in
 * spin the waker keeps its CPU, so the wakee must be started on the other, idle vCPU -- an
 * inter-processor interrupt and a vCPU leaving its halt, which a hypervisor makes expensive.
 * The Java loop's cross-thread execute() has the spin shape when the caller keeps running.
 *
 * Output: "name value unit" lines, e.g. "eventfd.spin.rtt.p50 6.10 us".
 * Usage: eventfd_loop_bench [-q] [-n iterations]
 * Build: gcc -O2 -o eventfd_loop_bench eventfd_loop_bench.c -lpthread
 */
#define _GNU_SOURCE
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

static int loop_efd, caller_efd, loop_ep, caller_ep;
static _Atomic long flag;
static _Atomic int mode; /* 0 spin, 1 pingpong, 2 stop */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int epoll_on(int fd) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        perror("epoll");
        exit(2);
    }
    return ep;
}

static void sleep_and_consume(int ep, int efd) {
    struct epoll_event ev;
    for (;;) {
        int n = epoll_wait(ep, &ev, 1, -1);
        if (n == 1) {
            eventfd_t v;
            if (eventfd_read(efd, &v) == 0) {
                return;
            }
        }
    }
}

static void *loop_main(void *arg) {
    (void) arg;
    for (;;) {
        sleep_and_consume(loop_ep, loop_efd);
        int m = atomic_load(&mode);
        if (m == 2) {
            return NULL;
        }
        if (m == 0) {
            atomic_fetch_add_explicit(&flag, 1, memory_order_release);
        } else {
            eventfd_write(caller_efd, 1);
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *s, int n) {
    qsort(s, n, sizeof(double), cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        sum += s[i];
    }
    printf("eventfd.%s.rtt.mean %.2f us\n", name, sum / n);
    printf("eventfd.%s.rtt.p50 %.2f us\n", name, s[n / 2]);
    printf("eventfd.%s.rtt.p99 %.2f us\n", name, s[(int) (n * 0.99)]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int iters = 50000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q")) {
            iters = 10000;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [-q] [-n iterations]\n", argv[0]);
            return 64;
        }
    }
    if (iters < 100) {
        fprintf(stderr, "iterations %d is below 100\n", iters);
        return 64;
    }
    loop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    caller_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    loop_ep = epoll_on(loop_efd);
    caller_ep = epoll_on(caller_efd);
    pthread_t th;
    pthread_create(&th, NULL, loop_main, NULL);
    double *s = malloc(sizeof(double) * iters);
    int warm = iters / 10;

    atomic_store(&mode, 0);
    for (int i = -warm; i < iters; i++) {
        long before = atomic_load_explicit(&flag, memory_order_acquire);
        double t0 = now_us();
        eventfd_write(loop_efd, 1);
        while (atomic_load_explicit(&flag, memory_order_acquire) == before) {
            __builtin_ia32_pause();
        }
        if (i >= 0) {
            s[i] = now_us() - t0;
        }
    }
    report("spin", s, iters);

    atomic_store(&mode, 1);
    for (int i = -warm; i < iters; i++) {
        double t0 = now_us();
        eventfd_write(loop_efd, 1);
        sleep_and_consume(caller_ep, caller_efd);
        if (i >= 0) {
            s[i] = now_us() - t0;
        }
    }
    report("pingpong", s, iters);

    atomic_store(&mode, 2);
    eventfd_write(loop_efd, 1);
    pthread_join(th, NULL);
    free(s);
    return 0;
}
