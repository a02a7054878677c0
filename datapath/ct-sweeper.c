/*
 * The datapath's expiry thread: connections time out off the packet
 * path.
 *
 * What it is for
 * ==============
 * The tracker (datapath/conntrack.c) never removes a connection on the
 * packet path: a lookup that finds an expired one treats it as absent,
 * and the memory, the slot in the index and the count against the limits
 * stay taken until something reclaims them.  That something is
 * fdp__ct_sweep(), which looks at a bounded slice of records, removes
 * the expired ones and, after an RCU grace period, frees them.  Somebody
 * has to call it: a pmd must not (a grace period waits for every pmd's
 * read-side section to end, and a pmd waiting for itself would stall
 * forever; a slice is work no packet should wait behind), so the
 * datapath owns one thread for it, started with the datapath and
 * stopped with it (Open vSwitch's conntrack "ct_clean" thread).
 *
 * Design
 * ======
 * The thread sweeps the whole table in slices of FDP__CT_SWEEP_BUDGET
 * records, then sleeps, and starts again.  A slice looks at 16384
 * records, 1.5 MB of them, about a millisecond of memory streaming on a
 * machine of this class: short enough that a stop request (checked
 * between slices) is honoured at once, long enough that the per-call
 * costs (the reclaim mutex, the grace period when something was removed)
 * are a small part of it.  Between two full passes it sleeps
 * FDP__CT_SWEEP_INTERVAL_MS (1 s), or FDP__CT_SWEEP_DUTY_INV - 1 times as
 * long as the pass took if that is longer: at 3M connections a pass
 * streams 288 MB of records (about 30 ms), and the sleep keeps the
 * thread under a tenth of a core however large the table, on a machine
 * where every core is also a pmd's.  The shortest timeout Open vSwitch
 * applies by default is 30 s, so a connection is reclaimed at most a
 * second or so (or a tenth of a pass's length more) after it expires;
 * until then it is invisible to lookups anyway and costs only its memory
 * and its place under the limits.  Open vSwitch sleeps between 200 ms
 * and 5 s between its passes.
 *
 * The sleep is a timed wait on a condition variable, so
 * fdp__ct_sweeper_stop() wakes the thread at once: destroying a
 * datapath never waits out the interval.
 *
 * Invariants and thread-safety
 * ============================
 * The thread takes no lock a pmd takes: fdp__ct_sweep() serialises with
 * flushes on the tracker's reclaim mutex, which the packet path never
 * touches, and the grace period it waits for is the pmds' ordinary
 * read-side sections ending.  The thread is registered with RCU by
 * nothing (it never reads under RCU), so it never delays a grace period
 * of anyone else.  Its counters have one writer (the thread) and are
 * read with relaxed loads.
 *
 * Worked example
 * ==============
 * A table whose records 0 to 40,000 have been used, connection 12 with a
 * UDP timeout of 1 s, last seen at t = 5,000 ms.  At t = 5,600 the thread
 * wakes: slice 1 looks at records 0-16383 (12 is not yet expired),
 * slice 2 at 16384-32767, slice 3 at 32768-40000 and wraps: a pass of
 * three slices, say 4 ms; it sleeps until t = 6,604.  That pass finds
 * connection 12 expired (6,604 >= 6,000), removes it from the index,
 * waits for a grace period and puts record 12 back in the free pool.
 */
#include <config.h>

#include "datapath/ct-sweeper.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "datapath/conntrack.h"

struct fdp__ct_sweeper {
    struct fdp__ct *ct;
    pthread_t thread;
    pthread_mutex_t mutex;      /* Guards 'stop' and the wait. */
    pthread_cond_t cond;        /* Signalled by fdp__ct_sweeper_stop(). */
    bool stop;
    uint64_t n_passes;          /* Relaxed: written by the thread only. */
    uint64_t n_removed;
};

uint64_t
fdp__ct_clock_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* True if the thread is to stop.  With 'wait_ms' nonzero, first sleeps
 * up to that long or until a stop request. */
static bool
sweeper_wait(struct fdp__ct_sweeper *s, uint64_t wait_ms)
{
    pthread_mutex_lock(&s->mutex);
    if (wait_ms && !s->stop) {
        /* The condition variable runs on CLOCK_MONOTONIC (set at
         * creation), so a change of the wall clock neither shortens nor
         * stretches the sleep. */
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (wait_ms / 1000);
        deadline.tv_nsec += (long) (wait_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        while (!s->stop
               && pthread_cond_timedwait(&s->cond, &s->mutex,
                                         &deadline) != ETIMEDOUT) {
            continue;
        }
    }
    bool stop = s->stop;
    pthread_mutex_unlock(&s->mutex);
    return stop;
}

static void *
sweeper_main(void *s_)
{
    struct fdp__ct_sweeper *s = s_;

    while (!sweeper_wait(s, 0)) {
        /* One full pass, a slice at a time, checking for a stop between
         * slices. */
        uint64_t start = fdp__ct_clock_ms();
        bool wrapped = false, stop = false;
        while (!wrapped && !(stop = sweeper_wait(s, 0))) {
            uint32_t n = fdp__ct_sweep(s->ct, fdp__ct_clock_ms(),
                                       FDP__CT_SWEEP_BUDGET, &wrapped);
            __atomic_store_n(&s->n_removed,
                             __atomic_load_n(&s->n_removed,
                                             __ATOMIC_RELAXED) + n,
                             __ATOMIC_RELAXED);
        }
        if (stop) {
            break;
        }
        __atomic_store_n(&s->n_passes,
                         __atomic_load_n(&s->n_passes, __ATOMIC_RELAXED) + 1,
                         __ATOMIC_RELAXED);
        uint64_t took = fdp__ct_clock_ms() - start;
        uint64_t pause = took * (FDP__CT_SWEEP_DUTY_INV - 1);
        if (pause < FDP__CT_SWEEP_INTERVAL_MS) {
            pause = FDP__CT_SWEEP_INTERVAL_MS;
        }
        if (sweeper_wait(s, pause)) {
            break;
        }
    }
    return NULL;
}

int
fdp__ct_sweeper_start(struct fdp__ct *ct, struct fdp__ct_sweeper **sweeperp)
{
    struct fdp__ct_sweeper *s = calloc(1, sizeof *s);
    pthread_condattr_t attr;
    int error;

    *sweeperp = NULL;
    if (!s) {
        return ENOMEM;
    }
    s->ct = ct;
    pthread_mutex_init(&s->mutex, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &attr);
    pthread_condattr_destroy(&attr);
    error = pthread_create(&s->thread, NULL, sweeper_main, s);
    if (error) {
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->mutex);
        free(s);
        return error == EAGAIN ? EAGAIN : ENOMEM;
    }
    *sweeperp = s;
    return 0;
}

void
fdp__ct_sweeper_stop(struct fdp__ct_sweeper *s)
{
    if (!s) {
        return;
    }
    pthread_mutex_lock(&s->mutex);
    s->stop = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->mutex);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mutex);
    free(s);
}

uint64_t
fdp__ct_sweeper_passes(const struct fdp__ct_sweeper *s)
{
    return __atomic_load_n(&s->n_passes, __ATOMIC_RELAXED);
}

uint64_t
fdp__ct_sweeper_removed(const struct fdp__ct_sweeper *s)
{
    return __atomic_load_n(&s->n_removed, __ATOMIC_RELAXED);
}
