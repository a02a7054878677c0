/*
 * flowdpd's durable flow table (--db FILE): an append-only journal of
 * checksummed records, each a JSON flow operation, compacted into a
 * snapshot.  See journal.c.
 *
 * Thread-safety: a journal belongs to one thread.
 */
#ifndef FDP_JOURNAL_H
#define FDP_JOURNAL_H 1

#include <jansson.h>
#include <stddef.h>

struct journal;

/* Opens or creates the journal at 'path' and calls 'replay' with each
 * intact record, oldest first ('replay' returns 0, or an errno value to
 * stop: the record and what follows are then treated as corrupt).  A
 * torn or corrupt tail is never replayed: it is moved to PATH.corrupt
 * (or PATH.corrupt.N, the first free name: an earlier one is never
 * overwritten), the file is cut before it, and '*warningp' says what was
 * dropped and where (the caller frees it).  A file that does not begin
 * with a record is not a journal: it is refused untouched (EINVAL).
 * Returns 0 or an errno value with a message in '*errorp'.
 *
 * The caller keeps other processes away from 'path' (flowdpd holds
 * PATH.lock for its life). */
int journal_open(const char *path, int (*replay)(json_t *op, void *aux),
                 void *aux, struct journal **, char **errorp,
                 char **warningp);

/* Appends 'op' and waits until it is on disk (fdatasync).  Returns 0 or
 * an errno value with a message; on failure the file is cut back to its
 * previous length. */
int journal_append(struct journal *, const json_t *op, char **errorp);

/* Replaces the journal by one record, 'snapshot', atomically: written to
 * PATH.tmp, synced, renamed over PATH, directory synced. */
int journal_compact(struct journal *, const json_t *snapshot,
                    char **errorp);

/* Bytes in the journal now, and after the last compaction. */
size_t journal_size(const struct journal *);
size_t journal_base_size(const struct journal *);

void journal_close(struct journal *);

#endif /* FDP_JOURNAL_H */
