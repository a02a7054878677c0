/*
 * RCU helpers (internal): see lib/rcu.h.
 */
#include <config.h>

#include "rcu.h"

#ifdef FDP_TSAN
char fdp__rcu_tsan_sync;
#endif

void
fdp__rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
    /* Everything the caller did to the object happens before the
     * callback, which acquires. */
    FDP_RCU_TSAN_RELEASE();
    urcu_bp_call_rcu(head, fn);
}

void
fdp__rcu_barrier(void)
{
    urcu_bp_barrier();
}

void
fdp__rcu_synchronize(void)
{
    urcu_bp_synchronize_rcu();
    FDP_RCU_TSAN_ACQUIRE();
}
