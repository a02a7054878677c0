/*
 * The MAC learning table (the forwarding database, "fdb") of NORMAL
 * (internal to the datapath).  The theory of operation is at the top of
 * datapath/mac-learning.c.
 *
 * Thread-safety, by class:
 *   Lookups (fdp__fdb_lookup(), fdp__fdb_note(), fdp__fdb_touch(),
 *     fdp__fdb_now()): any thread, without locks, inside an RCU read-side
 *     section (the table is freed after a grace period when it is
 *     replaced).  These never change which entries the table holds.
 *   Writer (fdp__fdb_run(), fdp__fdb_flush(), fdp__fdb_set_max(),
 *     fdp__fdb_set_aging(), fdp__fdb_warp(), fdp__fdb_dump()): under the
 *     fdb's mutex, taken inside; any thread, one at a time.  The fdb's
 *     own thread (fdp__fdb_start()) runs the writer every millisecond
 *     while the pmds note addresses, up to every 64 ms while idle.
 */
#ifndef FDP_MAC_LEARNING_H
#define FDP_MAC_LEARNING_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdp__fdb;

/* Open vSwitch's defaults (vswitchd's other_config:mac-aging-time and
 * mac-table-size) and bounds. */
#define FDP__FDB_AGING_DEFAULT 300      /* Seconds. */
#define FDP__FDB_AGING_MIN 1
#define FDP__FDB_AGING_MAX 86400
#define FDP__FDB_SIZE_DEFAULT 8192      /* Entries. */
#define FDP__FDB_SIZE_MIN 16
#define FDP__FDB_SIZE_MAX (1u << 22)

/* One learned address, as a dump gives it. */
struct fdp__fdb_entry {
    uint64_t mac;               /* 48 bits, dl_src as a number. */
    uint16_t vlan;              /* 0..4095. */
    uint32_t port;
    uint32_t age;               /* Seconds since last seen. */
};

/* What the table has done, for fdb/stats-show and tests. */
struct fdp__fdb_stats {
    uint64_t n_entries;
    uint64_t max_entries;
    uint32_t aging;             /* Seconds. */
    uint64_t n_learned;         /* New entries. */
    uint64_t n_moved;           /* Entries whose port changed. */
    uint64_t n_expired;         /* Entries aged out. */
    uint64_t n_evicted;         /* Entries pushed out by a full table. */
    uint64_t n_notes_dropped;   /* Notes refused by a full queue. */
};

/* Creates an empty table of at most 'max_entries' entries that forgets an
 * address 'aging' seconds after it was last seen.  Returns 0, EINVAL (a
 * value out of the bounds above) or ENOMEM. */
int fdp__fdb_create(uint32_t max_entries, uint32_t aging,
                    struct fdp__fdb **fdbp);

/* Stops the fdb's thread if it has one and frees the table.  NULL is
 * fine.  No lookup may be in progress. */
void fdp__fdb_destroy(struct fdp__fdb *);

/* Starts the thread that applies notes and ages entries (every
 * millisecond while there are notes, up to every 64 ms while there are
 * none) until fdp__fdb_destroy().  Returns 0 or EAGAIN. */
int fdp__fdb_start(struct fdp__fdb *);

/* Lookups.  'now' is fdp__fdb_now(): whole seconds of the fdb's clock. */
uint32_t fdp__fdb_now(const struct fdp__fdb *);

/* The port that 'mac' on 'vlan' was last seen on: true and '*port', or
 * false if the table does not know it. */
bool fdp__fdb_lookup(const struct fdp__fdb *, uint64_t mac, uint16_t vlan,
                     uint32_t *port);

/* Prefetches the line where 'mac' on 'vlan' would be found first. */
void fdp__fdb_prefetch(const struct fdp__fdb *, uint64_t mac, uint16_t vlan);

/* What NORMAL does with a packet's source: if the table already says
 * 'mac' on 'vlan' is on 'port', marks the entry seen at 'now' (a store
 * only when the second changed) and returns true; otherwise queues a
 * note for the writer, which learns or moves the entry, and returns false
 * (the note may be dropped, and counted, if the queue is full). */
bool fdp__fdb_learn(struct fdp__fdb *, uint64_t mac, uint16_t vlan,
                    uint32_t port, uint32_t now);

/* Writer.  Applies the queued notes and expires the entries not seen for
 * the aging time, at time 'now' (seconds; tests pass their own clock, the
 * thread fdp__fdb_now()).  Returns the number of changes made. */
size_t fdp__fdb_run(struct fdp__fdb *, uint32_t now);

/* fdp__fdb_run() at the fdb's own clock: applies what the pmds noted so
 * far now, rather than within the thread's next millisecond. */
void fdp__fdb_sync(struct fdp__fdb *);

/* Forgets every entry, or with 'port' nonzero only those on 'port'
 * (when a port goes away or changes VLANs). */
void fdp__fdb_flush(struct fdp__fdb *, uint32_t port);

/* Sets the bound on the number of entries (resizes the table, keeping
 * the most recently seen) or the aging time.  Returns 0, EINVAL or
 * ENOMEM (nothing changed). */
int fdp__fdb_set_max(struct fdp__fdb *, uint32_t max_entries);
int fdp__fdb_set_aging(struct fdp__fdb *, uint32_t aging);

/* Moves the fdb's clock 'seconds' ahead of the system's (Open vSwitch's
 * time/warp, for tests of aging), then runs the writer once. */
void fdp__fdb_warp(struct fdp__fdb *, uint32_t seconds);

/* Copies up to 'max' entries, least recently seen first as Open vSwitch's
 * fdb/show lists them, into 'entries' (may be NULL if 'max' is 0).
 * Returns the number of entries in the table. */
size_t fdp__fdb_dump(struct fdp__fdb *, struct fdp__fdb_entry *entries,
                     size_t max);

void fdp__fdb_get_stats(struct fdp__fdb *, struct fdp__fdb_stats *);

#endif /* FDP_MAC_LEARNING_H */
