/* uid_cache.h -- lock-free two-way name<->UID cache, one instance per UID kind.
 *
 * The write path resolves metric names, tag keys and tag values on every data point from every
 * worker thread, so lookups must be O(1) and must not contend: readers take no lock and never
 * block. Writers (new UIDs, rename, delete, `dropcaches`) are rare and are serialised by a mutex
 * inside the cache.
 *
 * Design. Two open-addressing tables (linear probing, load factor <= 1/2) of atomic pointers to
 * immutable entries {name hash, id, name bytes}: one keyed by name, one by id. A put allocates one
 * entry and links it into both tables; replacing or removing only swaps a slot pointer, so a reader
 * sees either the old or the new entry, never a mix. A table that fills up is rebuilt into a new
 * array which is published with a single atomic store; readers still walking the old array finish
 * there. A lookup that overlaps a writer may see the state before or after that write.
 *
 * Reclamation rule. Unlinked entries and replaced tables are not freed at once: a reader may still
 * hold them. Each cache has an epoch and 64 cache-line-padded reader slots (a thread always uses
 * the same slot, chosen on its first lookup); a lookup increments its slot's counter for the
 * parity of the epoch it read, and decrements it when done. A writer tags what it unlinks with the
 * epoch it reads after unlinking, advances the epoch only when no reader is left in the parity of
 * epoch - 1, and frees an object once the epoch has advanced twice past its tag: the two advances
 * drain both parities, so every lookup that could have reached the object has finished.
 * Reclamation runs inside writer calls only; readers never free and never wait.
 *
 * Memory bound. Live memory is the entries (one per mapping, 32 bytes + name, shared by both
 * directions while linked in both) plus one array of 8-byte slots per direction. A table is
 * rebuilt when live + removed slots would pass half its capacity, at the smallest power of two
 * >= 2.5 x (live + 1), so right after a rebuild it holds < 5 slots per live key; removals do not
 * shrink it until the next rebuild (clear resets both to 16 slots).
 * Retired-but-unfreed memory is at most UID_CACHE_RETIRE_LIMIT bytes whenever no writer call is
 * in progress: a writer that would leave more pending waits (yielding the CPU) for in-flight
 * lookups to drain and frees it all. Since a lookup holds its slot for a bounded number of steps,
 * that wait is short; it is the only place a writer may spin. */
#ifndef OCT_UID_UID_CACHE_H
#define OCT_UID_UID_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* Most bytes of unlinked entries and old tables left pending when a writer call returns. */
#define UID_CACHE_RETIRE_LIMIT ((size_t)256 * 1024)

typedef struct uid_cache uid_cache_t;

/* New empty cache. Aborts on out-of-memory. */
uid_cache_t *uid_cache_new(void);

/* Frees the cache and every entry. No other call on 'c' may be running or follow.
 * NULL is a no-op. */
void uid_cache_free(uid_cache_t *c);

/* name -> id. Returns 1 and sets *id on a hit, 0 on a miss. 'name' (len bytes, may hold 0x00,
 * len may be 0) is borrowed. Lock-free and never blocks; safe concurrently with every other call
 * except uid_cache_free. Not async-signal-safe. */
int uid_cache_get_id(uid_cache_t *c, const uint8_t *name, size_t len, uint64_t *id);

/* id -> name, copied into buf (cap bytes; buf may be NULL when cap is 0). Returns the name length
 * (>= 0) on a hit (if it is > cap, only the first cap bytes were copied: call again with a bigger
 * buffer), -1 on a miss. Lock-free and never blocks, as uid_cache_get_id. */
long uid_cache_get_name(uid_cache_t *c, uint64_t id, uint8_t *buf, size_t cap);

/* Maps name -> id and id -> name, replacing whatever either key mapped to before (the other
 * direction of a replaced mapping is left alone: rename is put(new, id) then remove_name(old)).
 * 'name' is copied. May block on the writer mutex and, see above, on in-flight lookups. */
void uid_cache_put(uid_cache_t *c, const uint8_t *name, size_t len, uint64_t id);

/* Removes the name -> id mapping of 'name' only; the id -> name direction stays.
 * No-op if absent. */
void uid_cache_remove_name(uid_cache_t *c, const uint8_t *name, size_t len);

/* Removes the id -> name mapping of 'id' only; the name -> id direction stays. No-op if absent. */
void uid_cache_remove_id(uid_cache_t *c, uint64_t id);

/* Removes every mapping in both directions (`dropcaches`). */
void uid_cache_clear(uid_cache_t *c);

/* Number of name -> id mappings; exact when no writer runs, approximate otherwise. */
size_t uid_cache_size(uid_cache_t *c);

/* Lookups since uid_cache_new, for the stats (tsd.uid.cache-hit / cache-miss): every
 * uid_cache_get_id and uid_cache_get_name call that found its key (*hits) or did not (*misses),
 * both directions together. uid_cache_clear does not reset them. Each count is exact once the
 * lookups it covers have returned; while lookups run the sum may lag them. Any thread. */
void uid_cache_lookups(uid_cache_t *c, uint64_t *hits, uint64_t *misses);

/* The name hash the cache uses (64-bit, non-cryptographic, wyhash-like multiply-fold). Exposed for
 * peers that want the same distribution, e.g. benchmarks. Any seed is fine; equal inputs and seed
 * give equal results within one build. */
uint64_t uid_cache_hash(const uint8_t *p, size_t len, uint64_t seed);

/* ---- Diagnostics and test hooks: not for production paths. ---- */

/* Bytes retired but not yet freed (taken under the writer mutex). */
size_t uid_cache_pending_bytes(uid_cache_t *c);

/* Hold / release this thread's reader slot as a lookup does, to let a test observe deferred
 * reclamation. Between the two, the same thread must not call a writer function on 'c' (the
 * writer could wait for this very reader). enter returns a token to pass to exit. */
unsigned uid_cache__reader_enter(uid_cache_t *c);
void uid_cache__reader_exit(uid_cache_t *c, unsigned token);

#endif
