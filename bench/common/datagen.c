/* datagen.c -- the seeded fleet generator (see datagen.h).
 *
 * The class mix of a fleet is fixed by per-series hashing: about 30% 2-decimal
 * gauges, 10% 1-decimal, 5% 4-decimal, 10% integer gauges, 25% counters and
 * 20% mostly-constant series; counters count Poisson arrivals at log-uniform
 * rates of 0.01 to 10^4 per second; 80% report every 10 s, 20% every second; 15%
 * carry millisecond timestamps. Whole-second series slip by +-1 s (10 s
 * cadence) or miss a scrape (1 s cadence) at 3% of the points. Gauges are
 * rounded with round(x * 10^d) / 10^d, which is the double that strtod()
 * returns for the printed decimal. */
#include "common/datagen.h"

#include <math.h>

uint64_t datagen_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double urand(uint64_t *st)
{
    return (double)(datagen_rand(st) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller; one of the pair is dropped for simplicity). */
static double nrand(uint64_t *st)
{
    double u = urand(st), v = urand(st);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * 3.14159265358979323846 * v);
}

const char *datagen_class_name(datagen_class_t cls)
{
    static const char *const names[DATAGEN_N_CLASSES] = {
        "gauge_d2", "gauge_d1", "gauge_d4", "int_gauge", "counter", "const",
    };
    return (unsigned)cls < DATAGEN_N_CLASSES ? names[cls] : "?";
}

void datagen_series_init(datagen_series_t *s, uint64_t seed, uint64_t idx, int64_t start_ms)
{
    uint64_t h = seed ^ (idx * 0xD1B54A32D192ED03ull);
    datagen_rand(&h);
    s->rng = datagen_rand(&h);
    unsigned pick = (unsigned)(datagen_rand(&h) % 100);
    s->cls = pick < 30   ? DATAGEN_GAUGE_D2
             : pick < 40 ? DATAGEN_GAUGE_D1
             : pick < 45 ? DATAGEN_GAUGE_D4
             : pick < 55 ? DATAGEN_INT_GAUGE
             : pick < 80 ? DATAGEN_COUNTER
                         : DATAGEN_CONST;
    s->interval_ms = datagen_rand(&h) % 100 < 80 ? 10000 : 1000;
    s->ms_precision = datagen_rand(&h) % 100 < 15;
    s->decimals = s->cls == DATAGEN_GAUGE_D1 ? 1 : s->cls == DATAGEN_GAUGE_D4 ? 4 : 2;
    /* First slot at or after start_ms, on the series' phase. */
    int64_t phase = (int64_t)(datagen_rand(&h) % (uint64_t)(s->interval_ms / 1000)) * 1000;
    int64_t first = start_ms - ((start_ms % s->interval_ms) + s->interval_ms) % s->interval_ms;
    first += phase;
    while (first < start_ms)
        first += s->interval_ms;
    s->slot_ms = first;
    s->last_ms = INT64_MIN;
    double mag = pow(10.0, (double)(datagen_rand(&h) % 3)); /* 1, 10 or 100 */
    switch (s->cls) {
    case DATAGEN_GAUGE_D4:
        s->level = urand(&h);
        s->step = 0.001 + 0.01 * urand(&h);
        break;
    case DATAGEN_GAUGE_D1:
    case DATAGEN_GAUGE_D2:
        s->level = 100.0 * urand(&h) * mag;
        s->step = (0.02 + 0.2 * urand(&h)) * mag;
        break;
    case DATAGEN_INT_GAUGE:
        s->ival = (int64_t)(datagen_rand(&h) % 5000);
        s->step = 0.5 + 2.0 * urand(&h);
        break;
    case DATAGEN_COUNTER:
        s->ival = (int64_t)(datagen_rand(&h) % 1000000000ull);
        /* log-uniform rate: 0.01 .. 10000 events per second */
        s->step = pow(10.0, 6.0 * urand(&h) - 2.0) * (double)s->interval_ms / 1000.0;
        break;
    default:
        s->ival = datagen_rand(&h) % 3 ? 1 : (int64_t)(datagen_rand(&h) % 65536);
        s->level = (double)s->ival;
        break;
    }
}

static double round_dec(double x, unsigned d)
{
    double p = d == 1 ? 10.0 : d == 2 ? 100.0 : 10000.0;
    return round(x * p) / p;
}

void datagen_series_next(datagen_series_t *s, codec_point_t *pt)
{
    int64_t ts = s->slot_ms;
    s->slot_ms += s->interval_ms;
    if (s->ms_precision) {
        ts += (int64_t)(datagen_rand(&s->rng) % 11) - 5; /* scrape jitter +-5 ms */
    } else if (datagen_rand(&s->rng) % 100 < 3) {
        if (s->interval_ms > 1000) {
            ts += datagen_rand(&s->rng) & 1 ? 1000 : -1000; /* late or early second */
        } else {
            ts = s->slot_ms; /* a missed scrape: a one-second gap */
            s->slot_ms += s->interval_ms;
        }
    }
    if (ts <= s->last_ms) ts = s->last_ms + 1;
    s->last_ms = ts;
    pt->ts_ms = ts;

    switch (s->cls) {
    case DATAGEN_GAUGE_D2:
    case DATAGEN_GAUGE_D1:
    case DATAGEN_GAUGE_D4:
        s->level += s->step * nrand(&s->rng);
        if (s->level < 0) s->level = -s->level; /* most gauges are non-negative */
        pt->is_float = 1;
        pt->val.f = round_dec(s->level, s->decimals);
        break;
    case DATAGEN_INT_GAUGE:
        if (urand(&s->rng) < 0.3) s->ival += (int64_t)lround(s->step * nrand(&s->rng));
        if (s->ival < 0) s->ival = 0;
        pt->is_float = 0;
        pt->val.i = s->ival;
        break;
    case DATAGEN_COUNTER:
        if (datagen_rand(&s->rng) % 5000 == 0)
            s->ival = 0; /* process restart */
        else             /* Poisson arrivals, normal approximation */
            s->ival += (int64_t)fmax(0.0, round(s->step + sqrt(s->step) * nrand(&s->rng)));
        pt->is_float = 0;
        pt->val.i = s->ival;
        break;
    default:
        if (datagen_rand(&s->rng) % 1000 < 2) s->ival = s->ival == 1 ? 0 : 1; /* a flap */
        pt->is_float = 0;
        pt->val.i = s->ival;
        break;
    }
}

size_t datagen_series_hour(uint64_t seed, uint64_t idx, int64_t hour_start_ms, codec_point_t *out,
                           size_t cap)
{
    datagen_series_t s;
    size_t n = 0;
    datagen_series_init(&s, seed, idx, hour_start_ms);
    while (n < cap && n < DATAGEN_MAX_POINTS_PER_HOUR) {
        codec_point_t pt;
        datagen_series_next(&s, &pt);
        if (pt.ts_ms >= hour_start_ms + 3600000) break;
        if (pt.ts_ms < hour_start_ms) continue; /* early slip before the hour */
        out[n++] = pt;
    }
    return n;
}
