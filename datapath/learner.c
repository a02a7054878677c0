/*
 * The learner: learned flows reach the tables through the writer, never
 * from a pmd (DESIGN.md, "Groups and meters ... learned flows").
 *
 * Theory of operation
 * ===================
 *
 * The pipeline composes a learn action into a resolved record that says
 * exactly which flow to add (lib/learn.c).  When the datapath executes a
 * packet's actions and meets one, it calls fdp__learner_enqueue(), which
 * copies the record into the queue of the pmd (struct queue: a lock, a
 * buffer of words, a filter of recently queued records).  A thread
 * started with the datapath wakes every FDP__LEARN_PERIOD_MS, swaps each
 * queue's buffer for an empty one under its lock (so a pmd waits at most
 * for a swap, never for the writer), and hands what it took to
 * fdp__learn_apply() in transactions of up to FDP__LEARN_BATCH records:
 * one new pipeline version per batch, not per flow.
 *
 * Refreshes.  A packet that hits the datapath's cache runs the same
 * composed actions, hence the same resolved record, and so keeps the
 * learned flow alive, as Open vSwitch's revalidators do when they
 * translate a datapath flow again.  The filter (direct-mapped, by a hash
 * of the record) lets one record through per FDP__LEARN_REFRESH_MS per
 * queue, so a flow forwarding millions of packets a second costs the
 * writer ten refreshes a second, and a pmd one hash per packet.
 *
 * Bounds.  A queue holds FDP__LEARN_QUEUE_WORDS words; what finds it full
 * is dropped and counted (n_full), and the next packet through the
 * learning flow asks again.
 *
 * Worked example: a pmd forwards the first packet of a new five-tuple.
 * Its lookup misses, the pipeline composes "learn(...) resolved,
 * output:2", the executor queues the record (20 words) and outputs the
 * packet.  Within a millisecond the thread takes the queue's buffer,
 * fdp__learn_apply() inserts the flow in its table and commits, and the
 * pipeline's new version makes the caches compose the five-tuple's next
 * packet afresh, now through the learned flow.
 *
 * Thread-safety: fdp__learner_enqueue() from any thread; the rest from
 * the datapath's control thread.
 */
#include <config.h>

#include "datapath/learner.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/actions-internal.h"
#include "lib/rcu.h"

/* Slots of a queue's filter of recent records. */
#define RECENT_SLOTS 4096

struct recent {
    uint64_t hash;
    int64_t when_ms;
};

struct queue {
    pthread_mutex_t mutex;
    uint64_t *words;            /* FDP__LEARN_QUEUE_WORDS, or NULL until
                                 * first used. */
    size_t n_words;
    struct recent *recent;      /* RECENT_SLOTS. */
    uint64_t n_queued, n_full, n_recent;
};

struct fdp__learner {
    struct fdp_pipeline *pipeline;
    struct queue queues[FDP__LEARN_QUEUES];
    pthread_t thread;
    pthread_mutex_t mutex;      /* 'stop', 'stats'; held while applying. */
    pthread_cond_t cond;
    bool stop;
    uint64_t *spare;            /* The buffer swapped into a queue. */
    struct fdp__learn_stats stats;
    uint64_t apply_cpu_ns;      /* CPU time of this thread's applies. */
};

static int64_t
clock_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* FNV-1a over the record's words, then a final mix: the filter needs a
 * spread of slots, not strength (a collision only lets a refresh
 * through early or holds one back for FDP__LEARN_REFRESH_MS). */
static uint64_t
hash_record(const struct fdp__action *a)
{
    const uint64_t *w = (const uint64_t *) a;
    uint64_t h = 0xcbf29ce484222325ULL;

    for (unsigned int i = 0; i < a->n_words; i++) {
        h = (h ^ w[i]) * 0x100000001b3ULL;
    }
    h ^= h >> 29;
    return h ? h : 1;
}

void
fdp__learner_enqueue(struct fdp__learner *l, unsigned int queue,
                     const struct fdp__action *a)
{
    struct queue *q = &l->queues[queue % FDP__LEARN_QUEUES];
    uint64_t h = hash_record(a);
    int64_t now = clock_ms();

    pthread_mutex_lock(&q->mutex);
    if (!q->words) {
        q->words = malloc(FDP__LEARN_QUEUE_WORDS * sizeof *q->words);
        q->recent = calloc(RECENT_SLOTS, sizeof *q->recent);
        if (!q->words || !q->recent) {
            free(q->words);
            free(q->recent);
            q->words = NULL;
            q->recent = NULL;
            q->n_full++;
            pthread_mutex_unlock(&q->mutex);
            return;
        }
    }
    struct recent *r = &q->recent[h % RECENT_SLOTS];
    if (r->hash == h && now - r->when_ms < FDP__LEARN_REFRESH_MS) {
        q->n_recent++;
    } else if (q->n_words + a->n_words > FDP__LEARN_QUEUE_WORDS) {
        q->n_full++;
    } else {
        memcpy(&q->words[q->n_words], a, a->n_words * sizeof(uint64_t));
        q->n_words += a->n_words;
        q->n_queued++;
        r->hash = h;
        r->when_ms = now;
    }
    pthread_mutex_unlock(&q->mutex);
}

/* Applies the 'n_words' words of records 'words'; 'l->mutex' held. */
static void
apply_words(struct fdp__learner *l, const uint64_t *words, size_t n_words)
{
    const struct fdp__action *batch[FDP__LEARN_BATCH];
    size_t n = 0;

    for (size_t i = 0; i < n_words;) {
        const struct fdp__action *a = (const struct fdp__action *)
                                      (const void *) &words[i];
        if (!a->n_words) {
            break;              /* Never queued so; do not loop. */
        }
        batch[n++] = a;
        i += a->n_words;
        if (n == FDP__LEARN_BATCH || i >= n_words) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
            fdp__learn_apply(l->pipeline, batch, n, &l->stats);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
            l->apply_cpu_ns += (uint64_t) ((t1.tv_sec - t0.tv_sec)
                                           * 1000000000LL
                                           + (t1.tv_nsec - t0.tv_nsec));
            n = 0;
        }
    }
}

/* Takes each queue's records and applies them; 'l->mutex' held. */
static void
drain(struct fdp__learner *l)
{
    for (size_t i = 0; i < FDP__LEARN_QUEUES; i++) {
        struct queue *q = &l->queues[i];
        uint64_t *taken;
        size_t n;

        if (!l->spare) {
            l->spare = malloc(FDP__LEARN_QUEUE_WORDS * sizeof *l->spare);
            if (!l->spare) {
                return;
            }
        }
        pthread_mutex_lock(&q->mutex);
        n = q->n_words;
        taken = q->words;
        if (n) {
            q->words = l->spare;
            q->n_words = 0;
        }
        pthread_mutex_unlock(&q->mutex);
        if (n) {
            apply_words(l, taken, n);
            l->spare = taken;
        }
    }
}

void
fdp__learner_flush(struct fdp__learner *l)
{
    pthread_mutex_lock(&l->mutex);
    drain(l);
    pthread_mutex_unlock(&l->mutex);
}

static void *
learner_main(void *l_)
{
    struct fdp__learner *l = l_;

    pthread_mutex_lock(&l->mutex);
    while (!l->stop) {
        drain(l);
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += FDP__LEARN_PERIOD_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&l->cond, &l->mutex, &ts);
    }
    drain(l);
    pthread_mutex_unlock(&l->mutex);
    return NULL;
}

int
fdp__learner_start(struct fdp_pipeline *p, struct fdp__learner **lp)
{
    struct fdp__learner *l = calloc(1, sizeof *l);
    pthread_condattr_t attr;
    int error;

    *lp = NULL;
    if (!l) {
        return ENOMEM;
    }
    l->pipeline = p;
    for (size_t i = 0; i < FDP__LEARN_QUEUES; i++) {
        pthread_mutex_init(&l->queues[i].mutex, NULL);
    }
    pthread_mutex_init(&l->mutex, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cond, &attr);
    pthread_condattr_destroy(&attr);
    error = pthread_create(&l->thread, NULL, learner_main, l);
    if (error) {
        pthread_cond_destroy(&l->cond);
        pthread_mutex_destroy(&l->mutex);
        for (size_t i = 0; i < FDP__LEARN_QUEUES; i++) {
            pthread_mutex_destroy(&l->queues[i].mutex);
        }
        free(l);
        return error == EAGAIN ? EAGAIN : ENOMEM;
    }
    *lp = l;
    return 0;
}

void
fdp__learner_stop(struct fdp__learner *l)
{
    if (!l) {
        return;
    }
    pthread_mutex_lock(&l->mutex);
    l->stop = true;
    pthread_cond_signal(&l->cond);
    pthread_mutex_unlock(&l->mutex);
    pthread_join(l->thread, NULL);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->mutex);
    for (size_t i = 0; i < FDP__LEARN_QUEUES; i++) {
        pthread_mutex_destroy(&l->queues[i].mutex);
        free(l->queues[i].words);
        free(l->queues[i].recent);
    }
    free(l->spare);
    free(l);
}

void
fdp__learner_get_stats(struct fdp__learner *l, struct fdp__learner_stats *st)
{
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < FDP__LEARN_QUEUES; i++) {
        struct queue *q = &l->queues[i];
        pthread_mutex_lock(&q->mutex);
        st->n_queued += q->n_queued;
        st->n_full += q->n_full;
        st->n_recent += q->n_recent;
        pthread_mutex_unlock(&q->mutex);
    }
    pthread_mutex_lock(&l->mutex);
    st->applied = l->stats;
    st->apply_cpu_ns = l->apply_cpu_ns;
    pthread_mutex_unlock(&l->mutex);
}
