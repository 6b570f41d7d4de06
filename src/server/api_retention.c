/* api_retention.c -- octsdb's operator endpoint for retention
 * (docs/retention.md), beside the ones of api_admin.c:
 *
 *   POST /api/octsdb/expire[?dry_run]    200 {"dryRun":B,"enabled":B,
 *                                        "partitions":{"raw":N,"rollup":N}}: one pass
 *                                        of tsdb_retention_run now (dry_run: only
 *                                        counts what it would drop)
 *
 * The TSD runs the same pass by itself every tsd.storage.retention.interval_ms;
 * this one is for `octsdb expire` and for an operator who wants the space
 * now. It runs on the handler thread that took the request; a pass already
 * running (the background's) makes it wait for that one first. */
#include "server/api_int.h"
#include "common/clock.h"
#include "tsdb/retention.h"

void api_octsdb_expire(api_call_t *c)
{
    int dry = api_flag(c, "dry_run");
    tsdb_retention_report_t rep;
    oct_errbuf_t eb;
    oct_errbuf_clear(&eb);
    int rc = tsdb_retention_run(c->tsd->db, oct_clock_wall_ms(), dry, &rep, &eb);
    if (rc) {
        http_error(c->resp, 500, "Expiry failed", eb.msg[0] ? eb.msg : oct_strerror(rc));
        return;
    }
    json_writer_t jw;
    api_json_begin(c, &jw);
    json_w_obj_begin(&jw);
    json_w_key(&jw, "dryRun");
    json_w_bool(&jw, dry);
    json_w_key(&jw, "enabled");
    json_w_bool(&jw, tsdb_retention_enabled(c->tsd->db));
    json_w_key(&jw, "partitions");
    json_w_obj_begin(&jw);
    json_w_key(&jw, "raw");
    json_w_uint(&jw, rep.raw_parts);
    json_w_key(&jw, "rollup");
    json_w_uint(&jw, rep.rollup_parts);
    json_w_obj_end(&jw);
    json_w_obj_end(&jw);
    c->resp->status = 200;
}
