/*
 * The learner: adds the flows that learn actions ask for, off the packet
 * path (datapath/learner.c).
 */
#ifndef FDP_LEARNER_H
#define FDP_LEARNER_H 1

#include <stdint.h>

#include "lib/learn.h"

struct fdp__action;
struct fdp_pipeline;
struct fdp__learner;

/* Starts the thread that drains the queues into 'p' through its writer.
 * Returns 0, ENOMEM or EAGAIN. */
int fdp__learner_start(struct fdp_pipeline *p, struct fdp__learner **lp);

/* Stops the thread (after one last drain) and frees everything.  Accepts
 * NULL.  No pmd may be enqueueing. */
void fdp__learner_stop(struct fdp__learner *);

/* The packet path: queues a copy of resolved learn record 'a' on queue
 * 'queue' (a pmd's id; pmds with ids equal modulo FDP__LEARN_QUEUES share
 * a queue, under its lock).  A record queued again within
 * FDP__LEARN_REFRESH_MS on the same queue is dropped (its flow was just
 * added or refreshed), and so is one that finds its queue full (the next
 * packet through the learning flow tries again).  Never blocks on the
 * writer. */
void fdp__learner_enqueue(struct fdp__learner *, unsigned int queue,
                          const struct fdp__action *a);

/* Drains every queue now (the thread does it every FDP__LEARN_PERIOD_MS):
 * for tests and the benchmark.  A modifier of the pipeline. */
void fdp__learner_flush(struct fdp__learner *);

/* Counters since start: records queued, dropped (queue full), skipped as
 * recent, what the writer did with the rest and the CPU time it took. */
struct fdp__learner_stats {
    uint64_t n_queued;
    uint64_t n_full;
    uint64_t n_recent;
    struct fdp__learn_stats applied;
    uint64_t apply_cpu_ns;      /* The writer's CPU time (the thread's own
                                 * clock: what a loaded machine's waits do
                                 * not inflate). */
};

void fdp__learner_get_stats(struct fdp__learner *,
                            struct fdp__learner_stats *);

#define FDP__LEARN_QUEUES 16
/* Each queue holds this many words of records (8 MB, allocated when a
 * pmd first queues: a five-tuple learn's resolved record is 20 words, so
 * some 50,000 records, a burst of 25 ms at 2 Mpps of new flows). */
#define FDP__LEARN_QUEUE_WORDS (1 << 20)
#define FDP__LEARN_PERIOD_MS 1
/* Refreshes of one flow from one queue are at most this frequent.  Open
 * vSwitch's revalidators refresh learned flows about once a second
 * (their dump period); 100 ms keeps timeouts exact to within a tenth of
 * a second. */
#define FDP__LEARN_REFRESH_MS 100
/* Records applied per transaction: the pipeline publishes one version per
 * transaction, so batching is what makes a high learning rate cheap. */
#define FDP__LEARN_BATCH 8192

#endif /* FDP_LEARNER_H */
