/*
 * flowdp-bench table suite: ClassBench rule sets through the whole table.
 *
 * For each of acl_1k, acl_10k, fw_1k, fw_10k, ipc_1k, ipc_10k (file order
 * is priority order): the bulk build (all rules in one transaction, then
 * fdp_table_run()), the same from the rules written as flow text and
 * parsed with fdp_flow_parse() ("-build-text", checked to answer the trace
 * alike), lookups of the set's trace headers in batches of 32
 * through fdp_table_lookup_batch() and one at a time through
 * fdp_table_lookup(), batched lookups again while another thread makes
 * single-rule changes, at 100,000 per second ("-while-100k-changes", the
 * pace reached as "-changes-paced") and without pause ("-while-updating",
 * the writer's ns per change as "-update-while-looking-up"), and single-rule updates on the full table (one transaction
 * adding a rule and one removing it; ns per change).  The
 * rule sets live in FLOWDP_CLASSBENCH_DIR (default: the shared data beside
 * the source tree).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "tests/lib/classbench.h"
#include "utilities/tool.h"

#define MAX_RULES 20000
#define MAX_HEADERS 100000
#define BATCH 32

struct table_bench {
    struct fdp_table *table;
    struct fdp_key *keys;
    const struct fdp_key **kp;
    size_t n_keys;
    struct fdp_flow_spec update;    /* The rule updates add and remove. */
    bool sections;                  /* A read-side section per batch. */
};

/* 'n' lookups in batches of BATCH, in one read-side section, or with
 * 'tb->sections' one per batch (as a datapath takes one per burst: a
 * writer's grace periods then end between batches). */
static uint64_t
lookups_batched(void *tb_, uint64_t n)
{
    struct table_bench *tb = tb_;
    const struct fdp_rule *rules[BATCH];
    uint64_t hits = 0;
    size_t off = 0;

    if (!tb->sections) {
        fdp_table_read_lock();
    }
    for (uint64_t i = 0; i < n; i += BATCH) {
        if (off + BATCH > tb->n_keys) {
            off = 0;
        }
        if (tb->sections) {
            fdp_table_read_lock();
        }
        fdp_table_lookup_batch(tb->table, &tb->kp[off], BATCH, rules);
        hits += rules[0] != NULL;
        if (tb->sections) {
            fdp_table_read_unlock();
        }
        off += BATCH;
    }
    if (!tb->sections) {
        fdp_table_read_unlock();
    }
    return hits;
}

static uint64_t
lookups_single(void *tb_, uint64_t n)
{
    struct table_bench *tb = tb_;
    uint64_t hits = 0;
    size_t off = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i++) {
        hits += fdp_table_lookup(tb->table, &tb->keys[off]) != NULL;
        off = off + 1 == tb->n_keys ? 0 : off + 1;
    }
    fdp_table_read_unlock();
    return hits;
}

/* 'n' single-rule changes: add the update rule, remove it, ... */
static uint64_t
updates(void *tb_, uint64_t n)
{
    struct table_bench *tb = tb_;
    struct fdp_table_filter filter = {
        .match = tb->update.match, .strict = true,
        .priority = tb->update.priority,
    };

    for (uint64_t i = 0; i < n; i++) {
        int error = i & 1 ? fdp_table_remove(tb->table, &filter, NULL)
                          : fdp_table_insert(tb->table, &tb->update, 0);
        if (error) {
            fatal("table: update: %s", strerror(error));
        }
    }
    if (n & 1) {
        fdp_table_remove(tb->table, &filter, NULL);
    }
    return n;
}

/* A writer making single changes (as updates()) until told to stop, for
 * lookups measured while the table changes. */
struct churn {
    struct table_bench *tb;
    bool stop;
    uint64_t n_changes;
    int lookup_cpu;             /* The measuring thread's CPU. */
    double rate;                /* Changes per second to aim at, or 0: as
                                 * fast as it can. */
};

static void *
churn_main(void *c_)
{
    struct churn *c = c_;

    /* On another CPU than the lookups (a switch's control thread does not
     * share the datapath's cores), if there is one. */
    cpu_set_t set;
    long n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&set);
    for (long i = 0; i < n_cpus && i < CPU_SETSIZE; i++) {
        if (i != c->lookup_cpu) {
            CPU_SET(i, &set);
        }
    }
    if (CPU_COUNT(&set)) {
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }

    /* Paced: a burst of changes, then a sleep until the time the rate
     * allows them (bursts of 10, so that the sleeps stay long enough for
     * the timer to keep; with a 1 us timer slack). */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    double start = now_ns();
    while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
        updates(c->tb, c->rate > 0 ? 10 : 2);
        uint64_t n = c->n_changes + (c->rate > 0 ? 10 : 2);
        __atomic_store_n(&c->n_changes, n, __ATOMIC_RELAXED);
        if (c->rate > 0) {
            double due = start + n * 1e9 / c->rate, t = now_ns();
            if (due > t) {
                struct timespec d = {
                    .tv_sec = (time_t) ((due - t) / 1e9),
                    .tv_nsec = (long) ((uint64_t) (due - t) % 1000000000),
                };
                nanosleep(&d, NULL);
            }
        }
    }
    return NULL;
}

/* Batched lookups while a writer thread makes single changes at 'rate'
 * per second (0: as fast as it can); stores the rate it reached. */
static double
lookups_while_changing(struct table_bench *tb, double rate,
                       double *changes_per_s)
{
    struct churn churn = {
        .tb = tb, .stop = false, .n_changes = 0,
        .lookup_cpu = sched_getcpu(), .rate = rate,
    };
    pthread_t writer;

    if (pthread_create(&writer, NULL, churn_main, &churn)) {
        fatal("table: cannot start a writer thread");
    }
    double t0 = now_ns();
    tb->sections = true;
    double ns = measure(lookups_batched, tb);
    tb->sections = false;
    __atomic_store_n(&churn.stop, true, __ATOMIC_RELAXED);
    pthread_join(writer, NULL);
    *changes_per_s = churn.n_changes / ((now_ns() - t0) / 1e9);
    return ns;
}

const char *
bench_classbench_dir(void)
{
    const char *dir = getenv("FLOWDP_CLASSBENCH_DIR");

    return dir && *dir ? dir : FDP_CLASSBENCH_DIR;
}

/* Loads set 'name' into a new table; returns the number of rules, 0 if
 * the file is missing. */
static size_t
load_rules(const char *name, struct table_bench *tb, double *build_ns)
{
    char path[4096], line[512];
    struct fdp_flow_spec proto;
    size_t n = 0;

    snprintf(path, sizeof path, "%s/%s", bench_classbench_dir(), name);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: table: %s: %s; skipped\n", program_name, path,
                strerror(errno));
        return 0;
    }
    if (fdp_flow_parse("actions=output:1", 0, &proto, NULL)
        || fdp_table_create(&tb->table)) {
        fatal("table: out of memory");
    }
    struct fdp_match **matches = calloc(MAX_RULES, sizeof *matches);
    if (!matches) {
        fatal("out of memory");
    }
    while (n < MAX_RULES && fgets(line, sizeof line, f)) {
        matches[n] = fdp_match_create();
        if (!matches[n] || !classbench_parse_rule(line, matches[n])) {
            fatal("table: %s:%zu: not a ClassBench rule", path, n + 1);
        }
        n++;
    }
    fclose(f);

    /* One transaction for the whole set: first rule, highest priority. */
    double t0 = now_ns();
    fdp_table_begin(tb->table);
    for (size_t i = 0; i < n; i++) {
        struct fdp_flow_spec spec = proto;
        spec.match = matches[i];
        spec.priority = (uint16_t) (MAX_RULES + 100 - i);
        spec.cookie = i;
        if (fdp_table_insert(tb->table, &spec, 0)) {
            fatal("table: %s: insert failed", path);
        }
    }
    if (fdp_table_commit(tb->table)) {
        fatal("table: %s: commit failed", path);
    }
    fdp_table_run(tb->table);
    *build_ns = now_ns() - t0;

    /* Updates add and remove a copy of the middle rule, below all. */
    fdp_match_destroy(proto.match);
    tb->update = proto;             /* Takes the actions. */
    tb->update.match = fdp_match_clone(matches[n / 2]);
    tb->update.priority = 1;
    for (size_t i = 0; i < n; i++) {
        fdp_match_destroy(matches[i]);
    }
    free(matches);
    return n;
}

/* The set's rules as a user writes them, text in ovs-ofctl syntax, through
 * fdp_flow_parse() into a new table, as flowdp-ctl add-flows and an
 * embedding switch do: returns the build's ns (parse, insert, commit,
 * run), and checks that the table answers every trace header as 'tb''s
 * does. */
static double
build_from_text(const char *name, const struct table_bench *tb)
{
    char path[4096], line[512];
    char **texts = calloc(MAX_RULES, sizeof *texts);
    struct fdp_table *t;
    size_t n = 0;

    snprintf(path, sizeof path, "%s/%s", bench_classbench_dir(), name);
    FILE *f = fopen(path, "r");
    if (!f || !texts || fdp_table_create(&t)) {
        fatal("table: %s: cannot build from text", path);
    }
    while (n < MAX_RULES && fgets(line, sizeof line, f)) {
        char text[512];
        if (!classbench_rule_text(line, (unsigned int) (MAX_RULES + 100 - n),
                                  n, text, sizeof text)
            || !(texts[n] = strdup(text))) {
            fatal("table: %s:%zu: cannot write as a flow", path, n + 1);
        }
        n++;
    }
    fclose(f);

    double t0 = now_ns();
    fdp_table_begin(t);
    for (size_t i = 0; i < n; i++) {
        struct fdp_flow_spec spec;
        char *error = NULL;
        if (fdp_flow_parse(texts[i], 0, &spec, &error)
            || fdp_table_insert(t, &spec, 0)) {
            fatal("table: %s:%zu: \"%s\": %s", path, i + 1, texts[i],
                  error ? error : "insert failed");
        }
        fdp_flow_spec_destroy(&spec);
    }
    if (fdp_table_commit(t)) {
        fatal("table: %s: commit failed", path);
    }
    fdp_table_run(t);
    double ns = now_ns() - t0;

    fdp_table_read_lock();
    for (size_t i = 0; i < tb->n_keys; i++) {
        const struct fdp_rule *a = fdp_table_lookup(tb->table, &tb->keys[i]);
        const struct fdp_rule *b = fdp_table_lookup(t, &tb->keys[i]);
        if (!a != !b || (a && fdp_rule_get_cookie(a)
                                != fdp_rule_get_cookie(b))) {
            fatal("table: %s: the table built from text answers trace "
                  "header %zu differently", name, i + 1);
        }
    }
    fdp_table_read_unlock();
    fdp_table_destroy(t);
    for (size_t i = 0; i < n; i++) {
        free(texts[i]);
    }
    free(texts);
    return ns;
}

static size_t
load_trace(const char *name, struct table_bench *tb)
{
    char path[4096], line[512];

    snprintf(path, sizeof path, "%s/%s_trace", bench_classbench_dir(), name);
    FILE *f = fopen(path, "r");
    tb->keys = malloc(MAX_HEADERS * sizeof *tb->keys);
    tb->kp = malloc(MAX_HEADERS * sizeof *tb->kp);
    if (!tb->keys || !tb->kp) {
        fatal("out of memory");
    }
    tb->n_keys = 0;
    while (f && tb->n_keys < MAX_HEADERS && fgets(line, sizeof line, f)) {
        if (classbench_parse_header(line, &tb->keys[tb->n_keys])) {
            tb->kp[tb->n_keys] = &tb->keys[tb->n_keys];
            tb->n_keys++;
        }
    }
    if (f) {
        fclose(f);
    }
    if (tb->n_keys < BATCH) {
        fprintf(stderr, "%s: table: %s: no trace; skipped\n", program_name,
                path);
    }
    return tb->n_keys;
}

void
suite_table(void)
{
    static const char *const sets[] = {
        "acl_1k", "acl_10k", "fw_1k", "fw_10k", "ipc_1k", "ipc_10k",
    };
    char name[64];

    report_header("table");
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        struct table_bench tb = { .table = NULL };
        double build_ns;
        size_t n_rules = load_rules(sets[s], &tb, &build_ns);
        if (!n_rules) {
            continue;
        }
        struct fdp_table_stats st;
        fdp_table_get_stats(tb.table, &st);

        /* The build was timed once (a whole transaction); no spread. */
        snprintf(name, sizeof name, "%s-build", sets[s]);
        no_spread();
        report(&(struct result) {
            .suite = "table", .case_name = name, .impl = "flowdp",
            .entries = n_rules, .ns_per_op = build_ns / n_rules,
            .bytes = st.memory_bytes,
        });
        if (load_trace(sets[s], &tb) >= BATCH) {
            /* The same build from flow text, as users write the rules. */
            double text_ns = build_from_text(sets[s], &tb);
            snprintf(name, sizeof name, "%s-build-text", sets[s]);
            no_spread();
            report(&(struct result) {
                .suite = "table", .case_name = name, .impl = "flowdp",
                .entries = n_rules, .ns_per_op = text_ns / n_rules,
                .bytes = st.memory_bytes,
            });

            double ns = measure(lookups_batched, &tb);
            report(&(struct result) {
                .suite = "table", .case_name = sets[s], .impl = "flowdp",
                .entries = n_rules, .ns_per_op = ns,
                .bytes = st.memory_bytes,
            });
            snprintf(name, sizeof name, "%s-single", sets[s]);
            ns = measure(lookups_single, &tb);
            report(&(struct result) {
                .suite = "table", .case_name = name, .impl = "flowdp",
                .entries = n_rules, .ns_per_op = ns,
                .bytes = st.memory_bytes,
            });
        }
        if (tb.n_keys >= BATCH) {
            /* Batched lookups while another thread adds and removes a
             * rule (one change per transaction): at 100,000 changes per
             * second, then as fast as it can, with the rate it reached
             * reported as ns per change. */
            static const struct {
                double rate;
                const char *lookups, *changes;
            } runs[] = {
                { 1e5, "-while-100k-changes", "-changes-paced" },
                { 0, "-while-updating", "-update-while-looking-up" },
            };
            for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
                double rate;
                double ns = lookups_while_changing(&tb, runs[r].rate, &rate);
                snprintf(name, sizeof name, "%s%s", sets[s], runs[r].lookups);
                report(&(struct result) {
                    .suite = "table", .case_name = name, .impl = "flowdp",
                    .entries = n_rules, .ns_per_op = ns,
                    .bytes = st.memory_bytes,
                });
                snprintf(name, sizeof name, "%s%s", sets[s], runs[r].changes);
                no_spread();
                report(&(struct result) {
                    .suite = "table", .case_name = name, .impl = "flowdp",
                    .entries = n_rules,
                    .ns_per_op = rate > 0 ? 1e9 / rate : 0,
                    .bytes = st.memory_bytes,
                });
            }
        }
        snprintf(name, sizeof name, "%s-update", sets[s]);
        double ns = measure(updates, &tb);
        report(&(struct result) {
            .suite = "table", .case_name = name, .impl = "flowdp",
            .entries = n_rules, .ns_per_op = ns, .bytes = st.memory_bytes,
        });
        fdp_flow_spec_destroy(&tb.update);
        fdp_table_destroy(tb.table);
        free(tb.keys);
        free(tb.kp);
    }
}
