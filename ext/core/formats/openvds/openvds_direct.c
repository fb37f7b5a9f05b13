/* Objects a transaction put straight at their chunk keys (vds_plan_chunk.direct), and
 * how the ones it does not publish are taken back. A new chunk needs no staging: while
 * no committed entry names it, no reader looks at its key, so its object goes there
 * create-only (one request instead of a staged put, a copy and a delete) and the pages
 * publish it at COMMIT like any other. Such an object carries its transaction's id
 * (vdsqltx metadata), so that vds_audit and vds_repair tell it from an object OpenVDS
 * lost the entry of: it is never adopted, and once older than stage_ttl vds_repair
 * deletes it (what a killed writer leaves).
 *
 * Taking one back is not private, as deleting a staged object is: once another writer
 * has committed the chunk, the key holds that writer's object. So it happens under the
 * layer's commit record (vds_commit_exclusive: no commit is under way), against the
 * pages read then: a key whose entry is still unwritten can hold only the object this
 * transaction put there (any other writer's create-only put was refused, and a commit
 * of the chunk writes its entry); anything else is deleted only when a HEAD shows it is
 * this transaction's and no entry names it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "openvds_objects.h"
#include "openvds_record.h"

typedef struct clean_job {
  vd_ctx *ctx;
  const char *url, *layer, *tx;
  const vds_plan_chunk *plan;
  int n;
} clean_job;

/* Whether the object a HEAD found is this transaction's and no entry (old) names it. */
static int ours(const vd_objinfo *info, const char *tx, const unsigned char *old) {
  const char *t = vd_objinfo_meta(info, "vdsqltx"), *m = vd_objinfo_meta(info, "vdschunkmetadata");
  if (!t || strcmp(t, tx) != 0) return 0;
  vds_entry e;
  vds_entry_decode(old, 8, &e);
  uint64_t h = 0;
  return !(e.status != VDS_S_UNWRITTEN && m && vds_meta_decode(m, strlen(m), 8, &h, NULL) == 0 && h == e.hash);
}

static vd_code clean_locked(void *arg, vds_fence_fn fence, void *fence_arg, vd_err *err) {
  clean_job *j = arg;
  fresh f;
  vd_code rc = fresh_open(j->ctx, j->url, j->layer, &f, err);
  if (rc) return rc;
  vd_getreq *g = calloc(j->n + 1, sizeof *g);
  vd_delreq *d = calloc(j->n + 1, sizeof *d);
  unsigned char (*old)[28] = calloc(j->n + 1, sizeof *old);
  int *gi = calloc(j->n + 1, sizeof *gi), ng = 0, nd = 0; /* gi: the plan chunk of each HEAD */
  if (!g || !d || !old || !gi) rc = vd_nomem(err);
  /* the entries as they are now: read through vds_pages_set (fresh pages, never the
   * cache); the pages are discarded, never written */
  for (int i = 0; i < j->n && !rc; i++)
    if (!(rc = vds_pages_set(f.pages, j->plan[i].chunk, j->plan[i].raw, 0, err)))
      vds_pages_base_entry(f.pages, j->plan[i].chunk, old[i]);
  for (int i = 0; i < j->n && !rc; i++) {
    const vds_plan_chunk *x = &j->plan[i];
    vds_entry e;
    vds_entry_decode(old[i], 8, &e);
    char *u = vds_chunk_key_url(j->url, j->layer, x->chunk);
    if (!u) {
      rc = vd_nomem(err);
      break;
    }
    if (x->direct && e.status == VDS_S_UNWRITTEN) { /* the key holds this transaction's object */
      d[nd++].url = u;
    } else {
      g[ng].url = u;
      g[ng].head = 1;
      gi[ng++] = i;
    }
  }
  if (!rc && ng) vd_get_many(j->ctx, g, ng);
  for (int k = 0; k < ng && !rc; k++) {
    if (g[k].rc == VD_NOTFOUND) continue;
    if (g[k].rc) rc = vd_fail(err, g[k].rc, "%s", g[k].err.msg);
    else if (ours(&g[k].info, j->tx, old[gi[k]])) d[nd++].url = g[k].url, g[k].url = NULL;
  }
  /* a writer that lost the record by now (paused past its lease) deletes nothing */
  if (!rc && nd) rc = fence(fence_arg, err);
  if (!rc && nd) vd_delete_many(j->ctx, d, nd);
  for (int k = 0; k < nd; k++) {
    if (!rc && d[k].rc) rc = vd_fail(err, d[k].rc, "%s", d[k].err.msg);
    free((char *)d[k].url);
  }
  for (int k = 0; k < ng; k++) {
    free((char *)g[k].url);
    vd_buf_free(&g[k].body);
    vd_objinfo_free(&g[k].info);
  }
  free(g);
  free(d);
  free(old);
  free(gi);
  vds_pages_discard(f.pages);
  fresh_close(&f);
  return rc;
}

vd_code vds_direct_clean(vd_ctx *ctx, const char *url, const char *layer, const char *tx, const vds_plan_chunk *plan,
                         int n, vd_err *err) {
  if (!n) return VD_OK;
  clean_job j = {ctx, url, layer, tx, plan, n};
  return vds_commit_exclusive(ctx, url, layer, clean_locked, &j, err);
}
