/* head_lock.c -- the slow paths of a series' 4-byte head lock (series.h,
 * tw_lock_t): a futex word with three states, after Drepper's "Futexes Are
 * Tricky" (mutex 3): a contended lock marks the word 2 and sleeps; an
 * unlock that finds 2 wakes one sleeper, which marks it 2 again (others
 * may still sleep). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tsdb/series.h"

void tw_lock_wait(tw_lock_t *l)
{
    /* a short spin first: a head insert holds the lock for well under a
     * microsecond, a sleep and wake-up costs two system calls */
    for (int i = 0; i < 64; i++) {
        uint32_t z = 0;
        if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->v, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->v, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 2, NULL, NULL, 0);
}

void tw_lock_wake(tw_lock_t *l)
{
    syscall(SYS_futex, &l->v, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}
