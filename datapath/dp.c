/*
 * The datapath: batches of packets from ports, through a pipeline (a
 * bare table is a one-table pipeline), to ports.
 *
 * What it is for
 * ==============
 * fdp_dp is the fast path an embedding switch runs on its poll-mode
 * threads: receive, classify, execute, transmit, count, with no locks and
 * no allocation per packet.
 *
 * Design
 * ======
 * A pmd polls its ports in turn.  For each port it receives a batch of up
 * to FDP_DP_BATCH (32) packets and runs five phases over the batch:
 *   1. extract: parse each packet into a key (extract.c), which also
 *      returns the key's hash for the caches, computed in line as the key
 *      words are built (fdp__packet_extract_hash());
 *   2. classify: load the pipeline's snapshot (one pointer: the version
 *      and the shape, "The snapshot" below), probe the pmd's exact-match
 *      cache (EMC) with the whole key, the signature match cache (SMC)
 *      with the EMC's misses, and take the rest through the pipeline
 *      together: one batch lookup per table (a one-table pipeline: one
 *      fdp__table_lookup_batch_at() in all).  Every packet ends with an
 *      outcome (below) or a miss;
 *   3. group: gather the packets of each outcome (Open vSwitch's
 *      packet_batch_per_flow), so that the next phases run once per
 *      group, and prefetch each group's counters and actions;
 *   4. account and execute, group by group: one update of each flow's
 *      statistics, then the actions on the group's packets (actions that
 *      are one output queue them without the executor); outputs go to
 *      per-port transmit queues, each sent as one burst per batch.
 *
 * One type
 * --------
 * Everything the EMC, the SMC, the batch and its groups hold is a struct
 * fdp__outcome (lib/outcome.h): the counters of the flows a packet hit,
 * the actions to run, and the lookups that missed (for the tables' miss
 * counters).  Every rule carries its own one-rule outcome, which overlays
 * its actions and counters pointers and lies in its first cache line
 * with the fields a lookup reads: so a table lookup that finds rule R
 * gives the packet &R->oc, built once when R was linked and valid as long
 * as R.  Only a packet whose classification went through several flows
 * (goto_table, resubmit) needs an outcome of its own, and one is
 * allocated only for the packets the EMC keeps (the 1-in-100 draw: the
 * entry owns it and frees it when replaced, at the end of the batch, for
 * a packet earlier in the batch may still point at it); the others are
 * written into the pmd's per-batch scratch space, so a miss allocates
 * nothing in the steady state.  A multi-table packet whose
 * classification hit one flow and composed that flow's own actions gets
 * the flow's outcome, as in a one-table pipeline.  So the code after
 * classification has one path: grouping goes by what outcomes do
 * (fdp__outcome_same(): equal keys from the EMC share an outcome, fresh
 * classifications each have their own), accounting updates each counter
 * of the group's outcome (one, a rule's, on the fast path), and the
 * executor runs its actions.  A bare table (fdp_dp_create()) is served
 * through a one-table snapshot whose version is the table's own
 * (pmd_snapshot()): the same phases, the same code.
 *
 * The caches
 * ----------
 * The EMC is Open vSwitch's: 8192 entries, two-way set associative,
 * keyed by the full key, each holding the outcome the pipeline gave it.
 * A result enters the cache with probability 1/emc_insert_inv_prob
 * (OVS's default 1/100), so a flood of short flows cannot evict the long
 * ones that make the cache worth having.  An entry is valid only while
 * the snapshot's version (a bare table's: table.h, fdp_table_version())
 * is the one it was made at: any change to the tables, which could change
 * the answer for any key, retires every entry at once without touching
 * the cache.  That is also what keeps the cached rule outcomes safe: a
 * rule is freed only after a version change and a grace period, and a
 * pmd uses an entry only if the version it loaded in its current
 * read-side section matches.  (So an entry never reads its outcome to
 * know whether to free it: it keeps an 'owned' bit of its own.)
 *
 * The SMC holds what the EMC cannot: 100,000s of flows, 16 bytes an
 * entry instead of 128, because it keeps no key, only a 16-bit signature
 * (the hash's top half; the bucket index is its low bits).  Buckets are
 * one line: the version they were filled at and 4 (signature, outcome)
 * ways, each outcome a rule's own (fdp__rule_of_outcome() finds its
 * rule).  Without the key, a hit is checked against the rule's match, and
 * that proves the rule is the answer only if no other flow matches the
 * packet: so the SMC serves tables declared disjoint
 * (fdp_table_set_disjoint(), a megaflow cache, where Open vSwitch's SMC
 * makes the same assumption) and is bypassed for all others.  Open
 * vSwitch's entries are 16-bit flow indices; flowdp's table has no dense
 * index, and 100k flows need more than 16 bits, so a way holds the
 * outcome pointer, kept safe by the bucket's version as the EMC's are, and an
 * output hint (output_hint()): the port, when the flow's actions are one
 * output, so that a hit of such a flow never reads its actions.
 *
 * Tunnelled packets.  A decapsulated packet, or a continuation whose
 * pipeline set a tunnel field, has tunnel words (key.h, words 31-40)
 * that the entries have no room for.  Each pmd interns them
 * (datapath/tun-intern.c): a small table gives every distinct set of
 * tunnel words a 32-bit tag, never reused, and the EMC and the
 * continuation cache keep the tag in their copy of key word 5's low half
 * (conj_id's bits, zero in every key they see), compare it with the rest
 * of the key, and find it mixed into the packet's hash (cache_tags(), once
 * per packet before the caches).  A tunnelled packet's hit then costs one
 * probe of the intern table (ten words hashed, two entries compared) more
 * than a plain one; a packet without tunnel words pays one test of five
 * pairs of its key.  When tags run out (2^32 - 2 of them) tunnelled
 * packets skip the exact caches.
 *
 * Auto mode.  A cache pays only where probing it costs less than the
 * lookups it saves: not with one mask, where a table lookup is a hash
 * probe like the EMC's; not at 100k flows, where the EMC never hits.  So
 * each pmd measures: a short trial of the other choice in every period
 * (meter_use()) and the cheaper per packet kept.
 *
 * Cost on paper, per packet, an EMC hit on 1000 flows (everything in
 * L1/L2): the frame's first line (extract), the EMC's two lines for the
 * set (prefetched for the whole batch first), the rule's first line
 * (its outcome: actions and statistics pointers), the actions line and
 * the statistics
 * line, written: six lines (five when the entry's output hint spares the
 * actions).  An SMC hit replaces the EMC's lines by one bucket and adds
 * the rule's match line: bucket, rule, match, counters, four lines; at
 * 100k flows every one is an L3 or DRAM miss, which the classify and
 * group phases overlap by prefetching the whole batch's lines before
 * using the first.  Measured (callgrind, flowdp-bench's emc-hit shape):
 * about 505 instructions per packet in all, of which about 215 in these
 * phases, 125 in the parser and its hash, 95 in the ring port's
 * descriptor checks and frame recycling, and 50 in the benchmark's own
 * peer; perf puts an EMC hit near 40 ns on this machine, so the path is
 * bound by instructions, not misses, at 1000 flows, and by the four
 * misses at 100k (75-85 ns).
 *
 * Several tables.  An EMC entry is valid for the snapshot's version,
 * which grows with every change to any table, so a hit costs one cache
 * probe however many tables the packet went through; what grows with the
 * tables is the accounting, one counter update per flow hit, each a line
 * of its own.  The SMC serves only a one-table snapshot of a disjoint
 * table: its hits are proved by one rule's match, and a multi-table
 * answer is not one rule's.  A one-table pipeline with conjunctions is
 * looked up with fdp__pipeline_single_lookup_batch(), which looks the
 * clauses up in batches too.
 *
 * The snapshot.  What a pmd reads of a pipeline for a batch is one
 * object, the pipeline's published view (lib/pipeline-view.h), loaded
 * with one pointer load in the pmd's read-side section: the version
 * every lookup of the batch is made at (the caches' validity stamp too)
 * and the shape (one table or not).  The writer publishes a new view
 * after committing every table of a transaction (lib/pipeline.c,
 * "Versions and snapshots"), so the version and the shape a batch uses
 * are always one commit's, and since every EMC entry is stamped with the
 * version it was made at and used only at that version, an entry is used
 * only by batches that see the tables as it was made from.  (When the
 * version and the shape were two loads and the caches held rules or
 * outcomes by shape, a pmd could read a version, then a writer could
 * change the shape and bump the version, then the pmd read the new shape:
 * entries holding rules were read as outcomes.  Now there is one type,
 * and one load; test-dp's old_version_with_new_mode_loses_no_packet makes
 * a writer commit exactly there, through fdp__dp_snapshot_hook.)  The
 * lookups of a one-table pipeline's batch are made at the snapshot's
 * version too (fdp__table_lookup_batch_at()): its table may already hold
 * a commit the snapshot does not show.  Worked example: a pmd loads the
 * view {version 7, single = table 0}; its EMC holds rules' outcomes
 * stamped 7.  A writer adds a flow to table 1 and publishes {8, NULL}.
 * The pmd goes on with {7, table 0}: EMC hits stamped 7, lookups in table
 * 0 at 7, where the new flow is invisible; the table-1 flow is not even
 * reachable.  Its next batch loads {8, NULL}: every entry stamped 7 is
 * stale, and each packet goes through the whole pipeline at 8.
 *
 * Buffers (the UMEM).  One area of n_frames frames of frame_size bytes;
 * a free pool (a stack under a mutex) with a per-pmd cache in front of
 * it, so a pmd takes the mutex once per FDP__CACHE_SIZE / 2 frames.  A
 * packet that is output to its last destination travels in its own
 * frame; every earlier output copies it into a new frame (the actions
 * after an output may change the packet, and that output must not see
 * the change).
 *
 * Connection tracking
 * -------------------
 * A pipeline's composed actions hold, for each ct action a packet's
 * classification ran, a resolved ct record (lib/ct-action.h: zone,
 * commit, exec()'s mark and label, NAT, and for ct(table=N) the table,
 * the in_port and the frozen metadata and registers).  The executor
 * (execute.c) runs a packet's actions up to such a record and stops;
 * every packet of a group stops at the same record (the same actions,
 * and only drops end a packet early, so a packet dec_ttl dropped never
 * reaches the tracker), and the group's packets that reached it go
 * through the tracker in one fdp__ct_execute() call, which prefetches
 * their buckets and records across the call (ct_run()).  Then each goes
 * on from the action after the record.  A flow of one output never
 * reaches this path: the fast path does not look at ct at all.
 *
 * Recirculation (Open vSwitch's recirc).  For ct(table=N) the packet
 * continues in table N: the packet itself if the ct record is its last
 * action, else a copy in a new frame (Open vSwitch's fork: the original
 * goes on with the rest of its actions).  The continuation's key is the
 * packet extracted again (NAT may have rewritten it; in_port is the
 * record's), words 12-20 the record's frozen words, words 21-28 the
 * tracker's ct_state, ct_zone, ct_mark, ct_label and original tuple.
 * Continuations wait in a per-depth queue, the pmd's recirc_level for
 * that depth, and run as a batch of their own (level_run()) when the
 * batch that made them is done, or earlier when the queue fills or a
 * packet with another in_port comes: classification (below), grouping,
 * accounting and execution as for received packets, at the same
 * snapshot, and their own continuations one depth further.  A packet is
 * at depth 0 when received; a ct(table=N) at depth 6 (Open vSwitch's
 * MAX_RECIRC_DEPTH) sends nothing on and is counted (n_recirc_dropped);
 * the tracker has run on the packet all the same, as in Open vSwitch,
 * whose recirc action is what fails there.  A received packet whose
 * frame went on to a continuation is not counted as dropped where it
 * left; a continuation that ends without output is, unless it was a
 * fork's copy (its original is counted where it ends).
 *
 * The continuation cache (RC).  The EMC keys on the packet words,
 * which is right for received packets (the other words are zero), but a
 * continuation's outcome depends on every word (registers, ct_state,
 * ct_mark...) and on the table it starts in, so it has a cache of its
 * own: 16384 entries (4 MiB), two-way set associative as the EMC, keyed
 * by every word but nd_target's (as the EMC, packets with an nd_target skip
 * it) and the tunnel words (kept as their tag: "Tunnelled packets"), and
 * the table (rc_hash(): the packet words' hash, which
 * the packet already has from its extraction, seeds a multiply-xor mix
 * of the other 17 words and the table), valid for the snapshot's
 * version as EMC entries are, and filled with the same 1-in-
 * emc_insert_inv_prob draw (a rule's outcome, or one built and owned by
 * the entry).  An established connection's packets then take one probe
 * of it instead of a pipeline classification from table N.  It is on
 * whenever the EMC is on (emc_mode not off, emc_insert_inv_prob not 0):
 * one switch for the exact caches, which tests turn off to check that
 * the caches change no result.  An entry is 4 lines (the key is 232
 * bytes), so it keeps no output hint.  Its owned outcomes that an
 * insertion lets go are freed when the received batch and all its
 * continuations are done (a packet at a shallower depth may still be
 * running one); an insertion that would let go more than RC_DOOMED_MAX
 * in one batch is skipped.  16384 entries: the cases the issue measures
 * run 10k connections, two keys each at most (a direction each), and
 * the cache should hold them.
 *
 * Bare tables.  A bare table's rules keep the flow-form ct record (no
 * pipeline composes it): ct_run() resolves it with fdp__ct_resolve()
 * against each packet's key and calls the tracker once per run of
 * packets whose records resolve alike.  A bare table has no table N to
 * go on in (Open vSwitch has no such case: every ct(table=N) there is in
 * a bridge's pipeline), so table=N is ignored, the action runs as ct
 * without table, and n_ct_table_ignored counts it.
 *
 * Fragments (datapath/ipf.c, Open vSwitch's ipf).  A ct record's packets
 * that are IP fragments (one key word each says so; a batch without one
 * pays nothing more) are offered to the datapath's reassembler before
 * the tracker, one at a time, in the record's zone, keyed also by the
 * recirculation depth (Open vSwitch keys by recirc_id).  A fragment it
 * holds leaves the batch: the reassembler keeps a copy and the frame goes
 * back to the pmd's cache at once (held fragments never pin frames, and
 * their expiry needs no pmd); it counts as gone on, not dropped.  When a
 * fragment completes its list, the reassembled packet (in the
 * reassembler's memory: it may be larger than a frame) goes through the
 * tracker with the completing packet's record, and its fragments, each
 * with the whole packet's addresses, ports and checksum as NAT left them,
 * come back in offset order, each copied into a new frame, and go on
 * from the record with the whole packet's ct result: to table N for
 * ct(table=N), or through the actions after the record, in batches of
 * their own (ct_release(); their drops are not received packets' drops).
 * Fragments the reassembler refuses (too small, overlapping, over its
 * limits, reassembly disabled) reach the tracker alone, which marks them
 * +inv, as Open vSwitch's does.  A pmd frees up to IPF_EXPIRE_BUDGET
 * timed-out lists whenever a batch brings a fragment.
 *
 * Expiry (datapath/ct-sweeper.c): a thread the datapath starts at
 * creation and stops at destruction sweeps the tracker a slice at a
 * time, off the packet path; no pmd ever removes a connection or waits
 * for a grace period.  The tracker's clock is fdp__ct_clock_ms(), read
 * once per ct action per group.
 *
 * Worked example: "table=0,ip,actions=ct(table=1,zone=5)" and
 * "table=1,ct_state=+trk+est,ip,actions=output:2", a batch of 3 packets
 * of two established UDP connections.  Table 0 gives all three one
 * outcome whose actions are the resolved record {zone 5, RECIRC, table
 * 1}: one group, one fdp__ct_execute() of 3 packets, each +trk+est.  The
 * record is the last action, so each packet itself goes to the depth-1
 * queue with its key (packet words, zero registers, ct_state 0x22,
 * ct_zone 5, the original tuple).  When the batch is done, depth 1 runs:
 * say the RC holds the first connection's key (table 1): two packets hit
 * it, the third is classified from table 1 (and may enter the RC); all
 * three hit the table-1 flow, one group, one output queue for port 2.
 *
 * Invariants
 * ==========
 * - Every frame is in exactly one place: the pool, a pmd's cache, a
 *   batch being processed, a port's pending tx queue, or (ring ports) the
 *   peer's hands, which the owner table records.
 * - A port's rx is polled by one pmd only (rank modulo n_pmds); its tx
 *   may be fed by every pmd, under the port's tx mutex.
 *
 * Scaling to many cores
 * ---------------------
 * What each pmd owns: its rx ports (each port, an rx queue, is polled by
 * one pmd), its EMC (1 MiB) and SMC (16 MiB), its frame cache, its batch
 * and transmit queues, its counters, and one shard of every flow's
 * counters (while shards last).  What is shared: the table (read-only
 * under RCU: lookups take no lock and write nothing), the port set (RCU),
 * the table version or the pipeline's snapshot pointer (one line, read
 * every batch, written once per commit), the free-frame pool (a mutex taken once per 128 frames), and
 * the ports' tx side (a mutex per port and burst).  Measured on this
 * machine's 2 cores: 2 pmds forward 1.8-1.9x one (docs/PERFORMANCE.md).
 * Planned for 64: the pool mutex would be taken 5 million times a second
 * at 10 Mpps per core, so the pool becomes one per NUMA node, or frames
 * stay with the port they came from (an AF_XDP UMEM per queue); a port
 * that 64 pmds transmit on would serialise them on its mutex, so each
 * pmd gets its own tx queue per port (AF_XDP: a socket per queue, the
 * kernel's XPS; Open vSwitch's static tx queues); flow counters have two
 * owned shards, which is right for two cores: with RSS a flow arrives on
 * one queue, so the shared shard's locked adds hit a line only that core
 * holds (about 20 cycles, no transfer), and a flow whose packets reach
 * many cores would want per-pmd copies as Open vSwitch's dp_netdev_flow;
 * a grace period signals every core (membarrier), so writers keep
 * batching their waits (lib/table.c).  Memory: up to 17 MiB of caches
 * per pmd (the SMC's pages are taken only as it fills), 1.1 GiB for 64.
 *
 * Thread-safety
 * =============
 * Control functions serialise on dp->mutex and publish the port set with
 * RCU; a removed port is closed after a grace period, when no pmd can be
 * transmitting to it.  Pmd counters are written by their pmd only and
 * read with relaxed atomics; so are a port's rx counters (its polling
 * pmd) and its tx counters (under its tx mutex, which a datapath with one
 * pmd does not need).  Each pmd has its own caches: nothing a pmd writes
 * per packet is shared, except the flows' statistics.
 *
 * Worked example
 * ==============
 * Flow "priority=10,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2" and a
 * batch of 3 packets from port 1 to 10.0.0.2 with TTLs 64, 64 and 1.
 * Extract gives three keys, the first two equal.  Packet 0 misses the
 * EMC and the table finds the flow's rule R: its outcome is &R->oc
 * {counters [R's], actions dec_ttl,output:2}; say the 1-in-100 draw
 * inserts it.  Packet 1 then hits the EMC.  (Both were looked up in the
 * same batch, so in fact both went to the table; the EMC serves the next
 * batch.)  Grouping finds one outcome and three packets; accounting adds
 * 3 packets to R's counters in one update.  Executing, packets 0 and 1
 * get TTL 63 (IPv4 checksum updated) and are queued for port 2 in their
 * own frames; packet 2's dec_ttl fails: dropped, counted in
 * n_ttl_expired and in port 1's rx_dropped.  The tx flush hands port 2
 * two descriptors in one burst.
 *
 * The same flow in table 1, behind "table=0,priority=1,actions=
 * goto_table:1" (rule G): the snapshot is not one table, so the three
 * packets go through the pipeline together, one batch lookup of table 0
 * (G for all three), then one of table 1 (R for all three).  Each
 * classification hit two flows, so each packet gets an outcome built for
 * it {counters [G's, R's], actions dec_ttl,output:2}: packet 0's, if the
 * draw picks it, allocated and owned by its EMC entry, the others in the
 * pmd's scratch space.  The three outcomes are equal
 * (fdp__outcome_same()), so grouping makes one group again; accounting
 * adds 3 packets to G's counters and to R's, and the rest is as above.
 *
 * References: B. Pfaff et al., "The Design and Implementation of Open
 * vSwitch", NSDI 2015 (the microflow cache); Open vSwitch's
 * lib/dpif-netdev.c; Linux Documentation/networking/af_xdp.rst.
 */
#include <config.h>

#include "datapath/dp-private.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "datapath/conntrack.h"
#include "datapath/ct-sweeper.h"
#include "datapath/learner.h"
#include "datapath/execute.h"
#include "datapath/meter.h"
#include "datapath/ipf.h"
#include "datapath/mac-learning.h"
#include "datapath/normal.h"
#include "datapath/underlay.h"
#include "datapath/tun-intern.h"
#include "datapath/extract-internal.h"
#include <flowdp/cpu.h>
#include <flowdp/hash.h>
#include <flowdp/pipeline.h>
#include <flowdp/table.h>
#include "lib/actions-internal.h"
#include "lib/other-actions.h"
#include "lib/ds.h"
#include "lib/field.h"
#include "lib/pipeline-view.h"
#include "lib/rcu.h"
#include "lib/rule.h"
#include "lib/tss.h"
#include "lib/util.h"
#include "datapath/tunnel.h"

/* ---------------------------------------------------------------------- */
/* Definitions.                                                            */

#define DEFAULT_N_FRAMES 16384
#define DEFAULT_FRAME_SIZE 2048
#define MIN_FRAME_SIZE 2048     /* Headroom + a full 1518-byte frame. */
#define MAX_FRAME_SIZE 65536
#define MAX_N_FRAMES (1u << 22) /* 4M frames: 8 GiB of 2 KiB frames. */
#define DEFAULT_EMC_INV_PROB 100

/* The exact-match cache: EMC_ENTRIES entries, 2-way set associative. */
#define EMC_SHIFT 13
#define EMC_ENTRIES (1u << EMC_SHIFT)
#define EMC_MASK (EMC_ENTRIES - 1)

/* The packet words an EMC entry keeps: all but the last two, nd_target
 * (key.h), which only IPv6 neighbour discovery fills.  With them an entry
 * would take three cache lines instead of two; without them, an ND
 * packet's key is not the EMC's to hold (emc_holds()), and such packets,
 * a few per neighbour and minute, go to the signature cache and the
 * classifier, which see the whole key. */
#define EMC_KEY_WORDS (FDP_KEY_PACKET_WORDS - 2)
static_assert(FDP__WORD_ND_TARGET == EMC_KEY_WORDS
              && FDP__BITS_ND_TARGET == 128,
              "the EMC leaves out the last two packet words, nd_target's");

struct emc_entry {
    uint32_t hash;
    uint32_t out;               /* Output hint: see output_hint(). */
    uint64_t version;           /* Snapshot version the entry is valid
                                 * at. */
    const struct fdp__outcome *flow;    /* NULL: empty.  A rule's own
                                         * outcome, or one built for this
                                         * entry... */
    bool owned;                 /* ...which it then frees when replaced
                                 * (never read through 'flow': a stale
                                 * entry's rule may be gone). */
    uint64_t key[EMC_KEY_WORDS];        /* The key's packet words but
                                         * nd_target's (see emc_holds()):
                                         * the pipeline's are zero on
                                         * entry (key.h). */
} __attribute__((aligned(64)));
static_assert(sizeof(struct emc_entry) == 128, "an EMC entry is 2 lines");

/* The signature match cache (SMC): buckets of SMC_WAYS entries, each a
 * 16-bit signature of the key's hash and the flow it led to, with the
 * table version the bucket is valid at.  See "The caches" in the design. */
#define SMC_WAYS 4
/* Open vSwitch's size: at 2^18, 100k flows overflowed 2% of the 4-way
 * buckets and 3% of packets missed; at 2^20 none. */
#define DEFAULT_SMC_ENTRIES (1u << 20)
#define MAX_SMC_ENTRIES (1u << 24)

struct smc_bucket {
    uint64_t version;
    uint16_t sig[SMC_WAYS];
    const struct fdp__outcome *oc[SMC_WAYS];    /* Rules' own outcomes
                                                 * (fdp__rule_of_outcome()
                                                 * finds the match). */
    uint32_t out[SMC_WAYS];     /* Output hints: see output_hint(). */
} __attribute__((aligned(64)));
static_assert(sizeof(struct smc_bucket) == 64, "an SMC bucket is a line");

/* A cache's auto mode (see meter_use()). */
struct cache_meter {
    enum fdp_dp_cache_mode mode;
    bool use;                   /* AUTO: the current choice. */
    bool trial_midway;          /* Trial in the middle of the period, not
                                 * at its end (the SMC's, so that the two
                                 * caches' trials never overlap). */
    uint32_t period;            /* Batches, METER_PERIOD or more. */
    uint32_t batches;           /* In the current period. */
    uint64_t cycles[2];         /* Classification cycles, [used]. */
    uint64_t packets[2];        /* Packets classified, [used]. */
};

static void meter_init(struct cache_meter *, enum fdp_dp_cache_mode,
                       bool trial_midway);

/* Per-port transmit batches: up to TXQ_PORTS ports per batch, TXQ_MAX
 * packets each before an early flush (two batches' worth). */
#define TXQ_PORTS 16
#define TXQ_MAX (2 * FDP_DP_BATCH)

struct txq {
    struct fdp__port *port;
    uint32_t n;
    uint32_t n_dropped;         /* Outputs lost for want of a frame. */
    struct fdp_desc descs[TXQ_MAX];
};

/* The pmd's counters (written by the pmd only). */
struct pmd_counters {
    uint64_t n_packets;
    uint64_t n_emc_hits;
    uint64_t n_smc_hits;
    uint64_t n_table_hits;
    uint64_t n_missed;
    uint64_t n_upcalls;
    uint64_t n_ttl_expired;
    uint64_t n_no_room;
    uint64_t n_emc_bypassed;
    uint64_t n_ct_packets;
    uint64_t n_recirculations;
    uint64_t n_recirc_cache_hits;
    uint64_t n_recirc_missed;
    uint64_t n_recirc_dropped;
    uint64_t n_ct_table_ignored;
    uint64_t n_packet_outs;
};

/* The packets of a batch that hit one flow, in arrival order: Open
 * vSwitch's packet_batch_per_flow.  Accounting and actions run once per
 * group. */
struct flow_group {
    const struct fdp__outcome *flow;    /* NULL: the misses. */
    uint32_t n;
    uint64_t n_bytes;
    uint8_t pkts[FDP_DP_BATCH];
};

struct batch {
    uint32_t n;
    uint32_t n_groups;
    struct fdp__pkt pkts[FDP_DP_BATCH];
    uint32_t hashes[FDP_DP_BATCH];
    uint32_t tags[FDP_DP_BATCH];    /* Tunnel tags (cache_tags()). */
    const struct fdp__outcome *flows[FDP_DP_BATCH]; /* NULL: a miss. */
    uint32_t hints[FDP_DP_BATCH];   /* From the caches: output_hint(). */
    bool sent[FDP_DP_BATCH];    /* Went to at least one port. */
    struct flow_group groups[FDP_DP_BATCH];
    bool released;              /* Fragments ipf sent on (ct_release()):
                                 * none of them is a received packet;
                                 * 'hashes' holds their packet words'
                                 * hashes. */
};

/* Scratch memory for the outcomes of a batch's packets that no cache
 * keeps (pipeline_outcome()): one per packet, reused from batch to
 * batch. */
struct scratch_pool {
    struct fdp__outcome *oc[FDP_DP_BATCH];
    size_t size[FDP_DP_BATCH];
    uint32_t n;
};

/* Open vSwitch's bound on recirculations (MAX_RECIRC_DEPTH in
 * lib/dpif-netdev.c): a packet received is at depth 0, and a ct(table=N)
 * at depth MAX_RECIRC_DEPTH is dropped.  See "Connection tracking" in the
 * design. */
#define MAX_RECIRC_DEPTH 6

/* The continuations waiting at one depth: packets whose ct(table=N) sent
 * them on, each with its table and whole key (packet words re-extracted,
 * the frozen words, the tracker's ct fields). */
struct recirc_level {
    struct batch batch;
    uint32_t in_no;             /* The in_port of every packet queued. */
    uint8_t table[FDP_DP_BATCH];
    bool copy[FDP_DP_BATCH];    /* A fork's copy: its drops are not the
                                 * received packet's. */
    uint32_t pkt_hash[FDP_DP_BATCH];    /* Of the packet words alone, as
                                         * the EMC's: see rc_hash(). */
    struct fdp_pipeline_result results[FDP_DP_BATCH];
    struct scratch_pool scratch;
};

/* The continuation cache (RC): RC_ENTRIES entries, two-way set
 * associative, keyed by every word of the key and the table the
 * continuation starts in.  See "Connection tracking" in the design. */
#define RC_SHIFT 14
#define RC_ENTRIES (1u << RC_SHIFT)
#define RC_MASK (RC_ENTRIES - 1)
/* Owned outcomes an RC insertion may let go in one batch, freed when the
 * batch is done; an insertion that would pass it is skipped. */
#define RC_DOOMED_MAX 64

/* Every word but nd_target's and the tunnel's (emc_holds()). */
#define RC_KEY_WORDS (FDP__TUN_FIRST_WORD - 2)
/* The words after the packet words that an entry keeps. */
#define RC_STATE_WORDS (FDP__TUN_FIRST_WORD - FDP_KEY_PACKET_WORDS)

struct rc_entry {
    uint32_t hash;
    uint8_t table;
    bool owned;                 /* As emc_entry's. */
    uint16_t pad;               /* No room for an output hint: the key
                                 * takes all but 24 bytes of the 4
                                 * lines. */
    uint64_t version;
    const struct fdp__outcome *flow;    /* NULL: empty. */
    uint64_t key[RC_KEY_WORDS];         /* Every word of the key but
                                         * nd_target's and the tunnel's,
                                         * as the EMC (emc_holds()). */
} __attribute__((aligned(64)));
static_assert(sizeof(struct rc_entry) == 4 * 64,
              "a continuation cache entry is 4 lines");

struct fdp_dp_pmd {
    struct fdp_dp *dp;
    unsigned int id;
    struct fdp_dp_pmd *next;    /* In dp->pmds, under dp->mutex. */
    struct emc_entry *emc;      /* NULL if the cache is off. */
    struct smc_bucket *smc;     /* NULL if the cache is off. */
    uint32_t smc_mask;          /* Buckets - 1. */
    size_t smc_size;            /* Bytes mapped for 'smc'. */
    struct cache_meter emc_meter, smc_meter;
    uint32_t rng;               /* xorshift32 state for insertions. */
    uint32_t underlay_tick;     /* Polls, for fdp__underlay_pmd_work(). */
    unsigned int stats_shard;   /* For the flows' counters: lib/rule.h. */
    uint64_t meter_now;         /* The meters' clock in this poll, or 0
                                 * until a meter reads it. */
    struct fdp__frame_cache cache;
    struct pmd_counters counters;
    struct fdp__ct_pmd *ct;     /* This pmd's tracker context. */
    struct rc_entry *rc;        /* NULL if off (no pipeline, or no EMC). */
    struct recirc_level *levels[MAX_RECIRC_DEPTH];  /* Depths 1 to MAX:
                                                     * NULL for a bare
                                                     * table. */
    const struct fdp__outcome *rc_doomed[RC_DOOMED_MAX];
    uint32_t n_rc_doomed;

    /* Per batch. */
    const struct fdp__pipeline_view *view;  /* The snapshot: the
                                             * pipeline's, or... */
    struct fdp__pipeline_view table_view;   /* ...a bare table's. */
    const struct port_set *ports;
    struct fdp__port *in_port;
    uint32_t in_no;             /* The in_port of the packets being run:
                                 * in_port's, or a continuation's. */
    uint32_t last_out_no;       /* The port of the last one-output flow */
    struct txq *last_txq;       /* and its queue, or 0/NULL. */
    uint32_t n_txq;
    struct txq txq[TXQ_PORTS];
    struct batch batch;

    /* Multi-table classification's working memory, the outcomes of a
     * batch's misses that do not enter the EMC (reused from batch to
     * batch), and the outcomes the EMC let go during the batch, freed once
     * it is done. */
    struct fdp_pipeline_result results[FDP_DP_BATCH];
    struct scratch_pool scratch;
    struct fdp__outcome *doomed[FDP_DP_BATCH];
    uint32_t n_doomed;

    /* Tunnels (datapath/tunnel.h): the outer headers this pmd pushes
     * (made on first use), and the decapsulated packets of a batch that
     * go on as received on a tunnel port (batch_decap()). */
    struct fdp__tnl_pmd *tnl;
    struct batch tnl_batch;
    struct fdp__tun_intern *tun;    /* Tunnel tags, made on first use
                                     * (datapath/tun-intern.c). */

    /* The in_port of a packet-out (po_run()). */
    struct fdp__port po_port;
};

/* The published set of ports, sorted by number. */
struct port_set {
    size_t n;
    struct fdp__tnl_rx_set *tnl;    /* Its tunnel ports, or NULL. */
    struct rcu_head rcu;
    struct fdp__port *ports[];
};

struct upcall_handler {
    fdp_dp_upcall_cb *cb;
    void *aux;
    struct rcu_head rcu;
};

/* Packet-outs waiting for a pmd (fdp_dp_packet_out()): a ring of
 * PO_MAX, under 'mutex'; 'n' is also read without it, as a hint. */
#define PO_MAX 256
struct po_item {
    uint32_t in_port;
    uint32_t len;
    uint8_t *data;              /* Owned. */
    struct fdp_actions *actions;    /* Owned. */
    bool has_state;
    struct fdp_key state;       /* If 'has_state': fdp_dp_packet_out()'s. */
};
struct po_queue {
    pthread_mutex_t mutex;
    uint32_t head;
    uint32_t n;
    struct po_item items[PO_MAX];
    uint64_t n_dropped;         /* Refused (queue full) or lost (no
                                 * frame). */
};

struct fdp_dp {
    struct fdp_table *table;    /* NULL with a pipeline... */
    struct fdp_pipeline *pipeline;  /* ...and NULL with a table. */
    struct fdp_dp_options options;
    uint32_t emc_basis;

    uint8_t *umem;
    uint64_t umem_size;
    uint32_t *frame_owner;      /* Per frame: ring port holding it, or 0. */
    struct fdp__pool pool;

    struct port_set *ports;     /* RCU. */
    struct upcall_handler *upcall;  /* RCU; NULL if none. */

    pthread_mutex_t mutex;      /* Control: ports, pmds, upcall. */
    uint32_t next_rank;
    struct fdp_dp_pmd *pmds;
    struct pmd_counters retired;    /* Counters of destroyed pmds. */
    struct fdp__ct *ct;         /* The connection tracker. */
    struct fdp__ct_sweeper *sweeper;    /* Its expiry thread. */
    struct fdp__ipf *ipf;       /* Fragments before the tracker. */
    struct fdp__meters *meters; /* OpenFlow meters (datapath/meter.c). */
    struct fdp__learner *learner;   /* learn()'s writer (pipelines only). */
    struct fdp__normal *normal; /* NORMAL's learning switch. */
    struct fdp__underlay *underlay; /* Addresses, routes, neighbours
                                     * (datapath/underlay.c). */
    struct po_queue po;         /* Packet-outs (fdp_dp_packet_out()). */
};

void (*fdp__dp_snapshot_hook)(struct fdp_dp *);

static const struct fdp__port_class *const port_classes[] = {
    &fdp__ring_port_class,
    &fdp__pcap_port_class,
    &fdp__afxdp_port_class,
    &fdp__afpacket_port_class,
    &fdp__vxlan_port_class,
    &fdp__geneve_port_class,
    &fdp__gre_port_class,
};

/* ---------------------------------------------------------------------- */
/* Frames.                                                                 */

uint8_t *
fdp__dp_umem(const struct fdp_dp *dp, uint64_t *size)
{
    if (size) {
        *size = dp->umem_size;
    }
    return dp->umem;
}

uint32_t *
fdp__dp_frame_owner(const struct fdp_dp *dp)
{
    return dp->frame_owner;
}

uint32_t
fdp__dp_frame_size(const struct fdp_dp *dp)
{
    return dp->options.frame_size;
}

struct fdp_pipeline *
fdp__dp_pipeline(const struct fdp_dp *dp)
{
    return dp->pipeline;
}

struct fdp__ct *
fdp__dp_ct(const struct fdp_dp *dp)
{
    return dp->ct;
}

struct fdp__meters *
fdp__dp_meters(const struct fdp_dp *dp)
{
    return dp->meters;
}

struct fdp__ipf *
fdp__dp_ipf(const struct fdp_dp *dp)
{
    return dp->ipf;
}

void
fdp_dp_ipf_set_enabled(struct fdp_dp *dp, bool ipv6, bool enabled)
{
    fdp__ipf_set_enabled(dp->ipf, ipv6, enabled);
}

int
fdp_dp_ipf_set_min_frag(struct fdp_dp *dp, bool ipv6, uint32_t size)
{
    return fdp__ipf_set_min_frag(dp->ipf, ipv6, size);
}

int
fdp_dp_ipf_set_max_nfrags(struct fdp_dp *dp, uint32_t n)
{
    return fdp__ipf_set_max_nfrags(dp->ipf, n);
}

static void
ipf_proto_status(const struct fdp__ipf_proto_status *in,
                 struct fdp_dp_ipf_proto_status *out)
{
    *out = (struct fdp_dp_ipf_proto_status) {
        .enabled = in->enabled,
        .min_frag_size = in->min_frag_size,
        .n_accepted = in->n_accepted,
        .n_completed = in->n_completed,
        .n_expired = in->n_expired,
        .n_too_small = in->n_too_small,
        .n_overlap = in->n_overlap,
        .n_purged = in->n_purged,
    };
}

void
fdp_dp_ipf_get_status(struct fdp_dp *dp, struct fdp_dp_ipf_status *status)
{
    struct fdp__ipf_status s;

    fdp__ipf_get_status(dp->ipf, &s);
    ipf_proto_status(&s.v4, &status->v4);
    ipf_proto_status(&s.v6, &status->v6);
    status->nfrag = s.nfrag;
    status->nfrag_max = s.nfrag_max;
}

void
fdp__dp_ct_pmd_stats(struct fdp_dp *dp, struct fdp__ct_pmd_stats *sum)
{
    memset(sum, 0, sizeof *sum);
    pthread_mutex_lock(&dp->mutex);
    for (struct fdp_dp_pmd *pmd = dp->pmds; pmd; pmd = pmd->next) {
        struct fdp__ct_pmd_stats s;
        fdp__ct_pmd_stats(pmd->ct, &s);
        sum->n_packets += s.n_packets;
        sum->n_created += s.n_created;
        sum->n_invalid += s.n_invalid;
        sum->n_full += s.n_full;
    }
    pthread_mutex_unlock(&dp->mutex);
}

struct fdp__pool *
fdp__dp_pool(struct fdp_dp *dp)
{
    return &dp->pool;
}

void
fdp__cache_init(struct fdp__frame_cache *c, struct fdp__pool *pool)
{
    c->pool = pool;
    c->frame_mask = ~(uint64_t) (pool->frame_size - 1);
    c->n = 0;
}

/* fdp__cache_get() with an empty cache: half a cache from the pool. */
uint64_t
fdp__cache_refill(struct fdp__frame_cache *c)
{
    struct fdp__pool *pool = c->pool;

    pthread_mutex_lock(&pool->mutex);
    uint32_t n = pool->n < FDP__CACHE_SIZE / 2 ? pool->n
                                               : FDP__CACHE_SIZE / 2;
    pool->n -= n;
    memcpy(c->frames, &pool->frames[pool->n], n * sizeof *c->frames);
    pthread_mutex_unlock(&pool->mutex);
    c->n = n;
    return n ? c->frames[--c->n] : UINT64_MAX;
}

/* Gives 'n' frames from the top of the cache back to the pool. */
void
fdp__cache_spill(struct fdp__frame_cache *c, uint32_t n)
{
    struct fdp__pool *pool = c->pool;

    pthread_mutex_lock(&pool->mutex);
    c->n -= n;
    memcpy(&pool->frames[pool->n], &c->frames[c->n], n * sizeof *c->frames);
    pool->n += n;
    pthread_mutex_unlock(&pool->mutex);
}

void
fdp__cache_flush(struct fdp__frame_cache *c)
{
    if (c->n) {
        fdp__cache_spill(c, c->n);
    }
}

/* ---------------------------------------------------------------------- */
/* Creation and destruction.                                               */

void
fdp_dp_options_init(struct fdp_dp_options *o)
{
    memset(o, 0, sizeof *o);
    o->n_frames = DEFAULT_N_FRAMES;
    o->frame_size = DEFAULT_FRAME_SIZE;
    o->emc_insert_inv_prob = DEFAULT_EMC_INV_PROB;
    o->n_pmds = 1;
    o->emc_mode = FDP_DP_CACHE_AUTO;
    o->smc_mode = FDP_DP_CACHE_AUTO;
    o->smc_entries = DEFAULT_SMC_ENTRIES;
    o->smc_insert_inv_prob = 1;
    o->ct_capacity = FDP_CT_DEFAULT_LIMIT;
}

static bool
options_valid(const struct fdp_dp_options *o)
{
    return o->n_frames >= 2 * FDP__CACHE_SIZE && o->n_frames <= MAX_N_FRAMES
           && o->frame_size >= MIN_FRAME_SIZE
           && o->frame_size <= MAX_FRAME_SIZE
           && !(o->frame_size & (o->frame_size - 1))
           && o->n_pmds >= 1 && o->n_pmds <= 1024
           && (unsigned int) o->emc_mode <= FDP_DP_CACHE_OFF
           && (unsigned int) o->smc_mode <= FDP_DP_CACHE_OFF
           && (o->smc_mode == FDP_DP_CACHE_OFF
               || (o->smc_entries >= SMC_WAYS
                   && o->smc_entries <= MAX_SMC_ENTRIES
                   && !(o->smc_entries & (o->smc_entries - 1))))
           && o->ct_capacity >= 1 && o->ct_capacity <= FDP__CT_MAX_CAPACITY;
}

static int
dp_create(struct fdp_table *table, struct fdp_pipeline *pipeline,
          const struct fdp_dp_options *options, struct fdp_dp **dpp)
{
    struct fdp_dp *dp;
    int error;

    *dpp = NULL;
    if (!table && !pipeline) {
        return EINVAL;
    }
    /* A FLOWDP_CPU the machine cannot honour is refused here rather than
     * silently running generic code (see flowdp/cpu.h). */
    error = fdp_cpu_init();
    if (error) {
        return error;
    }
    dp = calloc(1, sizeof *dp);
    if (!dp) {
        return ENOMEM;
    }
    if (options) {
        dp->options = *options;
    } else {
        fdp_dp_options_init(&dp->options);
    }
    if (!options_valid(&dp->options)) {
        free(dp);
        return EINVAL;
    }
    error = fdp_hash_random_basis(&dp->emc_basis);
    if (error) {
        free(dp);
        return error;
    }
    dp->table = table;
    dp->pipeline = pipeline;
    dp->umem_size = (uint64_t) dp->options.n_frames * dp->options.frame_size;
    dp->umem = aligned_alloc(4096, dp->umem_size);
    dp->frame_owner = calloc(dp->options.n_frames, sizeof *dp->frame_owner);
    dp->pool.frames = malloc(dp->options.n_frames * sizeof *dp->pool.frames);
    dp->ports = calloc(1, sizeof *dp->ports);
    error = fdp__ct_create(dp->options.ct_capacity, &dp->ct);
    if (!error) {
        error = fdp__ipf_create(&dp->ipf);
    }
    if (!error) {
        error = fdp__ct_sweeper_start(dp->ct, &dp->sweeper);
    }
    dp->meters = fdp__meters_create();
    if (!error && pipeline) {
        error = fdp__learner_start(pipeline, &dp->learner);
    }
    if (!error) {
        error = fdp__normal_create(&dp->normal);
    }
    if (!error) {
        error = fdp__underlay_create(&dp->underlay);
    }
    if (error || !dp->meters || !dp->umem || !dp->frame_owner || !dp->pool.frames
        || !dp->ports) {
        fdp__learner_stop(dp->learner);
        fdp__normal_destroy(dp->normal);
        fdp__underlay_destroy(dp->underlay);
        fdp__ct_sweeper_stop(dp->sweeper);
        fdp__ipf_destroy(dp->ipf);
        fdp__ct_destroy(dp->ct);
        fdp__meters_destroy(dp->meters);
        free(dp->umem);
        free(dp->frame_owner);
        free(dp->pool.frames);
        free(dp->ports);
        free(dp);
        return ENOMEM;
    }
    /* Lowest frames on top of the stack: a light load touches few pages. */
    for (uint32_t i = 0; i < dp->options.n_frames; i++) {
        dp->pool.frames[i] = (uint64_t) (dp->options.n_frames - 1 - i)
                             * dp->options.frame_size;
    }
    dp->pool.n = dp->options.n_frames;
    dp->pool.frame_size = dp->options.frame_size;
    pthread_mutex_init(&dp->pool.mutex, NULL);
    pthread_mutex_init(&dp->mutex, NULL);
    pthread_mutex_init(&dp->po.mutex, NULL);
    *dpp = dp;
    return 0;
}

int
fdp_dp_create(struct fdp_table *table, const struct fdp_dp_options *options,
              struct fdp_dp **dpp)
{
    if (!table) {
        *dpp = NULL;
        return EINVAL;
    }
    return dp_create(table, NULL, options, dpp);
}

int
fdp_dp_create_pipeline(struct fdp_pipeline *pipeline,
                       const struct fdp_dp_options *options,
                       struct fdp_dp **dpp)
{
    if (!pipeline) {
        *dpp = NULL;
        return EINVAL;
    }
    return dp_create(NULL, pipeline, options, dpp);
}

static void port_close(struct fdp__port *);

void
fdp_dp_destroy(struct fdp_dp *dp)
{
    if (!dp) {
        return;
    }
    /* No pmd is polling: nothing to wait for. */
    for (size_t i = 0; i < dp->ports->n; i++) {
        port_close(dp->ports->ports[i]);
    }
    while (dp->pmds) {
        fdp_dp_pmd_destroy(dp->pmds);
    }
    fdp__rcu_barrier();         /* Deferred frees of old port sets. */
    fdp__tnl_rx_set_destroy(dp->ports->tnl);
    free(dp->ports);
    free(dp->upcall);
    /* No pmd is left to queue learned flows: the learner's last drain
     * adds what they queued. */
    fdp__learner_stop(dp->learner);
    /* The sweeper wakes at once and ends after at most one slice. */
    fdp__ct_sweeper_stop(dp->sweeper);
    fdp__normal_destroy(dp->normal);
    fdp__underlay_destroy(dp->underlay);
    fdp__ipf_destroy(dp->ipf);
    fdp__ct_destroy(dp->ct);
    fdp__meters_destroy(dp->meters);
    for (uint32_t i = 0; i < dp->po.n; i++) {
        struct po_item *it = &dp->po.items[(dp->po.head + i) % PO_MAX];
        free(it->data);
        fdp_actions_destroy(it->actions);
    }
    pthread_mutex_destroy(&dp->po.mutex);
    pthread_mutex_destroy(&dp->pool.mutex);
    pthread_mutex_destroy(&dp->mutex);
    free(dp->pool.frames);
    free(dp->frame_owner);
    free(dp->umem);
    free(dp);
}

/* ---------------------------------------------------------------------- */
/* Ports.                                                                  */

static void
port_close(struct fdp__port *port)
{
    free(port->vlan);
    free(port->spec);
    pthread_mutex_destroy(&port->tx_mutex);
    pthread_mutex_destroy(&port->error_mutex);
    port->class->close(port);
}

static void
free_port_set(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    struct port_set *set = CONTAINER_OF(head, struct port_set, rcu);
    fdp__tnl_rx_set_destroy(set->tnl);
    free(set);
}

/* Replaces the published port set by 'new' (the old one is freed after a
 * grace period).  Under dp->mutex. */
static void
publish_ports(struct fdp_dp *dp, struct port_set *new)
{
    struct port_set *old = dp->ports;

    FDP_RCU_SET(dp->ports, new);
    fdp__rcu_defer(&old->rcu, free_port_set);
}

/* The port numbered 'port_no' in 'set', or NULL. */
static struct fdp__port *
find_port(const struct port_set *set, uint32_t port_no)
{
    size_t lo = 0, hi = set->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t no = set->ports[mid]->port_no;
        if (no == port_no) {
            return set->ports[mid];
        } else if (no < port_no) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

static int
open_port(struct fdp_dp *dp, const char *spec, struct fdp__port **portp,
          char **errorp)
{
    const char *colon = strchr(spec, ':');
    size_t type_len = colon ? (size_t) (colon - spec) : strlen(spec);

    for (size_t i = 0; i < FDP_ARRAY_SIZE(port_classes); i++) {
        const struct fdp__port_class *class = port_classes[i];
        if (strlen(class->type) == type_len
            && !strncmp(spec, class->type, type_len)) {
            struct fdp__port *port = NULL;
            int error = class->open(dp, colon ? colon + 1 : NULL, &port,
                                    errorp);
            if (!error) {
                port->class = class;
            }
            *portp = port;
            return error;
        }
    }
    *errorp = fdp__xasprintf("\"%.*s\" is not a port type (ring, pcap, "
                             "afxdp, afpacket, vxlan, geneve, gre)",
                             (int) type_len, spec);
    return EINVAL;
}

/* Adds the port with NORMAL's VLAN configuration 'vlan' (NULL: trunk of
 * every VLAN), set before any pmd sees the port; on success the port
 * owns 'vlan'. */
static int
port_add(struct fdp_dp *dp, uint32_t port_no, const char *spec,
         struct fdp__vlan_conf *vlan, char **errorp)
{
    struct fdp__port *port = NULL;
    char *error_msg = NULL;
    int error = 0;

    if (port_no == 0 || port_no >= FDP_PORT_MAX) {
        error_msg = fdp__xasprintf("port %" PRIu32 ": port numbers are 1 "
                                   "to %d", port_no, FDP_PORT_MAX - 1);
        error = EINVAL;
        goto out;
    }
    pthread_mutex_lock(&dp->mutex);
    if (find_port(dp->ports, port_no)) {
        error_msg = fdp__xasprintf("port %" PRIu32 " exists", port_no);
        error = EEXIST;
    } else {
        error = open_port(dp, spec, &port, &error_msg);
    }
    struct port_set *old = dp->ports, *new = NULL;
    if (!error) {
        new = malloc(sizeof *new + (old->n + 1) * sizeof *new->ports);
        port->spec = strdup(spec);
        if (!new || !port->spec) {
            error = ENOMEM;
        }
    }
    if (error) {
        if (port) {
            port->class->close(port);
        }
        free(new);
        pthread_mutex_unlock(&dp->mutex);
        goto out;
    }
    port->dp = dp;
    port->port_no = port_no;
    port->vlan = vlan;
    port->rank = dp->next_rank++;
    pthread_mutex_init(&port->tx_mutex, NULL);
    pthread_mutex_init(&port->error_mutex, NULL);
    if (port->class->recycle) {
        /* No pmd sees the port yet: this thread may play the pmd. */
        struct fdp__frame_cache cache;
        fdp__cache_init(&cache, &dp->pool);
        port->class->recycle(port, &cache);
        fdp__cache_flush(&cache);
    }

    size_t k = 0;
    new->n = old->n + 1;
    for (size_t i = 0; i < old->n; i++) {
        if (k == i && old->ports[i]->port_no > port_no) {
            new->ports[k++] = port;
        }
        new->ports[k++] = old->ports[i];
    }
    if (k < new->n) {
        new->ports[k] = port;
    }
    error = fdp__tnl_rx_set_create(new->ports, new->n, &new->tnl,
                                   &error_msg);
    if (error) {
        free(new);
        port->vlan = NULL;      /* The caller's on failure. */
        port_close(port);
        pthread_mutex_unlock(&dp->mutex);
        goto out;
    }
    publish_ports(dp, new);
    pthread_mutex_unlock(&dp->mutex);

out:
    if (error && errorp) {
        *errorp = error_msg ? error_msg
                            : fdp__xasprintf("port %" PRIu32 ": %s",
                                             port_no, strerror(error));
    } else {
        free(error_msg);
    }
    return error;
}

int
fdp_dp_port_add(struct fdp_dp *dp, uint32_t port_no, const char *spec,
                char **errorp)
{
    return port_add(dp, port_no, spec, NULL, errorp);
}

int
fdp_dp_port_add_vlan(struct fdp_dp *dp, uint32_t port_no, const char *spec,
                     const struct fdp_port_vlan *cfg, char **errorp)
{
    struct fdp__vlan_conf *vlan = fdp__vlan_conf_create(cfg);

    if (!vlan) {
        if (errorp) {
            *errorp = NULL;
        }
        return ENOMEM;
    }
    int error = port_add(dp, port_no, spec, vlan, errorp);
    if (error) {
        free(vlan);
    }
    return error;
}

int
fdp_dp_port_del(struct fdp_dp *dp, uint32_t port_no)
{
    pthread_mutex_lock(&dp->mutex);
    struct port_set *old = dp->ports;
    struct fdp__port *port = find_port(old, port_no);
    if (!port) {
        pthread_mutex_unlock(&dp->mutex);
        return ENOENT;
    }
    struct port_set *new = malloc(sizeof *new + old->n * sizeof *new->ports);
    if (!new) {
        pthread_mutex_unlock(&dp->mutex);
        return ENOMEM;
    }
    new->n = 0;
    for (size_t i = 0; i < old->n; i++) {
        if (old->ports[i] != port) {
            new->ports[new->n++] = old->ports[i];
        }
    }
    /* Fewer ports: no new conflict, only memory can fail. */
    char *msg = NULL;
    if (fdp__tnl_rx_set_create(new->ports, new->n, &new->tnl, &msg)) {
        free(msg);
        free(new);
        pthread_mutex_unlock(&dp->mutex);
        return ENOMEM;
    }
    publish_ports(dp, new);
    /* Wait until no pmd can still be receiving from or sending to it. */
    fdp__rcu_synchronize();
    fdp__fdb_flush(fdp__normal_fdb(dp->normal), port_no);
    fdp__underlay_port_deleted(dp->underlay, port_no);
    port_close(port);
    pthread_mutex_unlock(&dp->mutex);
    return 0;
}

size_t
fdp_dp_port_list(struct fdp_dp *dp, uint32_t *port_nos, size_t max)
{
    pthread_mutex_lock(&dp->mutex);
    size_t n = dp->ports->n;
    for (size_t i = 0; i < n && i < max; i++) {
        port_nos[i] = dp->ports->ports[i]->port_no;
    }
    pthread_mutex_unlock(&dp->mutex);
    return n;
}

int
fdp_dp_port_get_stats(struct fdp_dp *dp, uint32_t port_no,
                      struct fdp_port_stats *stats, const char **specp)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port) {
        const struct fdp_port_stats *s = &port->stats;
        stats->rx_packets = fdp__read_count(&s->rx_packets);
        stats->rx_bytes = fdp__read_count(&s->rx_bytes);
        stats->rx_dropped = fdp__read_count(&s->rx_dropped);
        stats->rx_errors = fdp__read_count(&s->rx_errors);
        stats->tx_packets = fdp__read_count(&s->tx_packets);
        stats->tx_bytes = fdp__read_count(&s->tx_bytes);
        stats->tx_dropped = fdp__read_count(&s->tx_dropped);
        if (specp) {
            *specp = port->spec;
        }
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_get_error(struct fdp_dp *dp, uint32_t port_no, char *buf,
                      size_t size)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port && size) {
        /* The back end writes it on a pmd, under the port's error mutex. */
        pthread_mutex_lock(&port->error_mutex);
        snprintf(buf, size, "%s", port->error);
        pthread_mutex_unlock(&port->error_mutex);
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_describe(struct fdp_dp *dp, uint32_t port_no, char *buf,
                     size_t size)
{
    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (port && size) {
        buf[0] = '\0';
        if (port->class->describe) {
            port->class->describe(port, buf, size);
        }
    }
    pthread_mutex_unlock(&dp->mutex);
    return port ? 0 : ENOENT;
}

int
fdp_dp_port_rings(struct fdp_dp *dp, uint32_t port_no,
                  struct fdp_port_rings *rings)
{
    int error = 0;

    pthread_mutex_lock(&dp->mutex);
    struct fdp__port *port = find_port(dp->ports, port_no);
    if (!port) {
        error = ENOENT;
    } else if (!port->class->rings) {
        error = EINVAL;
    } else {
        port->class->rings(port, rings);
    }
    pthread_mutex_unlock(&dp->mutex);
    return error;
}

/* ---------------------------------------------------------------------- */
/* Upcalls.                                                                */

static void
free_upcall(struct rcu_head *head)
{
    FDP_RCU_TSAN_ACQUIRE();
    free(CONTAINER_OF(head, struct upcall_handler, rcu));
}

void
fdp_dp_set_upcall(struct fdp_dp *dp, fdp_dp_upcall_cb *cb, void *aux)
{
    struct upcall_handler *h = NULL;

    if (cb) {
        h = malloc(sizeof *h);
        if (!h) {
            return;             /* Out of memory: keep the old handler. */
        }
        h->cb = cb;
        h->aux = aux;
    }
    pthread_mutex_lock(&dp->mutex);
    struct upcall_handler *old = dp->upcall;
    FDP_RCU_SET(dp->upcall, h);
    if (old) {
        fdp__rcu_defer(&old->rcu, free_upcall);
    }
    pthread_mutex_unlock(&dp->mutex);
}

/* ---------------------------------------------------------------------- */
/* Pmds.                                                                   */

/* Frees a pmd's recirculation levels (any of them may be NULL). */
static void
levels_destroy(struct fdp_dp_pmd *pmd)
{
    for (unsigned int d = 0; d < MAX_RECIRC_DEPTH; d++) {
        struct recirc_level *lvl = pmd->levels[d];
        if (lvl) {
            for (uint32_t i = 0; i < FDP_DP_BATCH; i++) {
                free(lvl->scratch.oc[i]);
                fdp_pipeline_result_destroy(&lvl->results[i]);
            }
            free(lvl);
            pmd->levels[d] = NULL;
        }
    }
}

/* A pipeline's pmd gets its recirculation levels and, with the EMC, its
 * continuation cache.  A bare table has no continuations (see
 * "Connection tracking" in the design).  Returns 0 or ENOMEM. */
static int
pmd_create_recirc(struct fdp_dp_pmd *pmd, const struct fdp_dp *dp)
{
    if (!dp->pipeline) {
        return 0;
    }
    for (unsigned int d = 0; d < MAX_RECIRC_DEPTH; d++) {
        struct recirc_level *lvl = calloc(1, sizeof *lvl);
        if (!lvl) {
            levels_destroy(pmd);
            return ENOMEM;
        }
        for (uint32_t i = 0; i < FDP_DP_BATCH; i++) {
            fdp_pipeline_result_init(&lvl->results[i]);
        }
        pmd->levels[d] = lvl;
    }
    if (pmd->emc) {
        pmd->rc = aligned_alloc(64, RC_ENTRIES * sizeof *pmd->rc);
        if (!pmd->rc) {
            levels_destroy(pmd);
            return ENOMEM;
        }
        memset(pmd->rc, 0, RC_ENTRIES * sizeof *pmd->rc);
    }
    return 0;
}

int
fdp_dp_pmd_create(struct fdp_dp *dp, unsigned int id,
                  struct fdp_dp_pmd **pmdp)
{
    struct fdp_dp_pmd *pmd;

    *pmdp = NULL;
    if (id >= dp->options.n_pmds) {
        return EINVAL;
    }
    pmd = aligned_alloc(64, (sizeof *pmd + 63) & ~(size_t) 63);
    if (!pmd) {
        return ENOMEM;
    }
    memset(pmd, 0, sizeof *pmd);
    if (dp->options.emc_insert_inv_prob
        && dp->options.emc_mode != FDP_DP_CACHE_OFF) {
        pmd->emc = aligned_alloc(64, EMC_ENTRIES * sizeof *pmd->emc);
        if (!pmd->emc) {
            free(pmd);
            return ENOMEM;
        }
        memset(pmd->emc, 0, EMC_ENTRIES * sizeof *pmd->emc);
    }
    if (dp->options.smc_mode != FDP_DP_CACHE_OFF
        && dp->options.smc_insert_inv_prob) {
        /* Anonymous memory: zero pages until a bucket is written, so an
         * SMC that a table never uses (not disjoint) costs no memory. */
        uint32_t n_buckets = dp->options.smc_entries / SMC_WAYS;
        pmd->smc_size = (size_t) n_buckets * sizeof *pmd->smc;
        void *p = mmap(NULL, pmd->smc_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            free(pmd->emc);
            free(pmd);
            return ENOMEM;
        }
        pmd->smc = p;
        pmd->smc_mask = n_buckets - 1;
    }
    if (pmd_create_recirc(pmd, dp)) {
        if (pmd->smc) {
            munmap(pmd->smc, pmd->smc_size);
        }
        free(pmd->emc);
        free(pmd);
        return ENOMEM;
    }
    if (fdp__ct_pmd_create(dp->ct, &pmd->ct)) {
        levels_destroy(pmd);
        free(pmd->rc);
        if (pmd->smc) {
            munmap(pmd->smc, pmd->smc_size);
        }
        free(pmd->emc);
        free(pmd);
        return ENOMEM;
    }
    meter_init(&pmd->emc_meter, dp->options.emc_mode, false);
    meter_init(&pmd->smc_meter, dp->options.smc_mode, true);
    /* A bare table is a one-table pipeline whose version is the table's
     * (pmd_snapshot()). */
    pmd->table_view.single = dp->table;
    pmd->dp = dp;
    pmd->id = id;
    pmd->stats_shard = fdp__stats_shard_acquire();
    pmd->rng = dp->emc_basis | 1;
    fdp__cache_init(&pmd->cache, &dp->pool);

    pthread_mutex_lock(&dp->mutex);
    pmd->next = dp->pmds;
    dp->pmds = pmd;
    pthread_mutex_unlock(&dp->mutex);
    *pmdp = pmd;
    return 0;
}

static void
add_counters(struct pmd_counters *sum, const struct pmd_counters *c)
{
    sum->n_packets += fdp__read_count(&c->n_packets);
    sum->n_emc_hits += fdp__read_count(&c->n_emc_hits);
    sum->n_smc_hits += fdp__read_count(&c->n_smc_hits);
    sum->n_emc_bypassed += fdp__read_count(&c->n_emc_bypassed);
    sum->n_table_hits += fdp__read_count(&c->n_table_hits);
    sum->n_missed += fdp__read_count(&c->n_missed);
    sum->n_upcalls += fdp__read_count(&c->n_upcalls);
    sum->n_ttl_expired += fdp__read_count(&c->n_ttl_expired);
    sum->n_no_room += fdp__read_count(&c->n_no_room);
    sum->n_ct_packets += fdp__read_count(&c->n_ct_packets);
    sum->n_recirculations += fdp__read_count(&c->n_recirculations);
    sum->n_recirc_cache_hits += fdp__read_count(&c->n_recirc_cache_hits);
    sum->n_recirc_missed += fdp__read_count(&c->n_recirc_missed);
    sum->n_recirc_dropped += fdp__read_count(&c->n_recirc_dropped);
    sum->n_ct_table_ignored += fdp__read_count(&c->n_ct_table_ignored);
    sum->n_packet_outs += fdp__read_count(&c->n_packet_outs);
}

void
fdp_dp_pmd_destroy(struct fdp_dp_pmd *pmd)
{
    if (!pmd) {
        return;
    }
    struct fdp_dp *dp = pmd->dp;
    pthread_mutex_lock(&dp->mutex);
    for (struct fdp_dp_pmd **p = &dp->pmds; *p; p = &(*p)->next) {
        if (*p == pmd) {
            *p = pmd->next;
            break;
        }
    }
    add_counters(&dp->retired, &pmd->counters);
    pthread_mutex_unlock(&dp->mutex);
    fdp__cache_flush(&pmd->cache);
    fdp__stats_shard_release(pmd->stats_shard);
    if (pmd->emc) {
        for (uint32_t i = 0; i < EMC_ENTRIES; i++) {
            if (pmd->emc[i].owned) {
                free((struct fdp__outcome *) pmd->emc[i].flow);
            }
        }
    }
    for (uint32_t i = 0; i < FDP_DP_BATCH; i++) {
        free(pmd->scratch.oc[i]);
    }
    for (uint32_t i = 0; i < FDP_DP_BATCH; i++) {
        fdp_pipeline_result_destroy(&pmd->results[i]);
    }
    levels_destroy(pmd);
    if (pmd->rc) {
        for (uint32_t i = 0; i < RC_ENTRIES; i++) {
            if (pmd->rc[i].owned) {
                free((struct fdp__outcome *) pmd->rc[i].flow);
            }
        }
        free(pmd->rc);
    }
    free(pmd->emc);
    if (pmd->smc) {
        munmap(pmd->smc, pmd->smc_size);
    }
    fdp__ct_pmd_destroy(pmd->ct);
    fdp__tnl_pmd_destroy(pmd->tnl);
    fdp__tun_intern_destroy(pmd->tun);
    free(pmd);
}

void
fdp_dp_get_stats(struct fdp_dp *dp, struct fdp_dp_stats *stats)
{
    struct pmd_counters sum;

    pthread_mutex_lock(&dp->mutex);
    sum = dp->retired;
    for (struct fdp_dp_pmd *pmd = dp->pmds; pmd; pmd = pmd->next) {
        add_counters(&sum, &pmd->counters);
    }
    pthread_mutex_unlock(&dp->mutex);
    pthread_mutex_lock(&dp->pool.mutex);
    stats->n_frames_free = dp->pool.n;
    pthread_mutex_unlock(&dp->pool.mutex);
    stats->n_packets = sum.n_packets;
    stats->n_emc_hits = sum.n_emc_hits;
    stats->n_smc_hits = sum.n_smc_hits;
    stats->n_emc_bypassed = sum.n_emc_bypassed;
    stats->n_table_hits = sum.n_table_hits;
    stats->n_missed = sum.n_missed;
    stats->n_upcalls = sum.n_upcalls;
    stats->n_ttl_expired = sum.n_ttl_expired;
    stats->n_no_room = sum.n_no_room;
    stats->n_ct_packets = sum.n_ct_packets;
    stats->n_recirculations = sum.n_recirculations;
    stats->n_recirc_cache_hits = sum.n_recirc_cache_hits;
    stats->n_recirc_missed = sum.n_recirc_missed;
    stats->n_recirc_dropped = sum.n_recirc_dropped;
    stats->n_ct_table_ignored = sum.n_ct_table_ignored;
    stats->n_packet_outs = sum.n_packet_outs;
    pthread_mutex_lock(&dp->po.mutex);
    stats->n_packet_outs_dropped = dp->po.n_dropped;
    pthread_mutex_unlock(&dp->po.mutex);
}

/* A cycle counter for the caches' meters: the TSC where there is one. */
static inline uint64_t
cycles_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
#endif
}

/* ---------------------------------------------------------------------- */
/* The caches.                                                             */

static uint32_t
pmd_random(struct fdp_dp_pmd *pmd)
{
    uint32_t x = pmd->rng;      /* xorshift32 (Marsaglia 2003). */

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return pmd->rng = x;
}

/* True with probability 1/inv (inv >= 1). */
static bool
pmd_chance(struct fdp_dp_pmd *pmd, uint32_t inv)
{
    return inv <= 1 || !(pmd_random(pmd) % inv);
}

/* A cached key's packet words against a packet's, 16 bytes at a time:
 * GCC's and clang's vector types (SSE2 on x86-64, NEON on arm64, pairs of
 * words elsewhere), 6 XORs and 5 ORs instead of 12 and 11.  memcpy keeps
 * the loads unaligned-safe.  The pipeline's words are not compared: they
 * are zero for every packet that reaches the caches (key.h); nor is
 * nd_target, zero in every key the EMC holds or looks up (emc_holds()). */
typedef uint64_t key_pair __attribute__((vector_size(16)));
static_assert(EMC_KEY_WORDS % 2 == 0 && FDP_KEY_WORDS % 2 == 1,
              "the EMC's words are whole pairs, a whole key pairs and one");

static inline key_pair
key_pair_at(const uint64_t *w, size_t i)
{
    key_pair x;

    memcpy(&x, &w[2 * i], sizeof x);
    return x;
}

/* An entry's words 'a' against a packet's 'b' with tunnel tag 'tag',
 * which the entry keeps in word 5's low half (conj_id's, zero in every
 * key the caches see: datapath/tun-intern.c). */
static inline key_pair
tagged_pair2(const uint64_t *b, uint32_t tag)
{
    key_pair p = key_pair_at(b, 2);

    static_assert(FDP__WORD_CONJ_ID == 5 && FDP__SHIFT_CONJ_ID == 0
                  && FDP__BITS_CONJ_ID == 32,
                  "the tag takes conj_id's bits, word 5's low half");
    p[1] |= tag;
    return p;
}

static inline bool
key_equal(const uint64_t *a, const uint64_t *b, uint32_t tag)
{
    static_assert(EMC_KEY_WORDS == 12, "six pairs below");
    key_pair d = ((key_pair_at(a, 0) ^ key_pair_at(b, 0))
                  | (key_pair_at(a, 1) ^ key_pair_at(b, 1))
                  | (key_pair_at(a, 2) ^ tagged_pair2(b, tag)))
                 | ((key_pair_at(a, 3) ^ key_pair_at(b, 3))
                    | (key_pair_at(a, 4) ^ key_pair_at(b, 4))
                    | (key_pair_at(a, 5) ^ key_pair_at(b, 5)));

    return !(d[0] | d[1]);
}

/* A cache entry's output hint: the port of a flow whose actions are
 * exactly one output (the common case), or 0 for any other actions.  A
 * flow's actions never change while its rule is in the table (a modified
 * flow is a new rule, at a new version), so the hint is good for as long
 * as the entry; with it, a cache hit skips the actions' line, which at
 * 100k flows is a miss of its own.  Whether the port is the packet's own
 * input port (then OpenFlow drops the output) is checked at use. */
static uint32_t
output_hint(const struct fdp_actions *actions)
{
    const struct fdp__action *a = actions && actions->n_actions == 1
                                  ? fdp__actions_first(actions) : NULL;

    return a && a->type == FDP_ACT_OUTPUT ? a->arg : 0;
}

static inline const struct emc_entry *
emc_way(const struct fdp_dp_pmd *pmd, uint32_t hash, unsigned int way)
{
    return &pmd->emc[(way ? hash >> EMC_SHIFT : hash) & EMC_MASK];
}

/* True if 'key' has tunnel metadata (key.h, words 31-40): the key of a
 * packet that came through a tunnel, or of a continuation whose pipeline
 * set a tunnel field.  Five 16-byte pairs, ORed. */
static inline bool
key_has_tunnel(const struct fdp_key *key)
{
    static_assert(FDP__TUN_N_WORDS == 10, "five pairs below");
    const uint64_t *t = &key->w[FDP__TUN_FIRST_WORD];
    key_pair d = (key_pair_at(t, 0) | key_pair_at(t, 1))
                 | (key_pair_at(t, 2) | key_pair_at(t, 3))
                 | key_pair_at(t, 4);

    return d[0] | d[1];
}

/* True if the EMC (and the continuation cache) may hold 'key' with
 * tunnel tag 'tag': its nd_target, which entries leave out
 * (EMC_KEY_WORDS, RC_KEY_WORDS), is zero, and its tunnel words, which
 * entries keep as their tag, have one (cache_tags()). */
static inline bool
emc_holds(const struct fdp_key *key, uint32_t tag)
{
    return !(key->w[FDP__WORD_ND_TARGET] | key->w[FDP__WORD_ND_TARGET + 1])
           && tag != FDP__TUN_TAG_UNCACHED;
}

/* Mixes tunnel tag 'tag' into a packet's hash, so that the packets of
 * different tunnels with the same inner headers spread over the caches'
 * sets (tag 0, no tunnel, leaves the hash as it was). */
static inline uint32_t
tag_hash(uint32_t hash, uint32_t tag)
{
    return hash ^ (uint32_t) ((tag * UINT64_C(0x9e3779b97f4a7c15)) >> 32);
}

/* Phase 1b, before the caches: the tunnel tag of each packet of 'b'
 * (datapath/tun-intern.c: 0 for a packet without tunnel words), mixed
 * into its hash.  A packet without tunnel words pays one test of five
 * pairs of its key. */
static void
cache_tags(struct fdp_dp_pmd *pmd, struct batch *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        const struct fdp_key *key = &b->pkts[i].key;
        uint32_t tag = 0;
        if (FDP_UNLIKELY(key_has_tunnel(key))) {
            tag = fdp__tun_intern_tag(&pmd->tun, key);
            if (tag != FDP__TUN_TAG_UNCACHED) {
                b->hashes[i] = tag_hash(b->hashes[i], tag);
            }
        }
        b->tags[i] = tag;
    }
}

static inline __attribute__((always_inline)) const struct fdp__outcome *
emc_lookup(const struct fdp_dp_pmd *pmd, const struct fdp_key *key,
           uint32_t hash, uint32_t tag, uint64_t version, uint32_t *hint)
{
    if (!emc_holds(key, tag)) {
        return NULL;
    }
    for (unsigned int way = 0; way < 2; way++) {
        const struct emc_entry *e = emc_way(pmd, hash, way);
        if (e->hash == hash && e->version == version && e->flow
            && key_equal(e->key, key->w, tag)) {
            *hint = e->out;
            return e->flow;
        }
    }
    return NULL;
}

/* The entry a new one for 'hash' replaces: a way that is stale or empty,
 * else the one the hash's top bit picks. */
static struct emc_entry *
emc_victim(struct fdp_dp_pmd *pmd, uint32_t hash, uint64_t version)
{
    struct emc_entry *e0 = (struct emc_entry *) emc_way(pmd, hash, 0);
    struct emc_entry *e1 = (struct emc_entry *) emc_way(pmd, hash, 1);

    return (!e0->flow || e0->version != version) ? e0
           : (!e1->flow || e1->version != version) ? e1
           : (hash >> 31) ? e1 : e0;
}

/* Fills 'e', whose old outcome (if it owned one) is freed once the batch
 * is done. */
static void
emc_fill(struct fdp_dp_pmd *pmd, struct emc_entry *e,
         const struct fdp_key *key, uint32_t hash, uint32_t tag,
         uint64_t version, const struct fdp__outcome *flow, bool owned)
{
    if (e->flow && e->owned) {
        pmd->doomed[pmd->n_doomed++] = (struct fdp__outcome *) e->flow;
    }
    e->owned = owned;
    e->hash = hash;
    e->out = output_hint(flow->actions);
    e->version = version;
    e->flow = flow;
    memcpy(e->key, key->w, sizeof e->key);
    e->key[FDP__WORD_CONJ_ID] |= tag;
}

/* Caches 'oc', which the EMC does not own (a rule's), for 'key' with
 * probability 1/emc_insert_inv_prob. */
static void
emc_insert(struct fdp_dp_pmd *pmd, const struct fdp_key *key, uint32_t hash,
           uint32_t tag, uint64_t version, const struct fdp__outcome *oc)
{
    if (emc_holds(key, tag)
        && pmd_chance(pmd, pmd->dp->options.emc_insert_inv_prob)) {
        emc_fill(pmd, emc_victim(pmd, hash, version), key, hash, tag,
                 version, oc, false);
    }
}

/* The signature match cache's bucket for 'hash'. */
static inline struct smc_bucket *
smc_bucket(const struct fdp_dp_pmd *pmd, uint32_t hash)
{
    return &pmd->smc[hash & pmd->smc_mask];
}

/* The signature: the hash's top 16 bits.  The bucket index is its low
 * bits, so past 2^16 buckets the two share bits: at the default 2^18
 * buckets the signature adds 14 bits of its own, not 16, and a false
 * candidate (1 in 16k per way) costs one check of the rule's match,
 * never a wrong answer. */
static inline uint16_t
smc_sig(uint32_t hash)
{
    return (uint16_t) (hash >> 16);
}

/* A rule's outcome whose signature matches: it is the answer if the key
 * is in the rule's match, because the table is disjoint (no key is in two
 * flows' matches) and the bucket's version says the rule is still in the
 * table. */
static const struct fdp__outcome *
smc_lookup(const struct fdp_dp_pmd *pmd, const struct fdp_key *key,
           uint32_t hash, uint64_t version, uint32_t *hint)
{
    const struct smc_bucket *bk = smc_bucket(pmd, hash);
    uint16_t sig = smc_sig(hash);

    if (bk->version != version) {
        return NULL;
    }
    for (unsigned int i = 0; i < SMC_WAYS; i++) {
        if (bk->sig[i] == sig && bk->oc[i]
            && fdp__rule_matches(fdp__rule_of_outcome(bk->oc[i]), key)) {
            *hint = bk->out[i];
            return bk->oc[i];
        }
    }
    return NULL;
}

/* The first rule's outcome in the bucket for 'hash' whose signature
 * matches, not yet checked against the key, or NULL. */
static inline const struct fdp__outcome *
smc_candidate(const struct fdp_dp_pmd *pmd, uint32_t hash, uint64_t version,
              uint32_t *hint)
{
    const struct smc_bucket *bk = smc_bucket(pmd, hash);
    uint16_t sig = smc_sig(hash);

    if (bk->version == version) {
        for (unsigned int i = 0; i < SMC_WAYS; i++) {
            if (bk->sig[i] == sig && bk->oc[i]) {
                *hint = bk->out[i];
                return bk->oc[i];
            }
        }
    }
    return NULL;
}

/* Caches rule outcome 'oc' for keys of hash 'hash'. */
static void
smc_insert(struct fdp_dp_pmd *pmd, uint32_t hash, uint64_t version,
           const struct fdp__outcome *oc)
{
    if (!pmd_chance(pmd, pmd->dp->options.smc_insert_inv_prob)) {
        return;
    }
    struct smc_bucket *bk = smc_bucket(pmd, hash);
    uint16_t sig = smc_sig(hash);
    unsigned int way = SMC_WAYS;

    if (bk->version != version) {
        /* Made at an older version: every way is stale. */
        memset(bk, 0, sizeof *bk);
        bk->version = version;
    }
    for (unsigned int i = 0; i < SMC_WAYS && way == SMC_WAYS; i++) {
        if (!bk->oc[i] || bk->sig[i] == sig) {
            way = i;
        }
    }
    if (way == SMC_WAYS) {
        way = pmd_random(pmd) % SMC_WAYS;
    }
    bk->sig[way] = sig;
    bk->oc[way] = oc;
    bk->out[way] = output_hint(oc->actions);
}

/* Whether to use a cache in auto mode for the next batch, and what its
 * last batch cost.
 *
 * A cache pays when probing it costs less than the lookups its hits
 * save; that depends on the flows (one mask or a hundred), the traffic
 * (how often keys repeat) and the machine, so the pmd measures instead of
 * guessing: in each period of at least METER_PERIOD batches it spends
 * METER_TRIAL of them with the other choice, counts the cycles per packet
 * of classification under each, and keeps the cheaper at the end of the
 * period (with a 1/16 margin in favour of the current choice, so that
 * noise does not flip it back and forth).
 *
 * A trial of the worse choice costs what the better one saves: with 100k
 * flows, 64 batches in 1024 without the SMC sent 6% of packets to the
 * table at five times the cost.  So a period in which the current choice
 * wins by 2x or more doubles the next one, up to METER_PERIOD_MAX (the
 * trial then costs 64/32768 of the time); a close call or a change goes
 * back to METER_PERIOD.  The EMC's trial closes its period, the SMC's
 * sits in the middle of its own: both meters count every batch, and two
 * trials at once would blame each cache for the other's absence.  While
 * off, a cache keeps taking insertions, so that a trial finds it warm. */
#define METER_PERIOD 1024
#define METER_PERIOD_MAX 32768
#define METER_TRIAL 64

static void
meter_init(struct cache_meter *m, enum fdp_dp_cache_mode mode,
           bool trial_midway)
{
    *m = (struct cache_meter) {
        .mode = mode,
        .use = true,
        .trial_midway = trial_midway,
        .period = METER_PERIOD,
    };
}

static bool
meter_in_trial(const struct cache_meter *m)
{
    uint32_t start = m->trial_midway ? m->period / 2 - METER_TRIAL
                                     : m->period - METER_TRIAL;

    return m->batches >= start && m->batches < start + METER_TRIAL;
}

static bool
meter_use(const struct cache_meter *m)
{
    return m->mode == FDP_DP_CACHE_ON
           || (m->mode == FDP_DP_CACHE_AUTO
               && m->use != meter_in_trial(m));
}

static void
meter_account(struct cache_meter *m, bool used, uint64_t cycles,
              uint32_t n_packets)
{
    if (m->mode != FDP_DP_CACHE_AUTO) {
        return;
    }
    m->cycles[used] += cycles;
    m->packets[used] += n_packets;
    if (++m->batches < m->period) {
        return;
    }
    /* Cycles per packet with the cache and without. */
    uint32_t next = METER_PERIOD;
    if (m->packets[0] && m->packets[1]) {
        double on = (double) m->cycles[1] / (double) m->packets[1];
        double off = (double) m->cycles[0] / (double) m->packets[0];
        double mine = m->use ? on : off, other = m->use ? off : on;
        if (other < mine * (15.0 / 16)) {
            m->use = !m->use;
        } else if (other >= 2 * mine && m->period < METER_PERIOD_MAX) {
            next = 2 * m->period;
        } else if (other >= 2 * mine) {
            next = METER_PERIOD_MAX;
        }
    }
    m->period = next;
    m->batches = 0;
    m->cycles[0] = m->cycles[1] = 0;
    m->packets[0] = m->packets[1] = 0;
}

/* ---------------------------------------------------------------------- */
/* Batch processing.                                                       */

/* Phase 1: receive, extract (the hash comes with the key). */
static void
batch_extract(struct fdp_dp_pmd *pmd, struct batch *b,
              const struct fdp_desc *descs, uint32_t n)
{
    struct fdp_dp *dp = pmd->dp;
    struct fdp__port *in = pmd->in_port;
    uint32_t frame_mask = dp->options.frame_size - 1;
    uint64_t bytes = 0;

    b->n = n;
    for (uint32_t i = 0; i < n; i++) {
        struct fdp__pkt *p = &b->pkts[i];
        uint32_t offset = (uint32_t) (descs[i].addr & frame_mask);
        p->data = dp->umem + descs[i].addr;
        p->size = descs[i].len;
        p->headroom = offset - FDP__FRAME_META_SIZE;
        b->hashes[i] = fdp__packet_extract_hash(p->data, p->size,
                                                in->port_no, dp->emc_basis,
                                                &p->key, &p->layout);
        b->sent[i] = false;
        bytes += p->size;
    }
    /* The port's rx counters have one writer: the pmd that polls it. */
    fdp__count_add(&in->stats.rx_packets, n);
    fdp__count_add(&in->stats.rx_bytes, bytes);
    fdp__count_add(&pmd->counters.n_packets, n);
}

/* Scratch memory of at least 'size' bytes for an outcome that lives until
 * the batch is done, or NULL if memory ran out. */
static struct fdp__outcome *
scratch_outcome(struct scratch_pool *sp, size_t size)
{
    uint32_t s = sp->n;

    if (s >= FDP_DP_BATCH) {
        return NULL;            /* Not reached: one per packet. */
    }
    if (sp->size[s] < size) {
        void *p = realloc(sp->oc[s], size);
        if (!p) {
            return NULL;
        }
        sp->oc[s] = p;
        sp->size[s] = size;
    }
    sp->n++;
    return sp->oc[s];
}

/* ---- The continuation cache (see "Connection tracking"). ---- */

/* The hash of a continuation: every word of its key, and its table.
 * The packet words' part is 'pkt_hash', their hash as the EMC takes it
 * (fdp_hash_fast() of the 14 words with the EMC's random basis), which
 * the packet already has (from its extraction, or from the batch it came
 * from), so only the 17 words after them are mixed in here: two
 * multiply-xor lanes (a multiplication by an odd constant is a bijection,
 * so no word's bits are lost; the last steps fold the high bits into the
 * low ones the buckets use), about 40 instructions where fdp_hash_fast()
 * over the same words took 100 in callgrind.  A cache needs no more: keys
 * that collide cost a miss each, never a wrong answer (the whole key is
 * compared), and a probe is two ways whatever the keys. */
#define RC_K1 UINT64_C(0x9e3779b97f4a7c15)
#define RC_K2 UINT64_C(0xc2b2ae3d27d4eb4f)

static inline uint32_t
rc_hash(const struct fdp_key *key, uint32_t pkt_hash, unsigned int table)
{
    const uint64_t *w = &key->w[FDP_KEY_PACKET_WORDS];
    uint64_t a = pkt_hash ^ (uint64_t) table << 32;
    uint64_t b = ~a;

    static_assert(RC_STATE_WORDS == 17, "eight pairs and a word");
#pragma GCC unroll 8
    for (size_t i = 0; i < 16; i += 2) {
        a = (a ^ w[i]) * RC_K1;
        b = (b ^ w[i + 1]) * RC_K2;
    }
    uint64_t h = ((a ^ w[16]) * RC_K1) ^ (b >> 31) ^ (b << 33);
    h ^= h >> 32;
    h *= RC_K2;
    return (uint32_t) (h >> 32);
}

static inline struct rc_entry *
rc_way(const struct fdp_dp_pmd *pmd, uint32_t hash, unsigned int way)
{
    return &pmd->rc[(way ? hash >> RC_SHIFT : hash) & RC_MASK];
}

/* An entry's key 'e' (RC_KEY_WORDS) against a whole key 'k', whose
 * nd_target is zero (emc_holds()), 16 bytes at a time as key_equal():
 * the 6 pairs before nd_target, then the 8 pairs and a word after it. */
static inline bool
rc_key_equal(const uint64_t *e, const uint64_t *k, uint32_t tag)
{
    static_assert(EMC_KEY_WORDS == 12 && RC_STATE_WORDS == 2 * 8 + 1,
                  "6 pairs, then 8 pairs and a word");
    key_pair d = (key_pair_at(e, 0) ^ key_pair_at(k, 0))
                 | (key_pair_at(e, 1) ^ key_pair_at(k, 1))
                 | (key_pair_at(e, 2) ^ tagged_pair2(k, tag));

#pragma GCC unroll 3
    for (size_t i = 3; i < 6; i++) {
        d |= key_pair_at(e, i) ^ key_pair_at(k, i);
    }
#pragma GCC unroll 8
    for (size_t i = 0; i < 8; i++) {
        d |= key_pair_at(e + EMC_KEY_WORDS, i)
             ^ key_pair_at(k + FDP_KEY_PACKET_WORDS, i);
    }
    return !(d[0] | d[1]
             | (e[RC_KEY_WORDS - 1] ^ k[FDP__TUN_FIRST_WORD - 1]));
}

static const struct fdp__outcome *
rc_lookup(const struct fdp_dp_pmd *pmd, const struct fdp_key *key,
          unsigned int table, uint32_t hash, uint32_t tag, uint64_t version)
{
    if (!emc_holds(key, tag)) {
        return NULL;
    }
    for (unsigned int way = 0; way < 2; way++) {
        const struct rc_entry *e = rc_way(pmd, hash, way);
        if (e->hash == hash && e->version == version && e->flow
            && e->table == table && rc_key_equal(e->key, key->w, tag)) {
            return e->flow;
        }
    }
    return NULL;
}

/* The entry a new one for 'hash' would replace, as emc_victim(), or NULL
 * if that would let go one more owned outcome than the batch can keep
 * until it is done. */
static struct rc_entry *
rc_victim(struct fdp_dp_pmd *pmd, uint32_t hash, uint64_t version)
{
    struct rc_entry *e0 = rc_way(pmd, hash, 0);
    struct rc_entry *e1 = rc_way(pmd, hash, 1);
    struct rc_entry *e = (!e0->flow || e0->version != version) ? e0
                         : (!e1->flow || e1->version != version) ? e1
                         : (hash >> 31) ? e1 : e0;

    return e->flow && e->owned && pmd->n_rc_doomed == RC_DOOMED_MAX
           ? NULL : e;
}

static void
rc_fill(struct fdp_dp_pmd *pmd, struct rc_entry *e,
        const struct fdp_key *key, unsigned int table, uint32_t hash,
        uint32_t tag, uint64_t version, const struct fdp__outcome *flow,
        bool owned)
{
    if (e->flow && e->owned) {
        pmd->rc_doomed[pmd->n_rc_doomed++] = e->flow;
    }
    e->owned = owned;
    e->hash = hash;
    e->table = (uint8_t) table;
    e->version = version;
    e->flow = flow;
    memcpy(e->key, key->w, EMC_KEY_WORDS * sizeof e->key[0]);
    memcpy(e->key + EMC_KEY_WORDS, key->w + FDP_KEY_PACKET_WORDS,
           RC_STATE_WORDS * sizeof e->key[0]);
    e->key[FDP__WORD_CONJ_ID] |= tag;
}

/* Where pipeline_outcome() keeps what it builds: the EMC for a received
 * packet ('rc_table' -1), the continuation cache for a continuation
 * starting in table 'rc_table'. */
struct outcome_home {
    const struct fdp_key *key;
    uint32_t hash;
    uint32_t tag;               /* Tunnel tag (cache_tags()). */
    int rc_table;
    struct scratch_pool *scratch;
};

/* Keeps rule outcome 'oc' in the cache 'home' says, with probability
 * 1/emc_insert_inv_prob. */
static void
home_insert(struct fdp_dp_pmd *pmd, const struct outcome_home *home,
            uint64_t version, const struct fdp__outcome *oc)
{
    if (home->rc_table < 0) {
        emc_insert(pmd, home->key, home->hash, home->tag, version, oc);
    } else if (emc_holds(home->key, home->tag)
               && pmd_chance(pmd, pmd->dp->options.emc_insert_inv_prob)) {
        struct rc_entry *e = rc_victim(pmd, home->hash, version);
        if (e) {
            rc_fill(pmd, e, home->key, (unsigned int) home->rc_table,
                    home->hash, home->tag, version, oc, false);
        }
    }
}

/* The outcome of packet 'i' of 'b', which no cache had, from its
 * classification through several tables, 'r'.  A packet whose
 * classification hit one flow and whose actions are that flow's gets the
 * flow's own outcome, which may enter the EMC as a table's do.  For any
 * other, an outcome is built: in memory of its own if it enters the EMC
 * (with probability 1/emc_insert_inv_prob; the entry then owns it), else
 * in the pmd's scratch space, which points into 'r' and lives until the
 * batch is done.  NULL if memory ran out, or if the classification is too
 * long to keep (more than 65535 flows hit): the packet is then a miss. */
static const struct fdp__outcome *
pipeline_outcome(struct fdp_dp_pmd *pmd, const struct outcome_home *home,
                 uint64_t version, const struct fdp_pipeline_result *r)
{
    /* A table 0 miss ends the pipeline, so the packet hit some flow if
     * and only if its first step did.  A packet that hit no flow is a
     * miss, as in a one-table pipeline: not cached, so that each one
     * reaches the upcall.  (A continuation's first step is its table
     * N's.) */
    bool hit = r->n_steps && r->steps[0].rule;
    bool cache = (home->rc_table < 0 ? pmd->emc != NULL : pmd->rc != NULL)
                 && emc_holds(home->key, home->tag) && hit;

    if (hit && r->n_steps == 1 && !r->limit_dropped
        && fdp_actions_equal(r->actions, r->steps[0].rule->actions)) {
        const struct fdp__outcome *oc = &r->steps[0].rule->oc;
        if (cache) {
            home_insert(pmd, home, version, oc);
        }
        return oc;
    }

    /* Room for a counter per step (every step that hit a flow has one)
     * and, when the classification missed or hit a limit, for each step
     * (those that missed are kept, for the tables' miss counters): so one
     * pass over the steps fills the counters. */
    bool keep_steps = r->table_missed || r->limit_dropped;
    /* The groups and buckets the packet went through are counted as its
     * flows are (lib/group.c, "Counters"), after them. */
    size_t n_group_counters;
    struct fdp__rule_counters *const *group_counters
        = fdp__pipeline_result_group_counters(r, &n_group_counters);
    if (r->n_steps + n_group_counters > UINT16_MAX) {
        return NULL;
    }
    bool insert = cache
                  && pmd_chance(pmd, pmd->dp->options.emc_insert_inv_prob);
    struct rc_entry *rc_e = NULL;
    if (insert && home->rc_table >= 0) {
        rc_e = rc_victim(pmd, home->hash, version);
        insert = rc_e != NULL;
    }
    size_t actions_at = fdp__outcome_size(r->n_steps + n_group_counters,
                                          keep_steps ? r->n_steps : 0);
    struct fdp__outcome *oc;
    if (insert) {
        /* Only an outcome the EMC keeps copies its actions. */
        oc = malloc(actions_at + fdp_actions_size(r->actions));
    } else {
        oc = scratch_outcome(home->scratch, actions_at);
    }
    if (!oc) {
        return NULL;
    }
    uint32_t n_rules = 0;
    uint64_t h = 0;
    for (size_t k = 0; k < r->n_steps; k++) {
        if (r->steps[k].rule) {
            struct fdp__rule_counters *c = r->steps[k].rule->stats;
            oc->counters[n_rules++] = c;
            h = fdp__outcome_sig_add(h, c);
        }
    }
    for (size_t k = 0; k < n_group_counters; k++) {
        oc->counters[n_rules++] = group_counters[k];
        h = fdp__outcome_sig_add(h, group_counters[k]);
    }
    oc->n_rules = (uint16_t) n_rules;
    oc->n_steps = 0;
    oc->missed = r->table_missed;
    oc->limit = r->limit_dropped;
    if (keep_steps) {
        /* At most one miss per resubmit, plus one. */
        struct fdp_pipeline_step *steps = fdp__outcome_steps_mutable(oc);
        uint32_t n_missed = 0;
        for (size_t k = 0; k < r->n_steps; k++) {
            if (!r->steps[k].rule && n_missed < FDP__OUTCOME_MAX_STEPS) {
                steps[n_missed++] = r->steps[k];
            }
        }
        oc->n_steps = (uint16_t) n_missed;
    }
    if (insert) {
        struct fdp_actions *actions = (struct fdp_actions *) (void *)
                                      ((uint8_t *) oc + actions_at);
        memcpy(actions, r->actions, fdp_actions_size(r->actions));
        oc->actions = actions;
    } else {
        oc->actions = r->actions;
    }
    oc->sig = fdp__outcome_sig_end(h, n_rules, oc->actions);
    if (rc_e) {
        rc_fill(pmd, rc_e, home->key, (unsigned int) home->rc_table,
                home->hash, home->tag, version, oc, true);
    } else if (insert) {
        emc_fill(pmd, emc_victim(pmd, home->hash, version), home->key,
                 home->hash, home->tag, version, oc, true);
    }
    return oc;
}

static_assert(FDP_DP_BATCH <= FDP_TABLE_BATCH_MAX,
              "a batch's misses go through the pipeline in one call");

/* Phase 2a: the signature match cache for the 'n_miss' packets of 'b'
 * the EMC did not have ('miss_idx', keys 'miss_keys'); compacts those
 * arrays to the packets it did not have either and returns how many,
 * counting its hits in '*n_smc'.  Three passes, so that the batch's cache
 * misses overlap: the buckets, then the first candidate's rule (its first
 * line, which holds its outcome, and the line of its match), then the
 * checks. */
static uint32_t
batch_smc(struct fdp_dp_pmd *pmd, struct batch *b, uint64_t version,
          uint8_t miss_idx[], const struct fdp_key *miss_keys[],
          uint32_t n_miss, uint32_t *n_smc)
{
    const struct fdp__outcome *cand[FDP_DP_BATCH];
    uint32_t cand_hint[FDP_DP_BATCH];
    uint32_t k = 0;

    for (uint32_t j = 0; j < n_miss; j++) {
        __builtin_prefetch(smc_bucket(pmd, b->hashes[miss_idx[j]]));
    }
    for (uint32_t j = 0; j < n_miss; j++) {
        cand[j] = smc_candidate(pmd, b->hashes[miss_idx[j]], version,
                                &cand_hint[j]);
        if (cand[j]) {
            __builtin_prefetch(cand[j]);
            __builtin_prefetch(&fdp__rule_of_outcome(cand[j])->match.w[0]);
        }
    }
    for (uint32_t j = 0; j < n_miss; j++) {
        uint32_t i = miss_idx[j];
        const struct fdp__outcome *oc;
        if (cand[j] && fdp__rule_matches(fdp__rule_of_outcome(cand[j]),
                                         miss_keys[j])) {
            oc = cand[j];
            b->hints[i] = cand_hint[j];
        } else {
            oc = smc_lookup(pmd, miss_keys[j], b->hashes[i], version,
                            &b->hints[i]);
        }
        if (oc) {
            /* Accounting reads this next (and, without a hint, the
             * actions). */
            __builtin_prefetch(oc->counters[0], 1);
            if (!b->hints[i]) {
                __builtin_prefetch(oc->actions);
            }
            b->flows[i] = oc;
            (*n_smc)++;
            if (pmd->emc) {
                emc_insert(pmd, miss_keys[j], b->hashes[i], b->tags[i],
                           version, oc);
            }
        } else {
            miss_idx[k] = (uint8_t) i;
            miss_keys[k++] = miss_keys[j];
        }
    }
    return k;
}

/* Phase 2b, one-table snapshot: one batch lookup of the table, at the
 * snapshot's version, for the 'n_miss' packets no cache had.  Each hit's
 * outcome is its rule's, and enters the caches.  Returns the hits. */
static uint32_t
batch_lookup_table(struct fdp_dp_pmd *pmd, struct batch *b,
                   const uint8_t miss_idx[],
                   const struct fdp_key *const miss_keys[], uint32_t n_miss,
                   bool smc_ok)
{
    const struct fdp__pipeline_view *view = pmd->view;
    const struct fdp_rule *rules[FDP_DP_BATCH];
    uint32_t n_hit = 0;

    /* At the version the caches were probed at: a pipeline's table may
     * hold a commit that its snapshot does not show yet. */
    if (view->conj) {
        /* A one-table pipeline with conjunctions: its lookup looks the
         * clauses up too. */
        fdp__pipeline_single_lookup_batch(view, miss_keys, n_miss, rules);
    } else {
        fdp__table_lookup_batch_at(view->single, miss_keys, n_miss, rules,
                                   view->version);
    }
    for (uint32_t j = 0; j < n_miss; j++) {
        uint32_t i = miss_idx[j];
        const struct fdp__outcome *oc = rules[j] ? &rules[j]->oc : NULL;
        b->flows[i] = oc;
        b->hints[i] = 0;
        if (oc) {
            n_hit++;
            if (pmd->emc) {
                emc_insert(pmd, miss_keys[j], b->hashes[i], b->tags[i],
                           view->version,
                           oc);
            }
            if (smc_ok) {
                smc_insert(pmd, b->hashes[i], view->version, oc);
            }
        }
    }
    return n_hit;
}

/* Phase 2b, several tables: the 'n_miss' packets no cache had go through
 * the pipeline together, table by table, and each gets its outcome
 * (pipeline_outcome()).  Returns the packets that hit some flow. */
static uint32_t
batch_lookup_pipeline(struct fdp_dp_pmd *pmd, struct batch *b,
                      const uint8_t miss_idx[],
                      const struct fdp_key *const miss_keys[],
                      uint32_t n_miss)
{
    struct fdp_pipeline_result *results[FDP_DP_BATCH];
    uint32_t n_hit = 0;

    for (uint32_t j = 0; j < n_miss; j++) {
        results[j] = &pmd->results[j];
    }
    if (fdp__pipeline_classify_batch(pmd->dp->pipeline, pmd->view, miss_keys,
                                     n_miss, results)) {
        return 0;               /* Out of memory: the packets miss. */
    }
    for (uint32_t j = 0; j < n_miss; j++) {
        uint32_t i = miss_idx[j];
        const struct outcome_home home = {
            .key = &b->pkts[i].key,
            .hash = b->hashes[i],
            .tag = b->tags[i],
            .rc_table = -1,
            .scratch = &pmd->scratch,
        };
        const struct fdp__outcome *oc;
        oc = pipeline_outcome(pmd, &home, pmd->view->version, results[j]);
        n_hit += oc && oc->n_rules;
        b->flows[miss_idx[j]] = oc;
    }
    return n_hit;
}

/* Phase 2: the exact-match cache, the signature match cache for its
 * misses (a one-table snapshot of a disjoint table only: see the
 * design), then the pipeline for theirs, at the snapshot's version.
 * Every packet ends with an outcome, or NULL for a miss. */
static void
batch_classify(struct fdp_dp_pmd *pmd, struct batch *b)
{
    const struct fdp__pipeline_view *view = pmd->view;
    uint64_t version = view->version;
    const struct fdp_key *miss_keys[FDP_DP_BATCH];
    uint8_t miss_idx[FDP_DP_BATCH];
    uint32_t n_miss = 0, n_emc = 0, n_smc = 0, n_hit = 0;
    uint64_t start = cycles_now();
    bool use_emc = pmd->emc && meter_use(&pmd->emc_meter);
    bool smc_ok = view->single && pmd->smc
                  && fdp__table_is_disjoint(view->single);
    bool use_smc = smc_ok && meter_use(&pmd->smc_meter);

    if (pmd->emc) {
        cache_tags(pmd, b);
    } else {
        memset(b->tags, 0, b->n * sizeof b->tags[0]);
    }
    if (use_emc) {
        /* Prefetch both ways of each set first, so that the cache misses
         * overlap instead of queueing. */
        for (uint32_t i = 0; i < b->n; i++) {
            __builtin_prefetch(emc_way(pmd, b->hashes[i], 0));
            __builtin_prefetch(emc_way(pmd, b->hashes[i], 1));
        }
    }
    for (uint32_t i = 0; i < b->n; i++) {
        const struct fdp_key *key = &b->pkts[i].key;
        const struct fdp__outcome *oc = NULL;
        b->hints[i] = 0;
        if (use_emc) {
            oc = emc_lookup(pmd, key, b->hashes[i], b->tags[i], version,
                            &b->hints[i]);
            if (oc) {
                /* Its line (a rule's first) holds the signature, counters
                 * and actions pointers that grouping and accounting
                 * read. */
                __builtin_prefetch(oc);
                n_emc++;
            }
        }
        b->flows[i] = oc;
        if (!oc) {
            miss_idx[n_miss] = (uint8_t) i;
            miss_keys[n_miss++] = key;
        }
    }
    if (use_smc && n_miss) {
        n_miss = batch_smc(pmd, b, version, miss_idx, miss_keys, n_miss,
                           &n_smc);
    }
    if (n_miss) {
        n_hit = view->single
                ? batch_lookup_table(pmd, b, miss_idx, miss_keys, n_miss,
                                     smc_ok)
                : batch_lookup_pipeline(pmd, b, miss_idx, miss_keys, n_miss);
    }

    uint64_t cycles = cycles_now() - start;
    if (pmd->emc) {
        meter_account(&pmd->emc_meter, use_emc, cycles, b->n);
    }
    if (smc_ok) {
        meter_account(&pmd->smc_meter, use_smc, cycles, b->n);
    }
    fdp__count_add(&pmd->counters.n_emc_hits, n_emc);
    fdp__count_add(&pmd->counters.n_smc_hits, n_smc);
    fdp__count_add(&pmd->counters.n_table_hits, n_hit);
    if (pmd->emc && !use_emc) {
        fdp__count_add(&pmd->counters.n_emc_bypassed, b->n);
    }
}

/* Phase 3: group the batch by outcome.  A small open-addressed table from
 * outcome signature to group keeps this linear: 64 slots for at most 32
 * groups.  Grouping goes by what outcomes do (fdp__outcome_same()), not
 * by pointer, so that a batch forms the same groups (and sends its
 * packets in the same order) whether its outcomes came from the EMC,
 * where equal keys share one, or from fresh classifications, each its
 * own. */
#define GROUP_SLOTS 64

static void
batch_group(struct batch *b)
{
    uint8_t slot_group[GROUP_SLOTS];    /* Group + 1, or 0: empty. */

    memset(slot_group, 0, sizeof slot_group);
    b->n_groups = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        const struct fdp__outcome *oc = b->flows[i];
        uint64_t key = oc ? oc->sig : 0;
        uint32_t h = (uint32_t) (key * UINT64_C(0x9e3779b97f4a7c15) >> 58);
        struct flow_group *g;
        for (;;) {
            uint8_t k = slot_group[h];
            if (!k) {
                g = &b->groups[b->n_groups];
                slot_group[h] = (uint8_t) ++b->n_groups;
                g->flow = oc;
                g->n = 0;
                g->n_bytes = 0;
                if (oc) {
                    /* The flows' counters and (without a cache's output
                     * hint) the actions are lines of their own, needed
                     * once the whole batch is grouped.  Most outcomes are
                     * a rule's, with one. */
                    if (FDP_LIKELY(oc->n_rules == 1)) {
                        __builtin_prefetch(oc->counters[0], 1);
                    } else {
                        for (uint32_t r = 0; r < oc->n_rules; r++) {
                            __builtin_prefetch(oc->counters[r], 1);
                        }
                    }
                    if (!b->hints[i]) {
                        __builtin_prefetch(oc->actions);
                    }
                }
                break;
            }
            g = &b->groups[k - 1];
            if (g->flow == oc
                || (oc && g->flow && fdp__outcome_same(g->flow, oc))) {
                break;
            }
            h = (h + 1) & (GROUP_SLOTS - 1);
        }
        g->pkts[g->n++] = (uint8_t) i;
        g->n_bytes += b->pkts[i].size;
    }
}

/* Monotonic milliseconds, for the flows' "used" times: the coarse clock
 * (a vDSO read, no system call) once per batch. */
static int64_t
batch_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Transmits the batch queued for 'q''s port and empties 'q'.  The tx
 * counters are written under the port's tx mutex, by one thread at a
 * time. */
static void
txq_flush(struct fdp_dp_pmd *pmd, struct txq *q)
{
    struct fdp__port *port = q->port;
    uint64_t bytes = 0;
    bool lock = pmd->dp->options.n_pmds > 1;

    if (lock) {
        pthread_mutex_lock(&port->tx_mutex);
    }
    uint32_t sent = port->class->tx(port, &pmd->cache, q->descs, q->n);
    for (uint32_t k = 0; k < sent; k++) {
        bytes += q->descs[k].len;
    }
    fdp__count_add(&port->stats.tx_packets, sent);
    fdp__count_add(&port->stats.tx_bytes, bytes);
    fdp__count_add(&port->stats.tx_dropped, q->n - sent + q->n_dropped);
    if (lock) {
        pthread_mutex_unlock(&port->tx_mutex);
    }
    q->n = 0;
    q->n_dropped = 0;
}

/* Transmits every port's queued batch. */
static void
pmd_flush_tx(struct fdp_dp_pmd *pmd)
{
    for (uint32_t i = 0; i < pmd->n_txq; i++) {
        struct txq *q = &pmd->txq[i];
        if (q->n || q->n_dropped) {
            txq_flush(pmd, q);
        }
    }
    pmd->n_txq = 0;
    pmd->last_out_no = 0;       /* Its queue is gone. */
}

/* The transmit queue of 'port' for this pmd, made if it has none yet in
 * this batch.  A batch outputs to a port or two: a scan is the fastest
 * search. */
static struct txq *
pmd_txq(struct fdp_dp_pmd *pmd, struct fdp__port *port)
{
    for (uint32_t i = 0; i < pmd->n_txq; i++) {
        if (pmd->txq[i].port == port) {
            return &pmd->txq[i];
        }
    }
    if (pmd->n_txq == TXQ_PORTS) {
        pmd_flush_tx(pmd);
    }
    struct txq *q = &pmd->txq[pmd->n_txq++];
    q->port = port;
    q->n = 0;
    q->n_dropped = 0;
    return q;
}

static void
txq_push(struct fdp_dp_pmd *pmd, struct txq *q, uint64_t addr, uint32_t len)
{
    if (q->n == TXQ_MAX) {
        txq_flush(pmd, q);
    }
    q->descs[q->n++] = (struct fdp_desc) { .addr = addr, .len = len };
}

struct exec_ctx {
    struct fdp_dp_pmd *pmd;
    struct batch *batch;
    uint32_t i;
};

static void exec_encap(struct exec_ctx *, struct fdp__pkt *,
                       struct fdp__port *tnl, bool steal);

static void
exec_output(void *ctx_, struct fdp__pkt *pkt, uint32_t port_no, bool steal)
{
    struct exec_ctx *ctx = ctx_;
    struct fdp_dp_pmd *pmd = ctx->pmd;
    struct fdp_dp *dp = pmd->dp;
    struct fdp__port *port = find_port(pmd->ports, port_no);
    uint64_t addr = (uint64_t) (pkt->data - dp->umem);

    if (!port) {
        if (steal) {
            fdp__cache_put(&pmd->cache, addr);
        }
        return;                 /* No such port: OpenFlow drops. */
    }
    if (FDP_UNLIKELY(port->class->encap != NULL)) {
        exec_encap(ctx, pkt, port, steal);
        return;
    }
    struct txq *q = pmd_txq(pmd, port);
    if (!steal) {
        /* Copy into a new frame at the same offset, with metadata. */
        uint64_t frame = fdp__cache_get(&pmd->cache);
        if (frame == UINT64_MAX) {
            q->n_dropped++;
            return;
        }
        uint32_t offset = (uint32_t) (addr & (dp->options.frame_size - 1));
        uint64_t src = addr - offset;
        memcpy(dp->umem + frame, dp->umem + src,
               sizeof(struct fdp__frame_meta));
        memcpy(dp->umem + frame + offset, pkt->data, pkt->size);
        addr = frame + offset;
    }
    txq_push(pmd, q, addr, pkt->size);
    ctx->batch->sent[ctx->i] = true;
}

/* Output to tunnel port 'tnl' (datapath/port-tunnel.c, "Send"): the
 * packet (or, unless 'steal', a copy in a frame of its own) encapsulated
 * and queued on the underlay port the tunnel names.  The tunnel's tx
 * counters count what it sent on; its drops are counted by reason. */
static void
exec_encap(struct exec_ctx *ctx, struct fdp__pkt *pkt, struct fdp__port *tnl,
           bool steal)
{
    struct fdp_dp_pmd *pmd = ctx->pmd;
    struct fdp_dp *dp = pmd->dp;
    struct fdp__pkt copy;
    uint32_t out_no;

    if (!steal) {
        uint64_t addr = (uint64_t) (pkt->data - dp->umem);
        uint32_t offset = (uint32_t) (addr & (dp->options.frame_size - 1));
        uint64_t frame = fdp__cache_get(&pmd->cache);
        if (frame == UINT64_MAX) {
            fdp__count(&tnl->stats.tx_dropped, 1);
            return;
        }
        memcpy(dp->umem + frame, dp->umem + (addr - offset),
               sizeof(struct fdp__frame_meta));
        memcpy(dp->umem + frame + offset, pkt->data, pkt->size);
        copy = *pkt;
        copy.data = dp->umem + frame + offset;
        pkt = &copy;
    }
    struct fdp__port *out = NULL;
    if (tnl->class->encap(tnl, &pmd->tnl, pkt, dp->options.frame_size,
                          ctx->batch->hashes[ctx->i], &out_no)) {
        out = find_port(pmd->ports, out_no);
    }
    if (!out || out->class->encap) {
        /* Dropped (counted by reason by the tunnel), or the underlay
         * names a port that is gone or is a tunnel itself. */
        fdp__count(&tnl->stats.tx_dropped, 1);
        fdp__cache_put(&pmd->cache, (uint64_t) (pkt->data - dp->umem));
        return;
    }
    fdp__count(&tnl->stats.tx_packets, 1);
    fdp__count(&tnl->stats.tx_bytes, pkt->size);
    txq_push(pmd, pmd_txq(pmd, out), (uint64_t) (pkt->data - dp->umem),
             pkt->size);
    ctx->batch->sent[ctx->i] = true;
}

/* Hands 'size' bytes of a packet to the upcall handler, if any, with
 * the arguments of controller action 'ctl' (NULL for a miss); returns
 * whether there was one. */
static bool
do_upcall(struct fdp_dp_pmd *pmd, enum fdp_upcall_reason reason,
          const struct fdp__pkt *pkt, size_t size,
          const struct fdp__controller *ctl)
{
    const struct upcall_handler *h = FDP_RCU_GET(pmd->dp->upcall);

    if (!h) {
        return false;
    }
    struct fdp_upcall up = {
        .reason = reason,
        .in_port = pmd->in_port->port_no,
        .data = pkt->data,
        .size = size,
        .key = &pkt->key,
        .ofp_reason = ctl ? ctl->reason : FDP__CTL_NO_MATCH,
        .table_id = ctl ? ctl->table_id : 0,
        .cookie = ctl ? ctl->cookie : UINT64_MAX,
    };
    if (ctl) {
        up.pause = ctl->pause;
        up.controller_id = ctl->id;
        up.meter_id = ctl->meter_id;
        up.userdata = ctl->userdata;
        up.userdata_size = ctl->userdata_size;
    }
    h->cb(h->aux, &up);
    fdp__count_add(&pmd->counters.n_upcalls, 1);
    return true;
}

static void
exec_controller(void *ctx_, const struct fdp__pkt *pkt,
                const struct fdp__action *a)
{
    struct exec_ctx *ctx = ctx_;
    struct fdp__controller ctl = fdp__action_controller(a);

    if (!ctl.stamped) {
        /* A flow's own actions, run without composition: the packet hit
         * that flow alone (see pipeline.c's stamp_controller()). */
        const struct fdp__outcome *oc = ctx->batch->flows[ctx->i];
        ctl.stamped = true;
        ctl.cookie = UINT64_MAX;
        if (oc && fdp__outcome_is_one_flow(oc)) {
            const struct fdp_rule *rule = fdp__rule_of_outcome(oc);
            ctl.table_id = rule->table_id;
            ctl.cookie = rule->cookie;
            if (ctl.reason == FDP__CTL_ACTION
                && fdp__rule_is_table_miss(rule)) {
                ctl.reason = FDP__CTL_EXPLICIT_MISS;
            }
        }
    }
    if (ctl.meter_id) {
        /* controller(meter_id=N): the packet-ins pass meter N first (Open
         * vSwitch's controller meters, which OVN's control-plane
         * protection sets); what the meter drops is no packet-in, and the
         * packet itself goes on with the flow's other actions.  (A
         * dscp_remark band would mark the packet's own bytes: Open
         * vSwitch's controller meters have drop bands.) */
        struct fdp_dp_pmd *pmd = ctx->pmd;
        struct fdp__pkt *pk = (struct fdp__pkt *) pkt;
        bool keep;
        if (!pmd->meter_now) {
            pmd->meter_now = fdp__meters_now(pmd->dp->meters);
        }
        fdp__meters_apply(pmd->dp->meters, ctl.meter_id, &pk, 1,
                          pmd->meter_now, pmd->stats_shard, &keep);
        if (!keep) {
            return;
        }
    }
    if (ctl.state_map) {
        /* The packet's key with the metadata and registers the pipeline
         * had at the action, for the packet-in's metadata. */
        struct fdp__pkt copy = *pkt;
        size_t k = 0;
        for (size_t i = FDP__WORD_METADATA; i <= FDP__WORD_XREG7; i++) {
            copy.key.w[i] = ctl.state_map >> (i - FDP__WORD_METADATA) & 1
                            ? ctl.state[k++] : 0;
        }
        do_upcall(ctx->pmd, FDP_UPCALL_ACTION, &copy,
                  pkt->size < ctl.max_len ? pkt->size : ctl.max_len, &ctl);
        return;
    }
    do_upcall(ctx->pmd, FDP_UPCALL_ACTION, pkt,
              pkt->size < ctl.max_len ? pkt->size : ctl.max_len, &ctl);
}

static void
exec_learn(void *ctx_, const struct fdp__action *a)
{
    struct exec_ctx *ctx = ctx_;
    struct fdp__learner *l = ctx->pmd->dp->learner;

    if (l) {
        fdp__learner_enqueue(l, ctx->pmd->id, a);
    }
}

/* NORMAL, FLOOD, ALL, LOCAL (datapath/normal.c); a frame no output
 * took stays the executor's caller's. */
static bool
exec_reserved(void *ctx_, struct fdp__pkt *pkt, uint32_t port,
              uint32_t in_port, bool steal)
{
    struct exec_ctx *ctx = ctx_;
    const struct port_set *ports = ctx->pmd->ports;

    return fdp__normal_execute(ctx->pmd->dp->normal, ports->ports, ports->n,
                               pkt, port, in_port, steal, exec_output, ctx);
}

static const struct fdp__exec_ops exec_ops = {
    .output = exec_output,
    .controller = exec_controller,
    .learn = exec_learn,
    .reserved = exec_reserved,
};

struct fdp__learner *
fdp__dp_learner(struct fdp_dp *dp)
{
    return dp->learner;
}

struct fdp__underlay *
fdp__dp_underlay(const struct fdp_dp *dp)
{
    return dp->underlay;
}

struct fdp__normal *
fdp__dp_normal(const struct fdp_dp *dp)
{
    return dp->normal;
}

void
fdp__dp_lock(struct fdp_dp *dp)
{
    pthread_mutex_lock(&dp->mutex);
}

struct fdp__port *
fdp__dp_port_locked(struct fdp_dp *dp, uint32_t port_no)
{
    return find_port(dp->ports, port_no);
}

void
fdp__dp_unlock(struct fdp_dp *dp)
{
    pthread_mutex_unlock(&dp->mutex);
}

/* The transmit queue for output to port 'port_no' from a flow whose
 * actions are that one output, or NULL if the port is the input port
 * (OpenFlow drops it) or none: then the executor decides. */
static inline __attribute__((always_inline)) struct txq *
output_queue(struct fdp_dp_pmd *pmd, uint32_t port_no)
{
    if (port_no == pmd->in_no) {
        return NULL;
    }
    if (port_no != pmd->last_out_no) {
        /* Most flows of a batch send where the last one did. */
        struct fdp__port *port = find_port(pmd->ports, port_no);
        if (!port || port->class->encap) {
            return NULL;        /* A tunnel: exec_encap(). */
        }
        pmd->last_txq = pmd_txq(pmd, port);
        pmd->last_out_no = port_no;
    }
    return pmd->last_txq;
}

/* The transmit queue for a group's flow if its actions are one output
 * (the common case, run without the executor), or NULL.  The caches'
 * hint, if the group's first packet came with one, spares reading the
 * actions. */
static inline __attribute__((always_inline)) struct txq *
single_output(struct fdp_dp_pmd *pmd, const struct batch *b,
              const struct flow_group *g, const struct fdp_actions **actionsp)
{
    uint32_t hint = b->hints[g->pkts[0]];

    *actionsp = NULL;
    if (hint) {
        return output_queue(pmd, hint);
    }
    const struct fdp_actions *actions = g->flow->actions;
    *actionsp = actions;
    hint = output_hint(actions);
    return hint ? output_queue(pmd, hint) : NULL;
}

static void group_run_actions(struct fdp_dp_pmd *, struct batch *,
                              const struct flow_group *,
                              const struct fdp_actions *, unsigned int depth);
static uint32_t meter_run(struct fdp_dp_pmd *, struct batch *, uint8_t idx[],
                          uint32_t n, const struct fdp_actions *,
                          const struct fdp__action *);

/* The usual metered flow, "meter:N,output:P": the group through the meter
 * at once, and the packets it keeps straight to P's queue, without the
 * executor.  False (nothing done) for any other list. */
static inline bool
meter_then_output(struct fdp_dp_pmd *pmd, struct batch *b,
                  const struct flow_group *g,
                  const struct fdp_actions *actions)
{
    const struct fdp__action *m = fdp__actions_first(actions);

    if (!m || actions->n_actions != 2 || m->type != FDP_ACT_METER) {
        return false;
    }
    const struct fdp__action *o = fdp__actions_next(actions, m);
    struct txq *q = o && o->type == FDP_ACT_OUTPUT
                    ? output_queue(pmd, o->arg) : NULL;
    if (!q) {
        return false;
    }
    uint8_t todo[FDP_DP_BATCH];
    memcpy(todo, g->pkts, g->n);
    uint32_t n = meter_run(pmd, b, todo, g->n, actions, m);
    for (uint32_t k = 0; k < n; k++) {
        struct fdp__pkt *pkt = &b->pkts[todo[k]];
        txq_push(pmd, q, (uint64_t) (pkt->data - pmd->dp->umem), pkt->size);
        b->sent[todo[k]] = true;
    }
    return true;
}

/* Runs a group's actions on each of its packets, at recirculation depth
 * 'depth' (0: received packets). */
static inline __attribute__((always_inline)) void
group_execute(struct fdp_dp_pmd *pmd, struct batch *b,
              const struct flow_group *g, unsigned int depth)
{
    const struct fdp_actions *actions;
    struct txq *q = single_output(pmd, b, g, &actions);

    if (q) {
        for (uint32_t k = 0; k < g->n; k++) {
            struct fdp__pkt *pkt = &b->pkts[g->pkts[k]];
            txq_push(pmd, q, (uint64_t) (pkt->data - pmd->dp->umem),
                     pkt->size);
            b->sent[g->pkts[k]] = true;
        }
        return;
    }
    if (!actions) {
        actions = g->flow->actions;
    }
    if (FDP_UNLIKELY(meter_then_output(pmd, b, g, actions))) {
        return;
    }
    const struct fdp__action *first = fdp__actions_first(actions);
    if (first && first->type == FDP_ACT_RESERVED
        && fdp__action_reserved_port(first) == FDP_PORT_NORMAL) {
        /* NORMAL's table lines for the whole group first (normal.c). */
        for (uint32_t k = 0; k < g->n; k++) {
            fdp__normal_prefetch(pmd->dp->normal, pmd->in_port,
                                 &b->pkts[g->pkts[k]]);
        }
    }
    group_run_actions(pmd, b, g, actions, depth);
}

/* Counts a group: each flow its packets hit, and the tables where a
 * lookup missed.  Returns false if the packets are misses (the pipeline
 * hit no flow), for the caller to count and upcall as such.  Most
 * outcomes are one flow's hit (every rule's own outcome is), which takes
 * the first branch. */
static inline __attribute__((always_inline)) bool
outcome_account(struct fdp_dp_pmd *pmd, const struct flow_group *fg,
                int64_t now)
{
    const struct fdp__outcome *oc = fg->flow;

    if (FDP_LIKELY(fdp__outcome_is_one_flow(oc))) {
        fdp__counters_account_n(oc->counters[0], fg->n, fg->n_bytes, now,
                                pmd->stats_shard);
        return true;
    }
    for (uint32_t k = 0; k < oc->n_rules; k++) {
        fdp__counters_account_n(oc->counters[k], fg->n, fg->n_bytes, now,
                                pmd->stats_shard);
    }
    if (oc->n_steps || oc->limit) {
        fdp_pipeline_account_misses(pmd->dp->pipeline,
                                    fdp__outcome_steps(oc), oc->n_steps,
                                    oc->limit, fg->n);
    }
    return oc->n_rules > 0;
}

/* ---------------------------------------------------------------------- */
/* Connection tracking and recirculation (see "Connection tracking").      */

/* Counts 'n' on 'counter' of the input port 'port': its own pmd is the
 * only writer of a port it polls, but several pmds decapsulate for one
 * tunnel port. */
static inline void
in_port_count(const struct fdp__port *port, uint64_t *counter, uint64_t n)
{
    if (port->class->encap) {
        fdp__count(counter, n);
    } else {
        fdp__count_add(counter, n);
    }
}

static void level_run(struct fdp_dp_pmd *, unsigned int depth);

/* The struct fdp__dp_ct of a resolved ct record. */
static inline const struct fdp__dp_ct *
ct_payload(const struct fdp__action *a)
{
    return (const struct fdp__dp_ct *) (const void *)
           ((const uint64_t *) a + 1);
}

/* Writes what the tracker said, 'res', into the ct fields of 'key':
 * words 23 to 30, whole, in key.h's layout (the generic field setter
 * costs ten times as much, and every continuation pays this).  The ct
 * tests match each field, so a slip here fails them. */
#define KEY_CT_WORD 23
static_assert(FDP_KEY_PACKET_WORDS + FDP__CT_FROZEN_WORDS == KEY_CT_WORD
              && KEY_CT_WORD + 8 == FDP__TUN_FIRST_WORD,
              "the ct fields are the eight words before the tunnel's "
              "(key.h)");

static inline void
key_set_ct(struct fdp_key *key, const struct fdp__ct_result *res)
{
    const struct fdp__ct_tuple *t = &res->orig;
    uint64_t *w = &key->w[KEY_CT_WORD];

    /* Word 23: ct_mark, ct_zone, ct_nw_proto, ct_state. */
    w[0] = (uint64_t) res->mark << 32 | (uint64_t) res->zone << 16
           | (uint64_t) (res->has_tuple ? t->proto : 0) << 8 | res->state;
    /* Words 25-26: ct_label, high word first. */
    w[2] = res->label.hi;
    w[3] = res->label.lo;
    if (!res->has_tuple) {
        w[1] = res->cached;
        w[4] = w[5] = w[6] = w[7] = 0;
        return;
    }
    /* Word 24: ct_tp_src, ct_tp_dst, and in the low half the tracker's
     * cached connection for the next ct() (datapath/conntrack.h). */
    w[1] = (uint64_t) t->src_port << 48 | (uint64_t) t->dst_port << 32
           | res->cached;
    if (t->ipv6) {
        /* Words 27-30: ct_ipv6_src, ct_ipv6_dst. */
        w[4] = t->src.hi;
        w[5] = t->src.lo;
        w[6] = t->dst.hi;
        w[7] = t->dst.lo;
    } else {
        /* ct_nw_src and ct_nw_dst: the top halves of words 27 and 29. */
        w[4] = (t->src.lo & 0xffffffffu) << 32;
        w[5] = 0;
        w[6] = (t->dst.lo & 0xffffffffu) << 32;
        w[7] = 0;
    }
}

/* Queues 'src' (a packet of the batch at depth - 1, on which ct record
 * 'dc' just ran with result 'res') to continue in dc->table at 'depth':
 * the packet itself if 'steal' (its frame goes with it), else a copy in a
 * new frame.  'copy' marks a continuation whose drops are not the
 * received packet's.  'as_keyed' says that the packet's bytes are still
 * what its key's packet words were extracted from (no NAT rewrote them),
 * which spares extracting them again.  Returns false if no frame was
 * left for a copy. */
static bool
recirc_enqueue(struct fdp_dp_pmd *pmd, unsigned int depth,
               const struct fdp__pkt *src, uint32_t src_hash, bool steal,
               bool copy, bool as_keyed, const struct fdp__dp_ct *dc,
               const struct fdp__ct_result *res)
{
    struct fdp_dp *dp = pmd->dp;
    struct recirc_level *lvl = pmd->levels[depth - 1];
    struct batch *b = &lvl->batch;

    if (b->n && (b->n == FDP_DP_BATCH || lvl->in_no != dc->in_port)) {
        /* Full, or its packets came in on another port (a ct inside a
         * resubmit(PORT)): run what is queued first. */
        level_run(pmd, depth);
    }
    uint32_t i = b->n;
    struct fdp__pkt *p = &b->pkts[i];
    if (steal) {
        p->data = src->data;
        p->size = src->size;
        p->headroom = src->headroom;
    } else {
        uint64_t frame = fdp__cache_get(&pmd->cache);
        if (frame == UINT64_MAX) {
            return false;
        }
        uint64_t addr = (uint64_t) (src->data - dp->umem);
        uint32_t offset = (uint32_t) (addr & (dp->options.frame_size - 1));
        memcpy(dp->umem + frame, dp->umem + (addr - offset),
               sizeof(struct fdp__frame_meta));
        memcpy(dp->umem + frame + offset, src->data, src->size);
        p->data = dp->umem + frame + offset;
        p->size = src->size;
        p->headroom = src->headroom;
    }
    /* The packet words as the bytes now are (NAT or an action before
     * the ct may have rewritten them), the pipeline state the record
     * froze, the tracker's fields. */
    uint32_t pkt_hash = src_hash;
    if (as_keyed) {
        memcpy(p->key.w, src->key.w, FDP_KEY_PACKET_WORDS * sizeof p->key.w[0]);
        p->layout = src->layout;
        if (fdp__key_get(&p->key, FDP_F_IN_PORT) != dc->in_port) {
            fdp__key_set(&p->key, FDP_F_IN_PORT, dc->in_port);
            pkt_hash = fdp_hash_fast(p->key.w, FDP_KEY_PACKET_WORDS,
                                     dp->emc_basis);
        }
    } else {
        pkt_hash = fdp__packet_extract_hash(p->data, p->size, dc->in_port,
                                            dp->emc_basis, &p->key,
                                            &p->layout);
    }
    memcpy(&p->key.w[FDP_KEY_PACKET_WORDS], dc->frozen, sizeof dc->frozen);
    key_set_ct(&p->key, res);
    /* The tunnel metadata as the packet has it at its ct (the actions
     * before the record set what the pipeline wrote): Open vSwitch keeps
     * it across recirculation. */
    memcpy(&p->key.w[FDP__TUN_FIRST_WORD], &src->key.w[FDP__TUN_FIRST_WORD],
           FDP__TUN_N_WORDS * sizeof p->key.w[0]);
    lvl->pkt_hash[i] = pkt_hash;
    b->hashes[i] = pmd->rc ? rc_hash(&p->key, pkt_hash, dc->table) : 0;
    b->sent[i] = false;
    lvl->table[i] = dc->table;
    lvl->copy[i] = copy;
    lvl->in_no = dc->in_port;
    b->n++;
    fdp__count_add(&pmd->counters.n_recirculations, 1);
    return true;
}

/* True if a packet that ran the actions of 'actions' before record 'ct'
 * still has the bytes its key's packet words were extracted from: no
 * action before it rewrites a packet (outputs, controller, ct_clear and
 * ct without NAT do not).  Checked once per group and ct record: the
 * composed lists are short.  The tracker reads addresses and ports from
 * the key (datapath/conntrack.h), so a packet rewritten before its ct
 * has its key extracted again first (ct_refresh_keys()). */
static bool
ct_bytes_as_keyed(const struct fdp_actions *actions,
                  const struct fdp__action *ct)
{
    for (const struct fdp__action *a = fdp__actions_first(actions);
         a && a != ct; a = fdp__actions_next(actions, a)) {
        switch ((enum fdp_action_type) a->type) {
        case FDP_ACT_OUTPUT:
        case FDP_ACT_IN_PORT:
        case FDP_ACT_CONTROLLER:
        case FDP_ACT_CT_CLEAR:
            break;
        case FDP_ACT_CT:
            if (!(a->flags & FDP__ACT_CT_RESOLVED)
                || (ct_payload(a)->flags & FDP__DPCT_NAT)) {
                return false;
            }
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Extracts the packet words of the keys of the 'n' packets 'pkts' again
 * from their bytes (and their layouts), keeping the pipeline's words,
 * and their hashes into 'hashes'. */
static void
ct_refresh_keys(const struct fdp_dp *dp, struct fdp__pkt *const pkts[],
                uint32_t n, uint32_t hashes[])
{
    for (uint32_t k = 0; k < n; k++) {
        struct fdp__pkt *p = pkts[k];
        uint64_t rest[FDP_KEY_WORDS - FDP_KEY_PACKET_WORDS];
        uint32_t in_port = (uint32_t) fdp__key_get(&p->key, FDP_F_IN_PORT);

        static const enum fdp_field rewritten[] = {
            FDP_F_NW_SRC, FDP_F_NW_DST, FDP_F_IPV6_SRC, FDP_F_IPV6_DST,
            FDP_F_TP_SRC, FDP_F_TP_DST,
        };
        fdp_u128 before[FDP_ARRAY_SIZE(rewritten)];

        for (size_t f = 0; f < FDP_ARRAY_SIZE(rewritten); f++) {
            before[f] = fdp__key_get(&p->key, rewritten[f]);
        }
        memcpy(rest, &p->key.w[FDP_KEY_PACKET_WORDS], sizeof rest);
        hashes[k] = fdp__packet_extract_hash(p->data, p->size, in_port,
                                             dp->emc_basis, &p->key,
                                             &p->layout);
        memcpy(&p->key.w[FDP_KEY_PACKET_WORDS], rest, sizeof rest);
        /* Open vSwitch forgets the packet's cached connection when an
         * action changes its addresses, ports or ICMP type and code
         * (pkt_metadata_init_conn() in packet_set_ipv4_addr() and the
         * others): so does the hint. */
        for (size_t f = 0; f < FDP_ARRAY_SIZE(rewritten); f++) {
            if (fdp__key_get(&p->key, rewritten[f]) != before[f]) {
                p->key.w[FDP__CT_CACHE_WORD] &= ~UINT64_C(0xffffffff);
                break;
            }
        }
    }
}

/* The tracker's arguments for resolved record 'dc'. */
static void
ct_args_init(struct fdp__ct_args *args, const struct fdp__dp_ct *dc)
{
    *args = (struct fdp__ct_args) {
        .zone = dc->zone,
        .commit = (dc->flags & (FDP__DPCT_COMMIT | FDP__DPCT_FORCE)) != 0,
        .force = (dc->flags & FDP__DPCT_FORCE) != 0,
        .mark = dc->mark,
        .mark_mask = dc->mark_mask,
        .label = dc->label,
        .label_mask = dc->label_mask,
        .nat = dc->flags & FDP__DPCT_NAT ? &dc->nat : NULL,
    };
}

/* The lists of fragments one ct_run() completed, with the record each
 * completing packet ran (a bare table's records differ per packet). */
struct ct_reassembled {
    uint32_t n;
    struct fdp__ipf_reass *r[FDP_DP_BATCH];
    struct fdp__dp_ct dc[FDP_DP_BATCH];
};

/* Lists a batch with a fragment frees from the reassembler's shards, so
 * that lists in shards no later fragment visits do not keep counting
 * against the fragment limit; small, and only when fragments come. */
#define IPF_EXPIRE_BUDGET 4

/* Whether any of the 'n' packets is an IP fragment: one key word each,
 * all a batch without fragments pays for reassembly. */
static inline bool
any_fragment(struct fdp__pkt *const *pkts, uint32_t n)
{
    uint64_t bits = 0;

    for (uint32_t k = 0; k < n; k++) {
        bits |= pkts[k]->key.w[FDP__WORD_IP_FRAG];
    }
    return (bits & FDP__PUT(IP_FRAG, FDP_FRAG_ANY)) != 0;
}

/* Phase 3 of ct_run(): offers the fragments among the 'n' packets to the
 * reassembler (datapath/ipf.c).  A fragment it holds leaves the batch:
 * its frame goes back to the cache (the reassembler keeps a copy) and it
 * counts as gone on, not dropped.  Completed lists go to 'done' with the
 * record of the packet that completed them.  Compacts 'idx', 'pkts',
 * 'phash' and 'dcs' to the packets for the tracker and returns how
 * many. */
static uint32_t
ipf_hold(struct fdp_dp_pmd *pmd, struct batch *b, uint8_t idx[],
         struct fdp__pkt *pkts[], uint32_t phash[],
         const struct fdp__dp_ct *dcs[], uint32_t n, unsigned int depth,
         uint64_t now, struct ct_reassembled *done)
{
    struct fdp__ipf *ipf = pmd->dp->ipf;
    uint32_t n_keep = 0;

    if (!fdp__ipf_enabled(ipf)) {
        return n;
    }
    for (uint32_t k = 0; k < n; k++) {
        struct fdp__ipf_reass *r[1];
        bool held;
        /* One packet at a time, so that each reassembly is known by the
         * record that completed it.  The recirculation depth stands for
         * Open vSwitch's recirc_id in the list key: fragments that meet a
         * second ct after ct(table=N) gather in lists of their own. */
        if (fdp__ipf_preprocess(ipf, &pkts[k], 1, NULL, dcs[k]->zone, depth,
                                now, &held, r)) {
            done->r[done->n] = r[0];
            done->dc[done->n++] = *dcs[k];
        }
        if (held) {
            fdp__cache_put(&pmd->cache,
                           (uint64_t) (pkts[k]->data - pmd->dp->umem));
            b->sent[idx[k]] = true;
            continue;
        }
        idx[n_keep] = idx[k];
        pkts[n_keep] = pkts[k];
        phash[n_keep] = phash[k];
        dcs[n_keep++] = dcs[k];
    }
    fdp__ipf_expire(ipf, now, IPF_EXPIRE_BUDGET);
    return n_keep;
}

/* Phase 5 of ct_run(), also for released fragments: each of the 'n'
 * packets 'idx' of 'b' (their packet words' hashes in 'phash') after the
 * tracker said 'res[k]' under record 'dcs[k]': the continuation of
 * ct(table=N), the end of the packets for which the record was the last
 * action.  'as_keyed' as for recirc_enqueue().  Compacts 'idx' to the
 * packets that go on with the actions after the record and returns how
 * many. */
static uint32_t
ct_continue(struct fdp_dp_pmd *pmd, struct batch *b, uint8_t idx[],
            struct fdp__pkt *const pkts[], const uint32_t phash[],
            const struct fdp__ct_result res[],
            const struct fdp__dp_ct *const dcs[], uint32_t n, bool last,
            bool as_keyed, unsigned int depth)
{
    uint32_t n_go = 0, n_lost = 0;

    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        struct fdp__pkt *pkt = pkts[k];
        const struct fdp__dp_ct *dc = dcs[k];
        bool moved = false;
        if ((dc->flags & FDP__DPCT_RECIRC) && FDP_UNLIKELY(!pmd->levels[0])) {
            /* A resolved record in a bare table's flow (only a test
             * builds one): no table to go on in, as above. */
            fdp__count_add(&pmd->counters.n_ct_table_ignored, 1);
        } else if (dc->flags & FDP__DPCT_RECIRC) {
            bool copy = b->released
                        || (depth > 0 && pmd->levels[depth - 1]->copy[i]);
            if (depth >= MAX_RECIRC_DEPTH) {
                n_lost++;
            } else if (last) {
                moved = recirc_enqueue(pmd, depth + 1, pkt, phash[k], true,
                                       copy, as_keyed, dc, &res[k]);
                /* It went on: not the received packet's drop here. */
                b->sent[i] = true;
            } else if (!recirc_enqueue(pmd, depth + 1, pkt, phash[k], false,
                                       true, as_keyed, dc, &res[k])) {
                n_lost++;
            }
        }
        if (!last) {
            /* The next ct() of this pass sees what this one said, as
             * Open vSwitch's packet metadata does (its ct_state of the
             * zone, its cached connection). */
            key_set_ct(&pkt->key, &res[k]);
            idx[n_go++] = (uint8_t) i;
        } else if (!moved) {
            fdp__cache_put(&pmd->cache,
                           (uint64_t) (pkt->data - pmd->dp->umem));
        }
    }
    fdp__count_add(&pmd->counters.n_recirc_dropped, n_lost);
    return n_go;
}

static void run_actions_from(struct fdp_dp_pmd *, struct batch *,
                             uint8_t todo[], uint32_t n,
                             const struct fdp_actions *,
                             const struct fdp__action *from,
                             unsigned int depth);

/* Sends the released fragments of 'rb' on from ct record 'a', as
 * ct_run() does its packets, and empties 'rb'.  Their bytes may differ
 * from their keys (NAT rewrote them after they were keyed): not
 * as_keyed. */
static void
release_run(struct fdp_dp_pmd *pmd, struct batch *rb, uint8_t todo[],
            struct fdp__pkt *const pkts[], const struct fdp__ct_result res[],
            const struct fdp__dp_ct *const dcs[],
            const struct fdp_actions *actions, const struct fdp__action *a,
            bool last, unsigned int depth)
{
    uint32_t n_go = ct_continue(pmd, rb, todo, pkts, rb->hashes, res, dcs,
                                rb->n, last, false, depth);
    if (n_go) {
        run_actions_from(pmd, rb, todo, n_go, actions,
                         fdp__actions_next(actions, a), depth);
    }
    rb->n = 0;
}

/* Phase 6 of ct_run(): the reassembled packets through the tracker, then
 * their fragments, rewritten as NAT rewrote the whole packet, each into a
 * frame of its own and on from ct record 'a' with the whole packet's
 * result (continuation, or the actions after 'a'), in batches of their
 * own ('released': their drops are no received packet's). */
static void
ct_release(struct fdp_dp_pmd *pmd, struct ct_reassembled *done,
           const struct fdp_actions *actions, const struct fdp__action *a,
           bool last, unsigned int depth, uint64_t now)
{
    struct fdp_dp *dp = pmd->dp;
    struct fdp__ct_result whole[FDP_DP_BATCH];
    struct fdp__ct_result res[FDP_DP_BATCH];
    const struct fdp__dp_ct *dcs[FDP_DP_BATCH];
    struct fdp__pkt *pkts[FDP_DP_BATCH];
    uint8_t todo[FDP_DP_BATCH];
    uint32_t size_max = dp->options.frame_size - FDP__FRAME_META_SIZE;
    uint32_t n_lost = 0;
    struct batch *rb = malloc(sizeof *rb);

    for (uint32_t j = 0; j < done->n; j++) {
        struct fdp__ipf_reass *r = done->r[j];
        struct fdp__pkt *p = &r->pkt;
        struct fdp__ct_args args;
        ct_args_init(&args, &done->dc[j]);
        fdp__ct_execute(pmd->ct, &p, 1, &args, &r->zone, now, &whole[j]);
        fdp__ipf_postprocess(dp->ipf, r);
    }
    fdp__count_add(&pmd->counters.n_ct_packets, done->n);

    if (rb) {
        rb->n = 0;
        rb->released = true;
    }
    for (uint32_t j = 0; j < done->n; j++) {
        const struct fdp__ipf_reass *r = done->r[j];
        for (size_t f = 0; f < r->n_frags; f++) {
            const struct fdp__pkt *src = &r->frags[f];
            uint64_t frame = rb && src->size <= size_max
                             ? fdp__cache_get(&pmd->cache) : UINT64_MAX;
            if (frame == UINT64_MAX) {
                n_lost++;
                continue;
            }
            /* At FDP_DP_HEADROOM as received, or further forward if a
             * pushed tag made it longer than that leaves room for. */
            uint32_t usual = FDP_DP_HEADROOM - FDP__FRAME_META_SIZE;
            uint32_t headroom = size_max - src->size < usual
                                ? size_max - src->size : usual;
            uint8_t *base = dp->umem + frame;
            uint32_t i = rb->n++;
            struct fdp__pkt *p = &rb->pkts[i];
            memset(base, 0, sizeof(struct fdp__frame_meta));
            p->data = base + FDP__FRAME_META_SIZE + headroom;
            memcpy(p->data, src->data, src->size);
            p->size = src->size;
            p->headroom = headroom;
            p->layout = src->layout;
            p->key = src->key;
            rb->hashes[i] = fdp_hash_fast(p->key.w, FDP_KEY_PACKET_WORDS,
                                          dp->emc_basis);
            rb->sent[i] = false;
            todo[i] = (uint8_t) i;
            pkts[i] = p;
            res[i] = whole[j];
            dcs[i] = &done->dc[j];
            if (rb->n == FDP_DP_BATCH) {
                release_run(pmd, rb, todo, pkts, res, dcs, actions, a, last,
                            depth);
            }
        }
    }
    if (rb && rb->n) {
        release_run(pmd, rb, todo, pkts, res, dcs, actions, a, last, depth);
    }
    fdp__count_add(&pmd->counters.n_recirc_dropped, n_lost);
    for (uint32_t j = 0; j < done->n; j++) {
        fdp__ipf_reass_free(dp->ipf, done->r[j]);
    }
    free(rb);
}

/* Runs ct record 'a' (an action of 'actions') on the 'n' packets 'idx' of
 * 'b' (at 'depth'), which execution brought to it together, and what
 * follows from it: the continuations of ct(table=N), the packets that end
 * with it, and the fragments reassembly completed.  Compacts 'idx' to the
 * packets that go on with the actions after 'a' and returns how many. */
static uint32_t
ct_run(struct fdp_dp_pmd *pmd, struct batch *b, uint8_t idx[], uint32_t n,
       const struct fdp_actions *actions, const struct fdp__action *a,
       unsigned int depth)
{
    struct fdp__pkt *pkts[FDP_DP_BATCH];
    uint32_t phash[FDP_DP_BATCH];
    struct fdp__ct_result res[FDP_DP_BATCH];
    struct fdp__dp_ct own[FDP_DP_BATCH];
    const struct fdp__dp_ct *dcs[FDP_DP_BATCH];
    struct ct_reassembled done;
    struct fdp__ct_args args;
    bool last = !fdp__actions_next(actions, a);
    bool resolved = (a->flags & FDP__ACT_CT_RESOLVED) != 0;
    bool as_keyed = false;
    uint64_t now = fdp__ct_clock_ms();

    /* Phase 1: the packets, their keys current.  The packet words'
     * hashes (see rc_hash()): the batch's own at depth 0 and for released
     * fragments, the level's deeper. */
    const uint32_t *level_hashes = depth && !b->released
                                   ? pmd->levels[depth - 1]->pkt_hash
                                   : b->hashes;
    for (uint32_t k = 0; k < n; k++) {
        pkts[k] = &b->pkts[idx[k]];
        phash[k] = level_hashes[idx[k]];
    }
    if (!ct_bytes_as_keyed(actions, a)) {
        ct_refresh_keys(pmd->dp, pkts, n, phash);
    }

    /* Phase 2: each packet's record. */
    if (FDP_LIKELY(resolved)) {
        const struct fdp__dp_ct *dc = ct_payload(a);
        /* The keys are current (refreshed above if need be) unless
         * this ct's NAT rewrites the packets now. */
        as_keyed = !(dc->flags & FDP__DPCT_NAT);
        for (uint32_t k = 0; k < n; k++) {
            dcs[k] = dc;
        }
    } else {
        /* A bare table's rule keeps the flow form: resolved here against
         * each packet's key (a zone or an exec() move may read it), and
         * the tracker called once per run of packets that resolve
         * alike.  There is no table to go on in (see "Connection
         * tracking"): table=N is counted and dropped. */
        for (uint32_t k = 0; k < n; k++) {
            if (fdp__ct_resolve(a, &pkts[k]->key, &own[k])) {
                memset(&own[k], 0, sizeof own[k]);
            }
            if (own[k].flags & FDP__DPCT_RECIRC) {
                own[k].flags &= (uint8_t) ~FDP__DPCT_RECIRC;
                fdp__count_add(&pmd->counters.n_ct_table_ignored, 1);
            }
            dcs[k] = &own[k];
        }
    }

    /* Phase 3: fragments wait for their whole packet (see "Fragments"). */
    done.n = 0;
    if (FDP_UNLIKELY(any_fragment(pkts, n))) {
        n = ipf_hold(pmd, b, idx, pkts, phash, dcs, n, depth, now, &done);
    }

    /* Phase 4: the tracker.  A pipeline's composed record: one call for
     * the whole group, so that the tracker prefetches across it. */
    if (FDP_LIKELY(resolved) && n) {
        ct_args_init(&args, dcs[0]);
        fdp__ct_execute(pmd->ct, pkts, n, &args, NULL, now, res);
    } else {
        for (uint32_t k = 0, end; k < n; k = end) {
            for (end = k + 1; end < n && !memcmp(dcs[end], dcs[k],
                                                 sizeof *dcs[k]); end++) {
                continue;
            }
            ct_args_init(&args, dcs[k]);
            fdp__ct_execute(pmd->ct, &pkts[k], end - k, &args, NULL, now,
                            &res[k]);
        }
    }
    fdp__count_add(&pmd->counters.n_ct_packets, n);

    /* Phase 5: where each goes. */
    uint32_t n_go = ct_continue(pmd, b, idx, pkts, phash, res, dcs, n, last,
                                as_keyed, depth);

    /* Phase 6: the fragments of the packets reassembled. */
    if (FDP_UNLIKELY(done.n)) {
        ct_release(pmd, &done, actions, a, last, depth, now);
    }
    return n_go;
}

/* Runs the meter of record 'a' on the 'n' packets 'idx' of 'b', which
 * execution brought to it together: one pass through the meter's buckets
 * for them all (datapath/meter.c).  Drops what a drop band dropped
 * (counted as the meter's, and as the port's rx_dropped like any packet
 * that ends unsent), compacts 'idx' to the packets that go on with the
 * actions after 'a' and returns how many: none if 'a' is the last action
 * of 'actions' (the packets end here). */
static uint32_t
meter_run(struct fdp_dp_pmd *pmd, struct batch *b, uint8_t idx[], uint32_t n,
          const struct fdp_actions *actions, const struct fdp__action *a)
{
    bool last = !fdp__actions_next(actions, a);
    const struct fdp__meters *ms = pmd->dp->meters;
    struct fdp__pkt *pkts[FDP_DP_BATCH];
    bool keep[FDP_DP_BATCH];
    uint32_t n_go = 0;

    for (uint32_t k = 0; k < n; k++) {
        pkts[k] = &b->pkts[idx[k]];
    }
    /* One clock read per poll: a read cost more than a meter's bucket
     * (datapath/meter.c, "The default clock"). */
    if (!pmd->meter_now) {
        pmd->meter_now = fdp__meters_now(ms);
    }
    fdp__meters_apply(ms, a->arg, pkts, n, pmd->meter_now,
                      pmd->stats_shard, keep);
    for (uint32_t k = 0; k < n; k++) {
        if (keep[k] && !last) {
            idx[n_go++] = idx[k];
        } else {
            fdp__cache_put(&pmd->cache,
                           (uint64_t) (pkts[k]->data - pmd->dp->umem));
        }
    }
    return n_go;
}

/* The general path of a group's actions: each packet through the
 * executor up to the next ct record, the packets that reached it through
 * the tracker together (ct_run()), and on from the action after it, until
 * every packet is done. */
static void
group_run_actions(struct fdp_dp_pmd *pmd, struct batch *b,
                  const struct flow_group *g,
                  const struct fdp_actions *actions, unsigned int depth)
{
    uint8_t todo[FDP_DP_BATCH];

    memcpy(todo, g->pkts, g->n);
    run_actions_from(pmd, b, todo, g->n, actions, NULL, depth);
}

/* The loop of group_run_actions(), for the 'n' packets 'todo' of 'b',
 * from action 'from' (NULL: the first). */
static void
run_actions_from(struct fdp_dp_pmd *pmd, struct batch *b, uint8_t todo[],
                 uint32_t n, const struct fdp_actions *actions,
                 const struct fdp__action *from, unsigned int depth)
{
    while (n) {
        const struct fdp__action *ct = NULL;
        uint32_t n_ct = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = todo[k];
            struct fdp__pkt *pkt = &b->pkts[i];
            struct exec_ctx ctx = { pmd, b, i };
            enum fdp__exec_result r;
            r = fdp__execute_from(actions, from, pkt, pmd->in_no, &exec_ops,
                                  &ctx, &ct);
            if (r == FDP__EXEC_CT) {
                /* Every packet of the group stops at the same record:
                 * the same actions, and only drops end one early. */
                todo[n_ct++] = (uint8_t) i;
                continue;
            }
            if (r == FDP__EXEC_TTL_EXPIRED) {
                fdp__count_add(&pmd->counters.n_ttl_expired, 1);
            } else if (r == FDP__EXEC_NO_ROOM) {
                fdp__count_add(&pmd->counters.n_no_room, 1);
            }
            if (r != FDP__EXEC_STOLEN) {
                fdp__cache_put(&pmd->cache,
                               (uint64_t) (pkt->data - pmd->dp->umem));
            }
        }
        if (!n_ct) {
            break;
        }
        n = ct->type == FDP_ACT_METER
            ? meter_run(pmd, b, todo, n_ct, actions, ct)
            : ct_run(pmd, b, todo, n_ct, actions, ct, depth);
        from = fdp__actions_next(actions, ct);
    }
}

/* Phase 2 for the continuations of 'lvl': the continuation cache, then
 * the pipeline from each packet's table for its misses. */
static void
level_classify(struct fdp_dp_pmd *pmd, struct recirc_level *lvl)
{
    struct batch *b = &lvl->batch;
    uint64_t version = pmd->view->version;
    uint32_t n_hits = 0;

    if (!pmd->rc) {
        memset(b->tags, 0, b->n * sizeof b->tags[0]);
    } else {
        cache_tags(pmd, b);
    }
    if (pmd->rc) {
        for (uint32_t i = 0; i < b->n; i++) {
            __builtin_prefetch(rc_way(pmd, b->hashes[i], 0));
            __builtin_prefetch(rc_way(pmd, b->hashes[i], 1));
        }
    }
    for (uint32_t i = 0; i < b->n; i++) {
        const struct fdp_key *key = &b->pkts[i].key;
        const struct fdp__outcome *oc = NULL;
        b->hints[i] = 0;
        if (pmd->rc) {
            oc = rc_lookup(pmd, key, lvl->table[i], b->hashes[i],
                           b->tags[i], version);
            n_hits += oc != NULL;
        }
        if (!oc) {
            struct fdp_pipeline_result *r = &lvl->results[i];
            const struct outcome_home home = {
                .key = key,
                .hash = b->hashes[i],
                .tag = b->tags[i],
                .rc_table = lvl->table[i],
                .scratch = &lvl->scratch,
            };
            if (!fdp__pipeline_resume_view(pmd->dp->pipeline, pmd->view, key,
                                           lvl->table[i], 0, r, NULL,
                                           NULL)) {
                oc = pipeline_outcome(pmd, &home, version, r);
            }
        }
        b->flows[i] = oc;
    }
    fdp__count_add(&pmd->counters.n_recirc_cache_hits, n_hits);
}

/* Runs the continuations queued at 'depth' as a batch of their own:
 * classify, group, account, execute (which may queue continuations at
 * depth + 1, run here before returning), and counts the received
 * packets that ended here without output as their port's rx_dropped. */
static void
level_run(struct fdp_dp_pmd *pmd, unsigned int depth)
{
    struct recirc_level *lvl = pmd->levels[depth - 1];
    struct batch *b = &lvl->batch;
    uint32_t saved_in_no = pmd->in_no;
    int64_t now = batch_now_ms();
    uint64_t dropped = 0;

    pmd->in_no = lvl->in_no;
    level_classify(pmd, lvl);
    batch_group(b);
    for (uint32_t g = 0; g < b->n_groups; g++) {
        const struct flow_group *fg = &b->groups[g];
        if (fg->flow && outcome_account(pmd, fg, now)) {
            group_execute(pmd, b, fg, depth);
            continue;
        }
        fdp__count_add(&pmd->counters.n_recirc_missed, fg->n);
        for (uint32_t k = 0; k < fg->n; k++) {
            struct fdp__pkt *pkt = &b->pkts[fg->pkts[k]];
            do_upcall(pmd, FDP_UPCALL_MISS, pkt, pkt->size, NULL);
            fdp__cache_put(&pmd->cache,
                           (uint64_t) (pkt->data - pmd->dp->umem));
        }
    }
    for (uint32_t i = 0; i < b->n; i++) {
        dropped += !b->sent[i] && !lvl->copy[i];
    }
    in_port_count(pmd->in_port, &pmd->in_port->stats.rx_dropped, dropped);
    b->n = 0;
    lvl->scratch.n = 0;
    pmd->in_no = saved_in_no;
    if (depth < MAX_RECIRC_DEPTH && pmd->levels[depth]->batch.n) {
        level_run(pmd, depth + 1);
    }
}

/* Before classification, on a port with underlay addresses: ARP and ND
 * requests for them are answered out of the port they came in on (the
 * answer rewritten into the request's frame) and leave the batch; the
 * rest, snooped, stay (datapath/underlay.c). */
static void
batch_underlay(struct fdp_dp_pmd *pmd, struct batch *b)
{
    struct fdp_dp *dp = pmd->dp;
    uint32_t frame_size = dp->options.frame_size;
    uint32_t n = 0;

    for (uint32_t i = 0; i < b->n; i++) {
        struct fdp__pkt *p = &b->pkts[i];
        uint64_t addr = (uint64_t) (p->data - dp->umem);
        uint32_t room = frame_size - (uint32_t) (addr & (frame_size - 1));
        if (fdp__underlay_rx(dp->underlay, pmd->in_no, p, room)
            == FDP__UNDERLAY_REPLY) {
            txq_push(pmd, pmd_txq(pmd, pmd->in_port), addr, p->size);
            continue;
        }
        if (n != i) {
            b->pkts[n] = *p;
            b->hashes[n] = b->hashes[i];
        }
        n++;
    }
    b->n = n;
}

/* The underlay's way out for the frames it makes (requests): a copy in a
 * fresh frame, queued for 'port_no'. */
static bool
underlay_emit(void *pmd_, uint32_t port_no, const void *data, size_t size)
{
    struct fdp_dp_pmd *pmd = pmd_;
    struct fdp_dp *dp = pmd->dp;
    struct fdp__port *port = find_port(pmd->ports, port_no);

    if (!port) {
        return false;
    }
    uint64_t frame = fdp__cache_get(&pmd->cache);
    if (frame == UINT64_MAX) {
        return false;
    }
    uint64_t addr = frame + FDP_DP_HEADROOM;
    struct fdp__frame_meta *meta = (void *) (dp->umem + frame);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    meta->ts_usec = (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    memcpy(dp->umem + addr, data, size);
    txq_push(pmd, pmd_txq(pmd, port), addr, (uint32_t) size);
    return true;
}

static void batch_finish(struct fdp_dp_pmd *);

/* Phases 4 and 5, group by group: the flow's counters (one update per
 * group), then its actions (or the upcalls of the misses); then transmit. */
static void
batch_execute(struct fdp_dp_pmd *pmd, struct batch *b)
{
    struct fdp__port *in = pmd->in_port;
    int64_t now = batch_now_ms();
    uint64_t dropped = 0;

    for (uint32_t g = 0; g < b->n_groups; g++) {
        const struct flow_group *fg = &b->groups[g];
        if (fg->flow && outcome_account(pmd, fg, now)) {
            group_execute(pmd, b, fg, 0);
            continue;
        }
        fdp__count_add(&pmd->counters.n_missed, fg->n);
        if (!fg->flow && pmd->dp->pipeline && pmd->view->single) {
            /* A one-table pipeline's lookup missed: a table 0 miss.  (A
             * bare table counts its own.) */
            static const struct fdp_pipeline_step miss0 = { .rule = NULL };
            fdp_pipeline_account_misses(pmd->dp->pipeline, &miss0, 1, false,
                                        fg->n);
        }
        for (uint32_t k = 0; k < fg->n; k++) {
            struct fdp__pkt *pkt = &b->pkts[fg->pkts[k]];
            do_upcall(pmd, FDP_UPCALL_MISS, pkt, pkt->size, NULL);
            fdp__cache_put(&pmd->cache,
                           (uint64_t) (pkt->data - pmd->dp->umem));
        }
    }
    for (uint32_t i = 0; i < b->n; i++) {
        dropped += !b->sent[i];
    }
    in_port_count(in, &in->stats.rx_dropped, dropped);
    batch_finish(pmd);
}

/* The end of a batch's execution: its continuations, the transmission,
 * and the outcomes the caches let go meanwhile. */
static void
batch_finish(struct fdp_dp_pmd *pmd)
{
    if (pmd->levels[0] && pmd->levels[0]->batch.n) {
        level_run(pmd, 1);
    }
    pmd_flush_tx(pmd);

    /* The batch and its continuations no longer point at the outcomes
     * the caches let go. */
    for (uint32_t i = 0; i < pmd->n_doomed; i++) {
        free(pmd->doomed[i]);
    }
    pmd->n_doomed = 0;
    for (uint32_t i = 0; i < pmd->n_rc_doomed; i++) {
        free((struct fdp__outcome *) pmd->rc_doomed[i]);
    }
    pmd->n_rc_doomed = 0;
    pmd->scratch.n = 0;
}

/* The snapshot a batch is classified with: the pipeline's published
 * view, or for a bare table a one-table view of its current version. */
static inline const struct fdp__pipeline_view *
pmd_snapshot(struct fdp_dp_pmd *pmd)
{
    struct fdp_dp *dp = pmd->dp;

    if (dp->pipeline) {
        return fdp__pipeline_view(dp->pipeline);
    }
    pmd->table_view.version = fdp_table_version(dp->table);
    return &pmd->table_view;
}

/* Runs the 'n' packets 'idx' of 'b', decapsulated for tunnel port 'tnl',
 * as a batch received on it. */
static void
run_decapsulated(struct fdp_dp_pmd *pmd, const struct batch *b,
                 const uint8_t idx[], uint32_t n, struct fdp__port *tnl)
{
    struct batch *tb = &pmd->tnl_batch;
    struct fdp__port *saved = pmd->in_port;

    tb->n = n;
    tb->released = false;
    for (uint32_t k = 0; k < n; k++) {
        tb->pkts[k] = b->pkts[idx[k]];
        tb->hashes[k] = b->hashes[idx[k]];
        tb->sent[k] = false;
    }
    pmd->in_port = tnl;
    pmd->in_no = tnl->port_no;
    batch_classify(pmd, tb);
    batch_group(tb);
    batch_execute(pmd, tb);
    pmd->in_port = saved;
    pmd->in_no = saved->port_no;
}

/* Phase 1b, in a datapath with tunnel ports: pops the tunnel packets of
 * 'b' (datapath/port-tunnel.c, "Receive"), which then go on as received
 * on their tunnel port: the whole batch if every packet went to one (the
 * common case: no copy), else each tunnel port's packets as a batch of
 * their own, here, and the rest stay in 'b'. */
static void
batch_decap(struct fdp_dp_pmd *pmd, struct batch *b)
{
    const struct fdp__tnl_rx_set *set = pmd->ports->tnl;
    struct fdp__port *to[FDP_DP_BATCH];
    uint8_t keep[FDP_DP_BATCH];
    uint32_t n_keep = 0, n_decap = 0;

    for (uint32_t i = 0; i < b->n; i++) {
        struct fdp__pkt *p = &b->pkts[i];
        to[i] = NULL;
        if (FDP_LIKELY(!fdp__tnl_rx_candidate(set, &p->key))) {
            keep[n_keep++] = (uint8_t) i;
            continue;
        }
        switch (fdp__tnl_receive(pmd->dp, set, p, pmd->dp->emc_basis,
                                 &b->hashes[i], &to[i])) {
        case FDP__TNL_RX_NOT:
            keep[n_keep++] = (uint8_t) i;
            break;
        case FDP__TNL_RX_DROP:
            /* Received, then sent nowhere: the underlay port's drop (the
             * tunnel port counts why). */
            fdp__cache_put(&pmd->cache, (uint64_t) (p->data - pmd->dp->umem));
            in_port_count(pmd->in_port, &pmd->in_port->stats.rx_dropped, 1);
            break;
        case FDP__TNL_RX_DECAP:
            fdp__count(&to[i]->stats.rx_packets, 1);
            fdp__count(&to[i]->stats.rx_bytes, p->size);
            n_decap++;
            break;
        }
    }
    if (n_decap == b->n) {
        bool one = true;
        for (uint32_t i = 1; i < b->n && one; i++) {
            one = to[i] == to[0];
        }
        if (one) {
            pmd->in_port = to[0];
            pmd->in_no = to[0]->port_no;
            return;
        }
    }
    /* Each tunnel port's packets, in order of first arrival. */
    for (uint32_t i = 0; i < b->n; i++) {
        struct fdp__port *tnl = to[i];
        uint8_t idx[FDP_DP_BATCH];
        uint32_t n = 0;
        if (!tnl) {
            continue;
        }
        for (uint32_t j = i; j < b->n; j++) {
            if (to[j] == tnl) {
                idx[n++] = (uint8_t) j;
                to[j] = NULL;
            }
        }
        run_decapsulated(pmd, b, idx, n, tnl);
    }
    if (n_keep != b->n) {
        for (uint32_t k = 0; k < n_keep; k++) {
            if (keep[k] != k) {
                b->pkts[k] = b->pkts[keep[k]];
                b->hashes[k] = b->hashes[keep[k]];
            }
        }
        b->n = n_keep;
    }
}

static uint32_t
pmd_poll_port(struct fdp_dp_pmd *pmd, struct fdp__port *port, bool *eof)
{
    struct fdp_desc descs[FDP_DP_BATCH];
    uint32_t n;

    if (port->rx_eof) {
        *eof = true;
        n = 0;
    } else {
        n = port->class->rx(port, &pmd->cache, descs, FDP_DP_BATCH, eof);
        port->rx_eof = *eof;
    }
    if (n) {
        struct batch *b = &pmd->batch;
        pmd->in_port = port;
        pmd->in_no = port->port_no;
        batch_extract(pmd, b, descs, n);
        if (FDP_UNLIKELY(fdp__underlay_rx_wanted(pmd->dp->underlay,
                                                 port->port_no))) {
            batch_underlay(pmd, b);
            if (!b->n) {
                pmd_flush_tx(pmd);
                goto recycle;
            }
        }
        /* The version and the shape come from one snapshot, loaded once:
         * see "The snapshot" in the design. */
        pmd->view = pmd_snapshot(pmd);
        if (FDP_UNLIKELY(fdp__dp_snapshot_hook != NULL)) {
            fdp__dp_snapshot_hook(pmd->dp);
        }
        if (FDP_UNLIKELY(pmd->ports->tnl != NULL)) {
            batch_decap(pmd, b);
        }
        if (b->n) {
            batch_classify(pmd, b);
            batch_group(b);
            batch_execute(pmd, b);
        } else {
            pmd_flush_tx(pmd);  /* The underlay's answers, if any. */
        }
    }
recycle:
    if (port->class->recycle) {
        port->class->recycle(port, &pmd->cache);
    }
    return n;
}

/* ---------------------------------------------------------------------- */
/* Packet-outs.                                                            */

/* A packet-out is a controller's packet, run once through an action list
 * of its own as if it had arrived on its in_port: the pmd that next polls
 * (any of them: the queue is the datapath's) takes it from the queue,
 * copies it into a fresh frame, extracts its key, composes the actions
 * through the pipeline's current snapshot (fdp__pipeline_compose_view():
 * a resubmit looks its table up and counts what it hits; a group runs its
 * buckets), and runs the result through the executor as a one-packet
 * batch, continuations and all.  Its in_port is a port of the pmd's own
 * ('po_port'), so that nothing is counted as received on a real port
 * (Open vSwitch counts a packet-out nowhere but in the flows it hits),
 * with the real port's VLAN setup for NORMAL. */

static const struct fdp__port_class po_port_class = {
    .type = "packet-out",
    .rx = fdp__port_rx_none,
    .tx = fdp__port_tx_drop,
};

int
fdp_dp_packet_out(struct fdp_dp *dp, const void *frame, size_t len,
                  uint32_t in_port, const struct fdp_key *state,
                  const struct fdp_actions *actions)
{
    if (!len || !actions || in_port > UINT16_MAX) {
        return EINVAL;
    }
    if (len > dp->options.frame_size - FDP_DP_HEADROOM) {
        return EMSGSIZE;
    }
    if (!dp->pipeline) {
        /* A bare table has no tables to resubmit to or groups to run. */
        for (const struct fdp__action *a = fdp__actions_first(actions); a;
             a = fdp__actions_next(actions, a)) {
            if (a->type == FDP_ACT_RESUBMIT || a->type == FDP_ACT_GOTO_TABLE
                || a->type == FDP_ACT_GROUP || a->type == FDP_ACT_LEARN) {
                return EINVAL;
            }
        }
    }
    struct po_item it = {
        .in_port = in_port,
        .len = (uint32_t) len,
        .data = malloc(len),
        .actions = fdp_actions_clone(actions),
        .has_state = state != NULL,
    };
    if (state) {
        it.state = *state;
    }
    if (!it.data || !it.actions) {
        free(it.data);
        fdp_actions_destroy(it.actions);
        return ENOMEM;
    }
    memcpy(it.data, frame, len);

    struct po_queue *q = &dp->po;
    pthread_mutex_lock(&q->mutex);
    bool full = q->n >= PO_MAX;
    if (full) {
        q->n_dropped++;
    } else {
        q->items[(q->head + q->n) % PO_MAX] = it;
        __atomic_store_n(&q->n, q->n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&q->mutex);
    if (full) {
        free(it.data);
        fdp_actions_destroy(it.actions);
        return ENOBUFS;
    }
    return 0;
}

/* Runs packet-out 'it' (see above) on 'pmd', between polls. */
static void
po_run(struct fdp_dp_pmd *pmd, const struct po_item *it)
{
    struct fdp_dp *dp = pmd->dp;
    uint64_t frame = fdp__cache_get(&pmd->cache);

    if (frame == UINT64_MAX) {
        pthread_mutex_lock(&dp->po.mutex);
        dp->po.n_dropped++;
        pthread_mutex_unlock(&dp->po.mutex);
        return;
    }
    uint64_t addr = frame + FDP_DP_HEADROOM;
    struct fdp__frame_meta *meta = (void *) (dp->umem + frame);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    meta->ts_usec = (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    memcpy(dp->umem + addr, it->data, it->len);

    /* The in_port: a port of the pmd's own, with the real one's VLANs. */
    const struct fdp__port *real = find_port(pmd->ports, it->in_port);
    pmd->po_port = (struct fdp__port) {
        .class = &po_port_class,
        .dp = dp,
        .port_no = it->in_port,
        .vlan = real ? real->vlan : NULL,
    };
    pmd->in_port = &pmd->po_port;
    pmd->in_no = it->in_port;

    struct batch *b = &pmd->batch;
    struct fdp__pkt *p = &b->pkts[0];
    b->n = 1;
    b->released = false;
    b->sent[0] = false;
    b->flows[0] = NULL;
    p->data = dp->umem + addr;
    p->size = it->len;
    p->headroom = FDP_DP_HEADROOM - FDP__FRAME_META_SIZE;
    b->hashes[0] = fdp__packet_extract_hash(p->data, p->size, it->in_port,
                                            dp->emc_basis, &p->key,
                                            &p->layout);
    if (it->has_state) {
        /* The pipeline state the packet-out gave: every word after the
         * packet's (metadata, registers, ct and tunnel fields) and
         * pkt_mark. */
        memcpy(&p->key.w[FDP_KEY_PACKET_WORDS],
               &it->state.w[FDP_KEY_PACKET_WORDS],
               (FDP_KEY_WORDS - FDP_KEY_PACKET_WORDS) * sizeof p->key.w[0]);
        fdp__key_set(&p->key, FDP_F_PKT_MARK,
                     fdp__key_get(&it->state, FDP_F_PKT_MARK));
    }
    fdp__count_add(&pmd->counters.n_packet_outs, 1);

    const struct fdp_actions *actions = it->actions;
    pmd->view = pmd_snapshot(pmd);
    if (dp->pipeline) {
        struct fdp_pipeline_result *r = &pmd->results[0];
        if (fdp__pipeline_compose_view(dp->pipeline, pmd->view, &p->key,
                                       it->actions, r)) {
            fdp__cache_put(&pmd->cache, frame + FDP_DP_HEADROOM);
            pthread_mutex_lock(&dp->po.mutex);
            dp->po.n_dropped++;
            pthread_mutex_unlock(&dp->po.mutex);
            return;
        }
        /* The flows and groups the actions went through count the
         * packet, as a received packet's would. */
        int64_t now = batch_now_ms();
        for (size_t k = 0; k < r->n_steps; k++) {
            if (r->steps[k].rule) {
                fdp__counters_account_n(r->steps[k].rule->stats, 1, p->size,
                                        now, pmd->stats_shard);
            }
        }
        size_t n_gc;
        struct fdp__rule_counters *const *gc
            = fdp__pipeline_result_group_counters(r, &n_gc);
        for (size_t k = 0; k < n_gc; k++) {
            fdp__counters_account_n(gc[k], 1, p->size, now,
                                    pmd->stats_shard);
        }
        /* Every lookup that found nothing (a packet-out's lookups are
         * all resubmits'). */
        fdp_pipeline_account_misses(dp->pipeline, r->steps, r->n_steps,
                                    r->limit_dropped, 1);
        actions = r->actions;
    }
    struct flow_group g = { .flow = NULL, .n = 1, .n_bytes = p->size };
    g.pkts[0] = 0;
    group_run_actions(pmd, b, &g, actions, 0);
    batch_finish(pmd);
    b->n = 0;
}

/* Runs up to a batch of queued packet-outs; returns how many. */
static uint32_t
pmd_packet_outs(struct fdp_dp_pmd *pmd)
{
    struct po_queue *q = &pmd->dp->po;
    struct po_item items[FDP_DP_BATCH];
    uint32_t n;

    if (FDP_LIKELY(!__atomic_load_n(&q->n, __ATOMIC_ACQUIRE))
        || pthread_mutex_trylock(&q->mutex)) {
        return 0;
    }
    n = q->n < FDP_DP_BATCH ? q->n : FDP_DP_BATCH;
    for (uint32_t i = 0; i < n; i++) {
        items[i] = q->items[q->head];
        q->head = (q->head + 1) % PO_MAX;
    }
    __atomic_store_n(&q->n, q->n - n, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&q->mutex);

    for (uint32_t i = 0; i < n; i++) {
        po_run(pmd, &items[i]);
        free(items[i].data);
        fdp_actions_destroy(items[i].actions);
    }
    pmd->in_port = NULL;
    return n;
}

size_t
fdp_dp_pmd_poll(struct fdp_dp_pmd *pmd, bool *exhausted)
{
    struct fdp_dp *dp = pmd->dp;
    bool all_eof = true;
    size_t total = 0;

    fdp__rcu_read_lock();
    pmd->ports = FDP_RCU_GET(dp->ports);
    pmd->meter_now = 0;
    pmd->last_out_no = 0;       /* Never a port number. */
    pmd->last_txq = NULL;
    for (size_t i = 0; i < pmd->ports->n; i++) {
        struct fdp__port *port = pmd->ports->ports[i];
        if (port->rank % dp->options.n_pmds == pmd->id) {
            bool eof = false;
            total += pmd_poll_port(pmd, port, &eof);
            all_eof &= eof;
        }
    }
    /* The aging clock is looked at every 64 polls: an idle pmd polls
     * millions of times a second, a busy one thousands. */
    fdp__underlay_pmd_work(dp->underlay, underlay_emit, pmd,
                           (++pmd->underlay_tick & 63) == 0);
    if (pmd->n_txq) {
        pmd_flush_tx(pmd);
    }
    total += pmd_packet_outs(pmd);
    pmd->ports = NULL;
    fdp__rcu_read_unlock();
    if (exhausted) {
        *exhausted = all_eof && !total;
    }
    return total;
}
