/*
 * RCU helpers (internal): see lib/rcu.h.
 */
#include <config.h>

#include "lib/rcu.h"

#include <pthread.h>
#include <stdlib.h>

#ifdef FDP_TSAN
char fdp__rcu_tsan_sync;
#endif

__thread bool fdp__rcu_registered;

static pthread_key_t unregister_key;
static pthread_once_t unregister_once = PTHREAD_ONCE_INIT;

static void
unregister_thread(void *arg)
{
    (void) arg;
    urcu_memb_unregister_thread();
    fdp__rcu_registered = false;
}

static void
unregister_key_init(void)
{
    if (pthread_key_create(&unregister_key, unregister_thread)) {
        abort();            /* Out of keys at start-up: nothing works. */
    }
}

void
fdp__rcu_register(void)
{
    pthread_once(&unregister_once, unregister_key_init);
    urcu_memb_register_thread();
    fdp__rcu_registered = true;
    /* Any non-NULL value: the destructor runs when the thread exits. */
    pthread_setspecific(unregister_key, &unregister_key);
}

void
fdp__rcu_defer(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
    /* Everything the caller did to the object happens before the
     * callback, which acquires. */
    if (!fdp__rcu_registered) {
        fdp__rcu_register();
    }
    FDP_RCU_TSAN_RELEASE();
    urcu_memb_call_rcu(head, fn);
}

void
fdp__rcu_barrier(void)
{
    urcu_memb_barrier();
}

void
fdp__rcu_synchronize(void)
{
    urcu_memb_synchronize_rcu();
    FDP_RCU_TSAN_ACQUIRE();
}
