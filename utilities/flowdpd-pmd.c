/*
 * flowdpd's packet threads.
 *
 * Each is one poll-mode thread of the datapath (fdp_dp_pmd_poll()),
 * polling the ports given to it in turn; it naps when idle so that a small
 * machine keeps a core for the control thread.  The main thread starts
 * them once the datapath and its ports exist and stops them at exit.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "utilities/flowdpd.h"
#include "utilities/tool.h"

/* One poll-mode thread: pmd 'pmd' of the datapath, polling the ports
 * whose order of addition is its number modulo --pmds. */
struct pmd_thread {
    struct server *server;
    struct fdp_dp_pmd *pmd;
    pthread_t thread;
};

static void *
pmd_main(void *t_)
{
    struct pmd_thread *t = t_;
    struct server *s = t->server;
    unsigned int idle = 0;

    while (!__atomic_load_n(&s->pmd_stop, __ATOMIC_ACQUIRE)) {
        if (fdp_dp_pmd_poll(t->pmd, NULL)) {
            idle = 0;
        } else if (++idle > 64) {
            /* Nothing for a while: nap 50 us rather than spin, so that a
             * small machine keeps a core for control and other work. */
            struct timespec nap = { 0, 50 * 1000 };
            nanosleep(&nap, NULL);
        }
    }
    return NULL;
}

/* Starts the --pmds packet threads. */
void
start_pmds(struct server *s)
{
    s->pmds = calloc(s->n_pmds, sizeof *s->pmds);
    if (!s->pmds) {
        fatal("starting the packet threads: out of memory");
    }
    for (unsigned int i = 0; i < s->n_pmds; i++) {
        struct pmd_thread *t = &s->pmds[i];
        int error = fdp_dp_pmd_create(s->dp, i, &t->pmd);
        t->server = s;
        if (error || pthread_create(&t->thread, NULL, pmd_main, t)) {
            fatal("starting packet thread %u: %s", i,
                  strerror(error ? error : errno));
        }
    }
}

/* Stops and joins the packet threads. */
void
stop_pmds(struct server *s)
{
    __atomic_store_n(&s->pmd_stop, true, __ATOMIC_RELEASE);
    for (unsigned int i = 0; i < s->n_pmds; i++) {
        pthread_join(s->pmds[i].thread, NULL);
        fdp_dp_pmd_destroy(s->pmds[i].pmd);
    }
    free(s->pmds);
    s->pmds = NULL;
}
