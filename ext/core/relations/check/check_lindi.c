/* The LINDI check (docs/check.md#lindi), both forms: for an archive, the index against
 * the tar headers; for both, every lindi.json ref (internal ranges against the index,
 * external URLs with one HEAD per distinct URL, in parallel), the Zarr metadata, the
 * chunk keys each .zarray implies and the size of raw chunks (check_lindi_zarr.c). All
 * rows are found at open; next hands them out. No chunk data is read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"
#include "check_lindi.h"
#include "formats/lindi/lindi_refs.h"
#include "formats/tar/tar_scan.h"
#include "store/store.h"

/* A walk failure that is no finding ends the check; any other is one row. */
static vd_code finding(lc_state *r, vd_code rc, const char *part, const char *item, vd_err *err) {
  if (vc_fatal(rc)) return rc;
  char msg[sizeof err->msg];
  snprintf(msg, sizeof msg, "%s", err->msg);
  vd_err_clear(err);
  return lc_add(r, VC_MALFORMED, part, item, err, "%s", msg);
}

/* --- the index against the tar headers --- */

typedef struct {
  int hit;             /* a header at the offset the index gives */
  int64_t o, d, s;     /* else the first header of that name elsewhere (o -1: none) */
} seen_t;

static vd_code headers(lc_state *r, const lindi_index *ix, const vd_blob *prefix, vd_err *err) {
  seen_t *seen = malloc((size_t)(ix->n ? ix->n : 1) * sizeof *seen);
  if (!seen) return vd_nomem(err);
  for (int i = 0; i < ix->n; i++) seen[i] = (seen_t){0, -1, -1, -1};
  tar_scan *s = NULL;
  vd_code rc = tar_scan_open_at(r->ctx, r->url, prefix->data, prefix->len, &s, err);
  int whole = 0;
  while (!rc) {
    if (s->done) {
      whole = 1;
      break;
    }
    if (!s->h.checksum_ok) {
      rc = lc_add(r, VC_MALFORMED, s->name, NULL, err, "%s: the tar header at byte %lld has a wrong checksum; the "
                  "headers after it are not walked", r->where, (long long)s->off);
      break;
    }
    int ext = s->h.type && strchr("xXgLKAV", s->h.type);
    const lindi_file *f = ext ? NULL : lindi_find(ix, s->name);
    if (ext || strncmp(s->name, ".trash/", 7) == 0) {
      /* extended headers belong to the member after them; trash is unlisted by design */
    } else if (!f) {
      rc = lc_add(r, VC_ORPHAN, s->name, NULL, err, "%s: a tar header at byte %lld (%lld bytes) that %s does not list",
                  r->where, (long long)s->off, (long long)s->size, LINDI_INDEX_NAME);
    } else if (f->o == s->off) {
      seen[f - ix->files].hit = 1;
      if (f->d != s->data_off || f->s != s->size)
        rc = lc_add(r, VC_MISMATCH, s->name, NULL, err,
                    "%s: %s gives data at byte %lld, %lld bytes; the tar header at byte %lld, data at %lld, %lld bytes",
                    r->where, LINDI_INDEX_NAME, (long long)f->d, (long long)f->s, (long long)s->off,
                    (long long)s->data_off, (long long)s->size);
    } else if (seen[f - ix->files].o < 0) {
      seen[f - ix->files] = (seen_t){0, s->off, s->data_off, s->size};
    }
    if (!rc) rc = tar_scan_next(s, err);
  }
  tar_scan_close(s);
  if (rc && !vc_fatal(rc)) rc = finding(r, rc, NULL, "tar headers", err);
  /* a walk cut short says nothing of the members after it, but those listed past the
   * archive's end are missing all the same */
  for (int i = 0; !rc && i < ix->n; i++) {
    const lindi_file *f = &ix->files[i];
    if (!whole && !seen[i].hit && r->size >= 0 && f->o >= r->size)
      rc = lc_add(r, VC_MISSING, f->name, NULL, err, "%s: %s lists it with its header at byte %lld; the archive ends "
                  "at %lld", r->where, LINDI_INDEX_NAME, (long long)f->o, (long long)r->size);
    else if (!whole && r->size >= 0 && f->d + f->s > r->size)
      /* a torn last member (a writer killed mid-append, a copy cut short): reads of it fail */
      rc = lc_add(r, VC_SHORT, f->name, NULL, err, "%s: %s lists %lld bytes of data at byte %lld; the archive ends "
                  "at %lld", r->where, LINDI_INDEX_NAME, (long long)f->s, (long long)f->d, (long long)r->size);
    if (!whole) continue;
    if (seen[i].hit && seen[i].o >= 0)
      rc = lc_add(r, VC_ORPHAN, f->name, NULL, err, "%s: a second tar header of %s at byte %lld, which %s does not "
                  "list (it lists the one at %lld)", r->where, f->name, (long long)seen[i].o, LINDI_INDEX_NAME,
                  (long long)f->o);
    else if (!seen[i].hit && seen[i].o >= 0)
      rc = lc_add(r, VC_MISMATCH, f->name, NULL, err, "%s: %s gives its header at byte %lld, data at %lld, %lld bytes; "
                  "the tar header of that name is at byte %lld, data at %lld, %lld bytes", r->where, LINDI_INDEX_NAME,
                  (long long)f->o, (long long)f->d, (long long)f->s, (long long)seen[i].o, (long long)seen[i].d,
                  (long long)seen[i].s);
    else if (!seen[i].hit)
      rc = lc_add(r, VC_MISSING, f->name, NULL, err, "%s: %s lists it with its header at byte %lld (%lld bytes); "
                  "no tar header of that name", r->where, LINDI_INDEX_NAME, (long long)f->o, (long long)f->s);
  }
  free(seen);
  return rc;
}

/* --- the refs --- */

static char *folder_of(const char *key) {
  const char *sl = strrchr(key, '/');
  return sl ? strndup(key, (size_t)(sl - key)) : NULL;
}

/* An internal ref: [./member, off, size] against the index and the archive's size. */
static vd_code internal(lc_state *r, const char *part, const char *key, const char *m, int64_t off, int64_t size,
                        vd_err *err) {
  const lindi_file *f = lindi_find(&r->ix, m);
  if (!f)
    return lc_add(r, VC_MISSING, part, key, err, "%s: refers to member %s, which %s does not list", r->where, m,
                  LINDI_INDEX_NAME);
  int64_t at = f->d + off, end = at + size;
  if (r->size >= 0 && end > r->size)
    return lc_add(r, at >= r->size ? VC_MISSING : VC_SHORT, part, key, err,
                  "%s: bytes [%lld, %lld) of member %s lie at [%lld, %lld) of the archive, which ends at %lld",
                  r->where, (long long)off, (long long)(off + size), m, (long long)at, (long long)end,
                  (long long)r->size);
  if (off + size > f->s)
    return lc_add(r, VC_SHORT, part, key, err, "%s: bytes [%lld, %lld) of member %s, which holds %lld bytes",
                  r->where, (long long)off, (long long)(off + size), m, (long long)f->s);
  return VD_OK;
}

/* An external ref: kept for the HEADs, one per distinct URL. Only a URL vdsql may reach
 * is asked: for a remote dataset what the allowed-hosts rule of every read lets through
 * (its own origin, allowed_hosts), for a local file local paths and the hosts
 * allowed_hosts names (a check of a catalog must not make vdsql reach any host its files
 * name). Any other is not checked: no row, not counted in items. */
static vd_code external(lc_state *r, const char *key, const char *target, int64_t end, vd_err *err) {
  vd_code rc = vd_url_allowed(r->ctx, r->url, target, err);
  if (rc == VD_NOMEM) return rc;
  vd_err_clear(err);
  if (rc || (!vd_store_is_remote(r->url) && vd_store_is_remote(target) && !vd_url_host_listed(r->ctx, target))) {
    r->items--;
    return VD_OK;
  }
  int u = vd_strmap_get(&r->umap, target);
  if (u < 0) {
    if (r->nurl % 64 == 0) {
      char **p = realloc(r->urls, (size_t)(r->nurl + 64) * sizeof *p);
      if (!p) return vd_nomem(err);
      r->urls = p;
    }
    if (!(r->urls[r->nurl] = strdup(target)) || vd_strmap_put(&r->umap, target, r->nurl)) return vd_nomem(err);
    u = r->nurl++;
  }
  if (r->nx % 256 == 0) {
    lc_xref *p = realloc(r->xr, (size_t)(r->nx + 256) * sizeof *p);
    if (!p) return vd_nomem(err);
    r->xr = p;
  }
  lc_xref *x = &r->xr[r->nx];
  x->url = u, x->end = end;
  if (!(x->key = strdup(key))) return vd_nomem(err);
  r->nx++;
  return VD_OK;
}

/* HEADs of every distinct URL, a batch at a time, in parallel where the store can. */
static vd_code probe(lc_state *r, vd_err *err) {
  int64_t *size = malloc((size_t)(r->nurl ? r->nurl : 1) * sizeof *size);
  char **why = calloc((size_t)(r->nurl ? r->nurl : 1), sizeof *why);
  vd_err *errs = malloc(LINDI_PROBE_MAX * sizeof *errs);
  vd_code rcs[LINDI_PROBE_MAX], rc = size && why && errs ? VD_OK : vd_nomem(err);
  for (int b = 0; !rc && b < r->nurl; b += LINDI_PROBE_MAX) {
    int n = r->nurl - b < LINDI_PROBE_MAX ? r->nurl - b : LINDI_PROBE_MAX;
    lindi_probe_sizes(r->ctx, r->urls + b, n, size + b, rcs, errs);
    for (int i = 0; i < n && !rc; i++) {
      if (rcs[i] && vc_fatal(rcs[i])) {
        *err = errs[i];
        rc = rcs[i];
      } else if (rcs[i] && !(why[b + i] = strdup(errs[i].msg))) {
        rc = vd_nomem(err);
      }
    }
  }
  for (int i = 0; !rc && i < r->nx; i++) {
    const lc_xref *x = &r->xr[i];
    char *part = folder_of(x->key);
    char wu[600];
    vd_url_redact(r->urls[x->url], wu, sizeof wu);
    if (why[x->url])
      rc = lc_add(r, VC_MISSING, part, x->key, err, "%s", why[x->url]);
    else if (size[x->url] >= 0 && x->end > size[x->url])
      rc = lc_add(r, VC_SHORT, part, x->key, err, "%s holds %lld bytes; the ref reads up to byte %lld", wu,
                  (long long)size[x->url], (long long)x->end);
    free(part);
  }
  for (int i = 0; why && i < r->nurl; i++) free(why[i]);
  free(why);
  free(size);
  free(errs);
  return rc;
}

/* One ref: its range, or its inline value (Zarr metadata parsed, a chunk's length kept). */
static vd_code one_ref(lc_state *r, lindi_refs *rf, vd_err *err) {
  const char *key = lindi_refs_key(rf);
  char *part = folder_of(key);
  const char *base = part ? key + strlen(part) + 1 : key;
  int64_t len = -1;
  vd_code rc = VD_OK;
  r->items++;
  if (lindi_refs_is_ref(rf)) {
    const char *target;
    int64_t off, size;
    if ((rc = lindi_refs_target(rf, &target, err)) || (rc = lindi_refs_number(rf, 1, &off, err)) ||
        (rc = lindi_refs_number(rf, 2, &size, err))) {
      rc = finding(r, rc, part, key, err);
    } else {
      const char *m = lindi_refs_member(rf, target);
      /* the JSON form has no members: "./name" is a file next to it */
      char *near = r->json_form && !strncmp(target, "./", 2) ? vd_url_sibling(r->url, target + 2) : NULL;
      len = size;
      if (r->json_form && !strncmp(target, "./", 2) && !near) rc = vd_nomem(err);
      else if (m) rc = internal(r, part, key, m, off, size, err);
      else rc = external(r, key, near ? near : target, off + size, err);
      free(near);
    }
  } else if (base[0] != '.' || !strcmp(base, ".zarray") || !strcmp(base, ".zattrs") || !strcmp(base, ".zgroup")) {
    unsigned char *p = NULL;
    size_t n = 0;
    int text, kind;
    if (!(rc = lindi_refs_kind(rf, &kind, err)) && !(rc = lindi_refs_value(rf, &p, &n, &text, err))) {
      if (base[0] == '.')
        rc = lc_zarr_meta(r, part, key, base, (const char *)p, n, err);
      else if (kind != LINDI_KIND_JSON)
        len = (int64_t)n;
    } else {
      rc = finding(r, rc, part, key, err);
    }
    free(p);
  }
  if (!rc && base[0] != '.') rc = lc_zarr_key(r, key, len, err);
  free(part);
  return rc;
}

static vd_code refs(lc_state *r, vd_err *err) {
  lindi_refs *rf = NULL;
  vd_code rc = lindi_refs_open(r->ctx, r->url, &rf, err);
  if (rc && r->json_form) { /* the JSON form is its lindi.json: the dataset is unreadable */
    lindi_refs_close(rf);
    return rc;
  }
  while (!rc && !lindi_refs_eof(rf)) {
    rc = one_ref(r, rf, err);
    if (!rc) rc = lindi_refs_next(rf, err);
  }
  lindi_refs_close(rf);
  if (rc && !vc_fatal(rc)) {
    /* lindi.json that cannot be read through: one row, and no judgement of chunk keys
     * (those after the fault would all seem absent) */
    r->refs_cut = 1;
    rc = finding(r, rc, NULL, LINDI_JSON_NAME, err);
  }
  if (!rc) rc = probe(r, err);
  if (!rc && !r->refs_cut) rc = lc_zarr_check(r, err);
  return rc;
}

static vd_code open_(vd_ctx *ctx, const char *url, void **state, vc_unopened *how, vd_err *err) {
  (void)how;
  lc_state *r = calloc(1, sizeof *r);
  if (!r) return vd_nomem(err);
  *state = r;
  r->ctx = ctx;
  r->size = -1;
  if (!(r->url = strdup(url))) return vd_nomem(err);
  vd_url_redact(url, r->where, sizeof r->where);
  vd_blob *b = NULL;
  vd_code rc = lindi_prefix(ctx, url, &b, err);
  if (rc) return rc;
  r->json_form = lindi_is_json_form(b->data, b->len);
  r->size = lindi_size(ctx, url);
  if (!r->json_form && !(rc = lindi_open(ctx, url, &r->ix, err))) rc = headers(r, &r->ix, b, err);
  vd_blob_unref(b);
  return rc ? rc : refs(r, err);
}

static vd_code next(void *state, vc_row *row, int *eof, vd_err *err) {
  (void)err;
  lc_state *r = state;
  if (r->pos == r->n) {
    *eof = 1;
    return VD_OK;
  }
  const lc_row *w = &r->rows[r->pos++];
  row->part = w->part, row->item = w->item, row->verdict = w->verdict, row->detail = w->detail;
  return VD_OK;
}

static int64_t items(const void *state) { return ((const lc_state *)state)->items; }

static void close_(void *state) {
  lc_state *r = state;
  if (!r) return;
  for (int i = 0; i < r->n; i++) free(r->rows[i].part), free(r->rows[i].item), free(r->rows[i].detail);
  for (int i = 0; i < r->nurl; i++) free(r->urls[i]);
  for (int i = 0; i < r->nx; i++) free(r->xr[i].key);
  lc_zarr_free(r);
  free(r->rows), free(r->urls), free(r->xr), free(r->url);
  vd_strmap_free(&r->umap);
  lindi_index_free(&r->ix);
  free(r);
}

const vc_checker vc_lindi = {"lindi", open_, next, items, close_};
