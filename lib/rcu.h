/*
 * RCU for flowdp (internal): liburcu's membarrier flavour for grace
 * periods, and C11 atomics for publishing pointers.
 *
 * The flavour: a reader of the membarrier flavour ("memb") wakes a
 * writer waiting for a grace period when it leaves its read-side
 * section, so a grace period lasts about as long as the longest section
 * in progress.  The bulletproof one ("bp"), which needs no registration,
 * polls instead and sleeps 10 ms between polls once a section outlasts a
 * few microseconds, so with readers holding sections of tens of
 * microseconds a bp grace period costs milliseconds where memb's costs
 * about the longest section (figures: docs/PERFORMANCE.md, "Figures
 * behind design choices").  A datapath holds its section for a batch of
 * packets, so under traffic every removal waited 10 ms.  memb
 * wants each thread that reads or defers registered: the first
 * fdp__rcu_read_lock() or fdp__rcu_defer() of a thread registers it, and
 * the thread's exit unregisters it (a pthread key), so that callers of
 * the library need do nothing.
 *
 * Pointers are published with a release store and read with an acquire
 * load (plain moves on x86) rather than liburcu's rcu_assign_pointer and
 * rcu_dereference, so that ThreadSanitizer understands the ordering.  For
 * the same reason every read-side unlock releases, and every reclamation
 * acquires, a shadow variable under TSan: that is the happens-before edge
 * a grace period provides, which TSan cannot see inside liburcu.
 */
#ifndef FDP_RCU_H
#define FDP_RCU_H 1

#include <stdbool.h>
#include <urcu/urcu-memb.h>

#define FDP_RCU_GET(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define FDP_RCU_SET(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#if defined(__SANITIZE_THREAD__)
#define FDP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FDP_TSAN 1
#endif
#endif

#ifdef FDP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char fdp__rcu_tsan_sync;
#define FDP_RCU_TSAN_RELEASE() __tsan_release(&fdp__rcu_tsan_sync)
#define FDP_RCU_TSAN_ACQUIRE() __tsan_acquire(&fdp__rcu_tsan_sync)
#else
#define FDP_RCU_TSAN_RELEASE() ((void) 0)
#define FDP_RCU_TSAN_ACQUIRE() ((void) 0)
#endif

/* True once this thread is registered with liburcu. */
extern __thread bool fdp__rcu_registered;

/* Registers this thread (and unregisters it when it exits). */
void fdp__rcu_register(void);

static inline void
fdp__rcu_read_lock(void)
{
    if (__builtin_expect(!fdp__rcu_registered, 0)) {
        fdp__rcu_register();
    }
    urcu_memb_read_lock();
}

static inline void
fdp__rcu_read_unlock(void)
{
    FDP_RCU_TSAN_RELEASE();
    urcu_memb_read_unlock();
}

/* Calls 'fn(head)' after a grace period, on liburcu's call_rcu thread. */
void fdp__rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *));

/* Waits until every read-side section that started before the call has
 * ended. */
void fdp__rcu_synchronize(void);

/* Waits for every deferred call made so far to have run. */
void fdp__rcu_barrier(void);

#endif /* FDP_RCU_H */
