/*
 * The datapath's expiry thread for its connection tracker (internal to
 * the datapath).  The theory of operation is at the top of
 * datapath/ct-sweeper.c.
 *
 * Thread-safety: start and stop are control functions, called by the
 * datapath's creator and destroyer; the thread itself only calls the
 * tracker's reclaimer (fdp__ct_sweep()), which is safe against the
 * packet path and the tracker's control functions.
 */
#ifndef FDP_CT_SWEEPER_H
#define FDP_CT_SWEEPER_H 1

#include <stdint.h>

struct fdp__ct;
struct fdp__ct_sweeper;

/* The clock of the datapath's tracker: monotonic milliseconds
 * (CLOCK_MONOTONIC_COARSE, a vDSO read).  Pmds pass it to
 * fdp__ct_execute(), the sweeper to fdp__ct_sweep(); control code that
 * dumps the tracker (fdp__ct_dump()) must use it too. */
uint64_t fdp__ct_clock_ms(void);

/* Starts a thread that expires the connections of 'ct' in the background
 * until fdp__ct_sweeper_stop().  Returns 0, or ENOMEM or EAGAIN (no
 * thread), with '*sweeperp' NULL. */
int fdp__ct_sweeper_start(struct fdp__ct *ct,
                          struct fdp__ct_sweeper **sweeperp);

/* Wakes the thread, waits for it to end (at most the length of one
 * slice, FDP__CT_SWEEP_BUDGET records, since it checks for the stop
 * between slices and never sleeps through a stop) and frees it.  NULL
 * is fine. */
void fdp__ct_sweeper_stop(struct fdp__ct_sweeper *);

/* Full passes over the table the thread has completed and connections
 * it removed, for tests and statistics.  Any thread. */
uint64_t fdp__ct_sweeper_passes(const struct fdp__ct_sweeper *);
uint64_t fdp__ct_sweeper_removed(const struct fdp__ct_sweeper *);

/* Records examined per fdp__ct_sweep() call; the shortest pause, in
 * milliseconds, between the end of one full pass over the table and the
 * start of the next; and the most of its time the thread spends
 * sweeping, as a divisor (the pause is at least this many times the
 * pass's length).  See the essay in ct-sweeper.c for the reasons. */
#define FDP__CT_SWEEP_BUDGET 16384
#define FDP__CT_SWEEP_INTERVAL_MS 1000
#define FDP__CT_SWEEP_DUTY_INV 10

#endif /* FDP_CT_SWEEPER_H */
