/*
 * flowdp-bench peer-acl suite: the ClassBench sets of the table suite
 * through DPDK's rte_acl, side by side with flowdp in the same run.
 *
 * Built only when configure finds libdpdk (--with-dpdk); compiled on its
 * own with DPDK's flags.  EAL starts with --no-huge --no-pci on the
 * current CPU.  For each set: rte_acl's build time, then classify of the
 * trace in bursts of 32 with every algorithm the CPU has (scalar, sse,
 * avx2, avx512x16, avx512x32), and flowdp's batched lookup of the same
 * headers again for the ratio.  rte_acl's answers are checked against
 * flowdp's (both must pick the same rule, file order being priority).
 */
#include <config.h>

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_log.h>

#include <flowdp/flowdp.h>
#include "bench/bench.h"
#include "tests/lib/classbench.h"
#include "utilities/tool.h"

#define MAX_RULES 20000
#define MAX_HEADERS 100000
#define BURST 32

enum { F_PROTO, F_SRC, F_DST, F_SPORT, F_DPORT, N_FIELDS };

/* rte_acl's input: network byte order, the layout its defs describe. */
struct acl_input {
    uint8_t proto;
    uint32_t src;
    uint32_t dst;
    uint16_t sport;
    uint16_t dport;
};

RTE_ACL_RULE_DEF(acl_rule, N_FIELDS);

static const struct rte_acl_field_def field_defs[N_FIELDS] = {
    { .type = RTE_ACL_FIELD_TYPE_BITMASK, .size = sizeof(uint8_t),
      .field_index = F_PROTO, .input_index = 0,
      .offset = offsetof(struct acl_input, proto) },
    { .type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t),
      .field_index = F_SRC, .input_index = 1,
      .offset = offsetof(struct acl_input, src) },
    { .type = RTE_ACL_FIELD_TYPE_MASK, .size = sizeof(uint32_t),
      .field_index = F_DST, .input_index = 2,
      .offset = offsetof(struct acl_input, dst) },
    { .type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t),
      .field_index = F_SPORT, .input_index = 3,
      .offset = offsetof(struct acl_input, sport) },
    { .type = RTE_ACL_FIELD_TYPE_RANGE, .size = sizeof(uint16_t),
      .field_index = F_DPORT, .input_index = 3,
      .offset = offsetof(struct acl_input, dport) },
};

static bool eal_ready;

static bool
eal_init(void)
{
    static bool tried;
    char cpu[16];

    if (tried) {
        return eal_ready;
    }
    tried = true;
    snprintf(cpu, sizeof cpu, "%d", sched_getcpu() < 0 ? 0 : sched_getcpu());
    char *args[] = {
        (char *) "flowdp-bench", (char *) "--no-huge", (char *) "--no-pci",
        (char *) "-m", (char *) "1024", (char *) "-l", cpu,
        (char *) "--log-level=error", (char *) "--no-telemetry",
        (char *) "--no-shconf",
    };
    eal_ready = rte_eal_init((int) (sizeof args / sizeof args[0]), args) >= 0;
    if (!eal_ready) {
        fprintf(stderr, "%s: peer-acl: rte_eal_init failed; skipped\n",
                program_name);
    }
    return eal_ready;
}

/* A rule line as rte_acl's rule; false if not a rule. */
static bool
parse_acl_rule(const char *line, size_t index, struct acl_rule *r)
{
    unsigned int s[4], slen, d[4], dlen, splo, sphi, dplo, dphi, proto, pmask;

    if (sscanf(line, "@%u.%u.%u.%u/%u %u.%u.%u.%u/%u %u : %u %u : %u "
               "%x/%x", &s[0], &s[1], &s[2], &s[3], &slen, &d[0], &d[1],
               &d[2], &d[3], &dlen, &splo, &sphi, &dplo, &dphi, &proto,
               &pmask) != 16) {
        return false;
    }
    memset(r, 0, sizeof *r);
    r->data.category_mask = 1;
    r->data.priority = (int32_t) (MAX_RULES - index);    /* File order. */
    r->data.userdata = (uint32_t) index + 1;
    r->field[F_PROTO].value.u8 = (uint8_t) (proto & pmask);
    r->field[F_PROTO].mask_range.u8 = (uint8_t) pmask;
    r->field[F_SRC].value.u32 = s[0] << 24 | s[1] << 16 | s[2] << 8 | s[3];
    r->field[F_SRC].mask_range.u32 = slen;
    r->field[F_DST].value.u32 = d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3];
    r->field[F_DST].mask_range.u32 = dlen;
    r->field[F_SPORT].value.u16 = (uint16_t) splo;
    r->field[F_SPORT].mask_range.u16 = (uint16_t) sphi;
    r->field[F_DPORT].value.u16 = (uint16_t) dplo;
    r->field[F_DPORT].mask_range.u16 = (uint16_t) dphi;
    return true;
}

struct acl_bench {
    struct rte_acl_ctx *ctx;
    enum rte_acl_classify_alg alg;
    const uint8_t **data;
    uint32_t *results;
    size_t n;
    uint64_t acl_bytes;         /* rte_acl's runtime footprint, 0 if
                                 * its build log did not say. */
    /* flowdp on the same headers. */
    struct fdp_table *table;
    const struct fdp_key **kp;
};

/* Builds 'ab->ctx' with 'cfg' and takes rte_acl's own figure for the
 * memory its tables use: its API has no call for it, but the build logs
 * it ("total: N bytes", at DEBUG level), so for the build the log goes
 * to a memory stream at that level.  Returns rte_acl_build()'s result. */
static int
acl_build_measured(struct acl_bench *ab, const struct rte_acl_config *cfg)
{
    char *text = NULL;
    size_t size = 0;
    FILE *saved = rte_log_get_stream();
    FILE *log = open_memstream(&text, &size);
    int level = rte_log_get_level(rte_log_register("lib.acl"));
    uint32_t global = rte_log_get_global_level();

    if (log) {
        rte_log_set_global_level(RTE_LOG_DEBUG);
        rte_log_set_level_pattern("lib.acl", RTE_LOG_DEBUG);
        rte_openlog_stream(log);
    }
    int error = rte_acl_build(ab->ctx, cfg);
    if (log) {
        rte_openlog_stream(saved);
        rte_log_set_global_level(global);
        rte_log_set_level_pattern("lib.acl", level < 0 ? (uint32_t) RTE_LOG_ERR
                                                       : (uint32_t) level);
        fclose(log);
        const char *total = text ? strstr(text, "total: ") : NULL;
        unsigned long long bytes;
        if (total && sscanf(total, "total: %llu", &bytes) == 1) {
            ab->acl_bytes = bytes;
        }
        free(text);
    }
    return error;
}

static uint64_t
acl_classify(void *ab_, uint64_t n)
{
    struct acl_bench *ab = ab_;
    uint64_t sum = 0;
    size_t off = 0;

    for (uint64_t i = 0; i < n; i += BURST) {
        if (off + BURST > ab->n) {
            off = 0;
        }
        rte_acl_classify_alg(ab->ctx, &ab->data[off], &ab->results[off],
                             BURST, 1, ab->alg);
        sum += ab->results[off];
        off += BURST;
    }
    return sum;
}

static uint64_t
flowdp_classify(void *ab_, uint64_t n)
{
    struct acl_bench *ab = ab_;
    const struct fdp_rule *rules[BURST];
    uint64_t sum = 0;
    size_t off = 0;

    fdp_table_read_lock();
    for (uint64_t i = 0; i < n; i += BURST) {
        if (off + BURST > ab->n) {
            off = 0;
        }
        fdp_table_lookup_batch(ab->table, &ab->kp[off], BURST, rules);
        sum += rules[0] != NULL;
        off += BURST;
    }
    fdp_table_read_unlock();
    return sum;
}

/* Loads set 'name' into rte_acl and into a flowdp table; false if the
 * files are missing. */
static bool
load(const char *dir, const char *name, struct acl_bench *ab,
     double *acl_build_ns, size_t *n_rules)
{
    char path[4096], line[512];
    struct acl_rule *rules = calloc(MAX_RULES, sizeof *rules);
    struct fdp_flow_spec proto_spec;
    size_t n = 0;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f || !rules) {
        fprintf(stderr, "%s: peer-acl: %s: %s; skipped\n", program_name,
                path, strerror(errno));
        free(rules);
        if (f) {
            fclose(f);
        }
        return false;
    }
    if (fdp_flow_parse("actions=output:1", 0, &proto_spec, NULL)
        || fdp_table_create(&ab->table)) {
        fatal("peer-acl: out of memory");
    }
    fdp_table_begin(ab->table);
    while (n < MAX_RULES && fgets(line, sizeof line, f)) {
        struct fdp_flow_spec spec = proto_spec;
        spec.match = fdp_match_create();
        if (!spec.match || !classbench_parse_rule(line, spec.match)
            || !parse_acl_rule(line, n, &rules[n])) {
            fatal("peer-acl: %s:%zu: not a ClassBench rule", path, n + 1);
        }
        spec.priority = (uint16_t) (MAX_RULES + 100 - n);
        spec.cookie = n + 1;
        if (fdp_table_insert(ab->table, &spec, 0)) {
            fatal("peer-acl: %s: insert failed", path);
        }
        fdp_match_destroy(spec.match);
        n++;
    }
    fclose(f);
    fdp_flow_spec_destroy(&proto_spec);
    if (fdp_table_commit(ab->table)) {
        fatal("peer-acl: %s: commit failed", path);
    }
    fdp_table_run(ab->table);

    struct rte_acl_param prm = {
        .name = name, .socket_id = SOCKET_ID_ANY,
        .rule_size = RTE_ACL_RULE_SZ(N_FIELDS), .max_rule_num = MAX_RULES,
    };
    double t0 = now_ns();
    ab->ctx = rte_acl_create(&prm);
    struct rte_acl_config cfg = {
        .num_categories = 1, .num_fields = N_FIELDS, .max_size = 0,
    };
    memcpy(cfg.defs, field_defs, sizeof field_defs);
    if (!ab->ctx
        || rte_acl_add_rules(ab->ctx, (struct rte_acl_rule *) rules,
                             (uint32_t) n)
        || acl_build_measured(ab, &cfg)) {
        fatal("peer-acl: %s: rte_acl could not build", path);
    }
    *acl_build_ns = now_ns() - t0;
    free(rules);
    *n_rules = n;

    /* The trace, for both. */
    snprintf(path, sizeof path, "%s/%s_trace", dir, name);
    f = fopen(path, "r");
    struct acl_input *in = calloc(MAX_HEADERS, sizeof *in);
    struct fdp_key *keys = calloc(MAX_HEADERS, sizeof *keys);
    ab->data = calloc(MAX_HEADERS, sizeof *ab->data);
    ab->kp = calloc(MAX_HEADERS, sizeof *ab->kp);
    ab->results = calloc(MAX_HEADERS, sizeof *ab->results);
    if (!in || !keys || !ab->data || !ab->kp || !ab->results) {
        fatal("out of memory");
    }
    ab->n = 0;
    while (f && ab->n < MAX_HEADERS && fgets(line, sizeof line, f)) {
        unsigned long src, dst, sport, dport, proto;
        if (sscanf(line, "%lu %lu %lu %lu %lu", &src, &dst, &sport, &dport,
                   &proto) != 5) {
            continue;
        }
        in[ab->n] = (struct acl_input) {
            .proto = (uint8_t) proto,
            .src = rte_cpu_to_be_32((uint32_t) src),
            .dst = rte_cpu_to_be_32((uint32_t) dst),
            .sport = rte_cpu_to_be_16((uint16_t) sport),
            .dport = rte_cpu_to_be_16((uint16_t) dport),
        };
        classbench_key(&keys[ab->n], (uint32_t) src, (uint32_t) dst,
                       (uint32_t) sport, (uint32_t) dport, (uint32_t) proto);
        ab->data[ab->n] = (const uint8_t *) &in[ab->n];
        ab->kp[ab->n] = &keys[ab->n];
        ab->n++;
    }
    if (f) {
        fclose(f);
    }
    ab->n -= ab->n % BURST;
    return ab->n > 0;
}

/* Both classifiers must agree on every header. */
static void
check_agreement(struct acl_bench *ab, const char *name)
{
    size_t differ = 0;

    rte_acl_classify_alg(ab->ctx, ab->data, ab->results, (uint32_t) ab->n,
                         1, RTE_ACL_CLASSIFY_SCALAR);
    fdp_table_read_lock();
    for (size_t i = 0; i < ab->n; i++) {
        const struct fdp_rule *r = fdp_table_lookup(ab->table, ab->kp[i]);
        differ += (r ? fdp_rule_get_cookie(r) : 0) != ab->results[i];
    }
    fdp_table_read_unlock();
    if (differ) {
        fatal("peer-acl: %s: flowdp and rte_acl disagree on %zu of %zu "
              "headers", name, differ, ab->n);
    }
}

void
suite_peer_acl(void)
{
    const char *dir = bench_classbench_dir();
    static const char *const sets[] = {
        "acl_1k", "acl_10k", "fw_1k", "fw_10k", "ipc_1k", "ipc_10k",
    };
    static const struct {
        enum rte_acl_classify_alg alg;
        const char *name;
    } algs[] = {
        { RTE_ACL_CLASSIFY_SCALAR, "rte_acl-scalar" },
        { RTE_ACL_CLASSIFY_SSE, "rte_acl-sse" },
        { RTE_ACL_CLASSIFY_AVX2, "rte_acl-avx2" },
        { RTE_ACL_CLASSIFY_AVX512X16, "rte_acl-avx512x16" },
        { RTE_ACL_CLASSIFY_AVX512X32, "rte_acl-avx512x32" },
    };
    char name[64];

    if (!eal_init()) {
        return;
    }
    report_header("peer-acl");
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        struct acl_bench ab;
        double build_ns;
        size_t n_rules;

        memset(&ab, 0, sizeof ab);
        if (!load(dir, sets[s], &ab, &build_ns, &n_rules)) {
            continue;
        }
        check_agreement(&ab, sets[s]);
        snprintf(name, sizeof name, "%s-build", sets[s]);
        no_spread();
        report(&(struct result) {
            .suite = "peer-acl", .case_name = name, .impl = "rte_acl",
            .entries = n_rules, .ns_per_op = build_ns / n_rules,
            .bytes = ab.acl_bytes,
        });
        /* flowdp's bytes: the whole table, its rules with their actions
         * and statistics included (rte_acl's figure covers its tries and
         * its match results). */
        struct fdp_table_stats st;
        fdp_table_get_stats(ab.table, &st);
        uint64_t flowdp_bytes = st.memory_bytes;
        double ns = measure(flowdp_classify, &ab);
        report(&(struct result) {
            .suite = "peer-acl", .case_name = sets[s], .impl = "flowdp",
            .entries = n_rules, .ns_per_op = ns, .bytes = flowdp_bytes,
        });
        for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
            if (rte_acl_set_ctx_classify(ab.ctx, algs[a].alg)) {
                continue;       /* Not on this CPU or build. */
            }
            ab.alg = algs[a].alg;
            ns = measure(acl_classify, &ab);
            report(&(struct result) {
                .suite = "peer-acl", .case_name = sets[s],
                .impl = algs[a].name, .entries = n_rules, .ns_per_op = ns,
                .bytes = ab.acl_bytes,
            });
        }
        rte_acl_free(ab.ctx);
        fdp_table_destroy(ab.table);
        /* The headers' storage: data[0] and kp[0] point at the arrays. */
        free((void *) ab.data[0]);
        free((void *) ab.kp[0]);
        free(ab.data);
        free(ab.kp);
        free(ab.results);
    }
}
