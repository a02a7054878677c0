/*
 * RCU for flowdp (internal): liburcu's bulletproof flavour for grace
 * periods, and C11 atomics for publishing pointers.
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

#include <urcu-bp.h>

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

static inline void
fdp__rcu_read_lock(void)
{
    urcu_bp_read_lock();
}

static inline void
fdp__rcu_read_unlock(void)
{
    FDP_RCU_TSAN_RELEASE();
    urcu_bp_read_unlock();
}

/* Calls 'fn(head)' after a grace period, on liburcu's call_rcu thread. */
void fdp__rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *));

/* Waits until every read-side section that started before the call has
 * ended. */
void fdp__rcu_synchronize(void);

/* Waits for every deferred call made so far to have run. */
void fdp__rcu_barrier(void);

#endif /* FDP_RCU_H */
