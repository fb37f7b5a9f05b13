/* Backend dispatch (which code serves each backend: the scheme table is store_url.c),
 * the cached document path, URL joins and derived URLs (see store.h, backend.h). */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "backend.h"
#include "cache.h"
#include "relay.h"
#include "s3_region.h"


/* Which code serves each backend (what a scheme is and can do: store_url.c). */
static const vd_backend_ops *const ops_of[VD_BE_COUNT] = {
    [VD_BE_FILE] = &vd_file_ops, [VD_BE_HTTP] = &vd_http_ops, [VD_BE_S3] = &vd_s3_ops, [VD_BE_AZ] = &vd_az_ops};

const vd_backend_ops *vd_backend_of(const char *url) {
  return vd_url_known(url) ? ops_of[vd_url_backend(url)] : NULL;
}

static int carries_query(const char *url) { return (vd_url_caps(url) & VD_CAP_QUERY) != 0; }

/* pre[0, plen) + sep + name (percent-encoded with encode: RFC 3986 unreserved and '/'
 * kept, so a name can never change the URL's structure) + q (a ?query, or NULL). */
static char *build(const char *pre, size_t plen, const char *sep, const char *name, int encode, const char *q) {
  size_t nlen = strlen(name), qlen = q ? strlen(q) : 0, slen = strlen(sep);
  char *out = malloc(plen + slen + nlen * 3 + qlen + 1);
  if (!out) return NULL;
  char *o = out;
  memcpy(o, pre, plen);
  o += plen;
  memcpy(o, sep, slen);
  o += slen;
  if (encode) {
    o = vd_pct_encode(o, name, nlen, 1);
  } else {
    memcpy(o, name, nlen);
    o += nlen;
  }
  if (q) {
    memcpy(o, q, qlen);
    o += qlen;
  }
  *o = 0;
  return out;
}

/* Object names from datasets are joined into URLs; for remote stores they are
 * percent-encoded. The base's ?query (backends with VD_CAP_QUERY) goes at the end. */
char *vd_url_join(const char *base, const char *name) {
  const char *q = carries_query(base) ? strchr(base, '?') : NULL;
  size_t blen = q ? (size_t)(q - base) : strlen(base);
  while (blen > 0 && base[blen - 1] == '/' && !(blen == 1)) blen--;
  return build(base, blen, blen == 1 && base[0] == '/' ? "" : "/", name, vd_store_is_remote(base), q);
}

char *vd_url_sibling(const char *file_url, const char *name) {
  const char *q = carries_query(file_url) ? strchr(file_url, '?') : NULL;
  size_t dn = q ? (size_t)(q - file_url) : strlen(file_url);
  while (dn > 0 && file_url[dn - 1] != '/') dn--;
  return build(file_url, dn, "", name, 0, q);
}

char *vd_url_list_dir(const char *url) {
  const char *q = carries_query(url) ? strchr(url, '?') : NULL;
  size_t n = q ? (size_t)(q - url) : strlen(url), sl = vd_url_scheme_len(url);
  if (sl && !memchr(url + sl + 3, '/', n - sl - 3)) /* "s3://bucket": the bucket's root */
    return build(url, n, "/", "", 0, q);
  return vd_url_sibling(url, "");
}

/* The authority (userinfo, host, port) of a URL with a scheme: [*a, *z). */
static void authority(const char *url, const char **a, const char **z) {
  *a = url + vd_url_scheme_len(url) + 3;
  *z = *a + strcspn(*a, "/?#");
}

char *vd_url_carry_query(const char *base, const char *url) {
  const char *q = carries_query(base) ? strchr(base, '?') : NULL;
  size_t sl = vd_url_scheme_len(base);
  if (!q || strpbrk(url, "?#") || sl != vd_url_scheme_len(url) || strncasecmp(base, url, sl) != 0) return strdup(url);
  const char *ba, *bz, *ua, *uz;
  authority(base, &ba, &bz);
  authority(url, &ua, &uz);
  if (bz > q || bz - ba != uz - ua || strncasecmp(ba, ua, (size_t)(bz - ba)) != 0) return strdup(url);
  size_t ul = strlen(url), ql = strcspn(q, "#");
  char *out = malloc(ul + ql + 1);
  if (out) {
    memcpy(out, url, ul);
    memcpy(out + ul, q, ql);
    out[ul + ql] = 0;
  }
  return out;
}

vd_code vd_get_many(vd_ctx *ctx, vd_getreq *reqs, int n) {
  if (vd_relay_on()) return vd_relay_get_many(reqs, n); /* the HDF5 helper: its parent reads */
  vd_getreq **by[VD_BE_COUNT];
  int cnt[VD_BE_COUNT] = {0};
  for (int b = 0; b < VD_BE_COUNT; b++) {
    by[b] = malloc((n ? n : 1) * sizeof **by);
    if (!by[b]) {
      for (int k = 0; k < b; k++) free(by[k]);
      for (int i = 0; i < n; i++) reqs[i].rc = vd_nomem(&reqs[i].err);
      return VD_NOMEM;
    }
  }
  for (int i = 0; i < n; i++) {
    reqs[i].rc = VD_OK;
    vd_err_clear(&reqs[i].err);
    reqs[i].status = 0;
    reqs[i].info.size = -1;
    if ((reqs[i].rc = vd_url_check(reqs[i].url, &reqs[i].err))) continue;
    vd_backend_id b = vd_url_backend(reqs[i].url);
    by[b][cnt[b]++] = &reqs[i];
  }
  for (int b = 0; b < VD_BE_COUNT; b++)
    if (cnt[b]) ops_of[b]->get_many(ctx, by[b], cnt[b]);
  for (int b = 0; b < VD_BE_COUNT; b++) free(by[b]);
  for (int i = 0; i < n; i++)
    if (reqs[i].rc) return reqs[i].rc;
  return VD_OK;
}

vd_code vd_get(vd_ctx *ctx, const char *url, int64_t off, int64_t len, vd_buf *out, vd_objinfo *info,
               vd_err *err) {
  vd_getreq r = {0};
  r.url = url;
  r.off = off;
  r.len = len;
  r.want_info = info != NULL;
  vd_code rc = vd_get_many(ctx, &r, 1);
  if (rc) {
    *err = r.err;
    vd_buf_free(&r.body);
    vd_objinfo_free(&r.info);
    return rc;
  }
  *out = r.body;
  if (info)
    *info = r.info;
  else
    vd_objinfo_free(&r.info);
  return VD_OK;
}

vd_code vd_head(vd_ctx *ctx, const char *url, vd_objinfo *info, vd_err *err) {
  memset(info, 0, sizeof *info);
  info->size = -1;
  if (vd_url_check(url, err)) return err->code;
  if (vd_relay_on()) return vd_relay_head(url, info, err);
  return vd_backend_of(url)->head(ctx, url, info, err);
}

/* The one refusal of a write, listing or delete on a backend without it. */
static vd_code refused(const char *url, const char *what, vd_err *err) {
  char where[600];
  vd_url_redact(url, where, sizeof where);
  return vd_fail(err, VD_READONLY, "%s: cannot %s: %s URLs %s", where, what, vd_url_label(url),
                 strcmp(what, "list") == 0 ? "have no listing" : "are read-only");
}

vd_code vd_put(vd_ctx *ctx, vd_putreq *p, vd_err *err) {
  p->etag[0] = 0;
  if (p->del) return vd_delete(ctx, p->url, err);
  if (vd_url_check(p->url, err) || (p->copy_from && vd_url_check(p->copy_from, err))) return err->code;
  const vd_backend_ops *b = vd_backend_of(p->url);
  if (p->copy_from && vd_backend_of(p->copy_from) != b) {
    char where[600];
    vd_url_redact(p->url, where, sizeof where);
    return vd_fail(err, VD_INVALID, "%s: a copy comes from the same store only", where);
  }
  return b->put ? b->put(ctx, p, err) : refused(p->url, "write", err);
}

vd_code vd_store_make_dirs(const char *url, vd_err *err) {
  if (vd_url_check(url, err)) return err->code;
  if (!vd_store_is_local(url)) return VD_OK;
  char *path = vd_url_path(url);
  if (!path) return vd_nomem(err);
  for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = 0;
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
      vd_code rc = vd_fail(err, VD_IO, "%s: cannot make the directory (%s)", path, strerror(errno));
      free(path);
      return rc;
    }
    *s = '/';
  }
  free(path);
  return VD_OK;
}

vd_code vd_put_many(vd_ctx *ctx, vd_putreq **p, int n, vd_code *rc, vd_err *errs) {
  vd_code first = VD_OK;
  int i = 0;
  while (i < n) { /* runs of puts to one backend: a backend's put_many takes a run at once */
    const vd_backend_ops *b = vd_backend_of(p[i]->url);
    int j = i;
    while (j < n && vd_backend_of(p[j]->url) == b) j++;
    int checked = b != NULL;
    for (int k = i; k < j && checked; k++) checked = vd_url_check(p[k]->url, &errs[k]) == VD_OK;
    if (checked && b->put_many) {
      for (int k = i; k < j; k++) p[k]->etag[0] = 0;
      b->put_many(ctx, p + i, j - i, rc + i, errs + i);
    } else {
      for (int k = i; k < j; k++) rc[k] = vd_put(ctx, p[k], &errs[k]);
    }
    i = j;
  }
  for (i = 0; i < n; i++)
    if (rc[i] && !first) first = rc[i];
  return first;
}

vd_code vd_delete(vd_ctx *ctx, const char *url, vd_err *err) {
  if (vd_url_check(url, err)) return err->code;
  const vd_backend_ops *b = vd_backend_of(url);
  return b->del ? b->del(ctx, url, err) : refused(url, "delete", err);
}

vd_code vd_delete_many(vd_ctx *ctx, vd_delreq *d, int n) {
  int i = 0;
  while (i < n) { /* runs of deletes on one backend: its del_many takes a run at once */
    const vd_backend_ops *b = vd_backend_of(d[i].url);
    int j = i;
    while (j < n && vd_backend_of(d[j].url) == b) j++;
    int checked = b && b->del_many;
    for (int k = i; k < j && checked; k++) {
      d[k].rc = vd_url_check(d[k].url, &d[k].err);
      checked = d[k].rc == VD_OK;
      vd_cache_drop(ctx->cache, d[k].url);
    }
    if (checked) b->del_many(ctx, d + i, j - i);
    else
      for (int k = i; k < j; k++) d[k].rc = vd_delete(ctx, d[k].url, &d[k].err);
    i = j;
  }
  for (i = 0; i < n; i++)
    if (d[i].rc) return d[i].rc;
  return VD_OK;
}

vd_code vd_list_with(vd_ctx *ctx, const char *url, const char *token, int max, int flags, vd_listing *out,
                     vd_err *err) {
  memset(out, 0, sizeof *out);
  if (vd_url_check(url, err)) return err->code;
  if (max <= 0) return vd_fail(err, VD_INVALID, "vd_list: a page holds at least one object");
  const vd_backend_ops *b = vd_backend_of(url);
  vd_code rc = b->list ? b->list(ctx, url, token, max, flags, out, err) : refused(url, "list", err);
  if (rc) vd_listing_free(out);
  return rc;
}

vd_code vd_list(vd_ctx *ctx, const char *url, const char *token, int max, vd_listing *out, vd_err *err) {
  return vd_list_with(ctx, url, token, max, 0, out, err);
}

void vd_listing_free(vd_listing *l) {
  for (int i = 0; i < l->n; i++) {
    free(l->ent[i].key);
    vd_objinfo_free(&l->ent[i].info);
  }
  free(l->ent);
  free(l->next);
  for (int i = 0; i < l->nprefixes; i++) free(l->prefixes[i]);
  free(l->prefixes);
  memset(l, 0, sizeof *l);
}

vd_code vd_fetch_docs(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_err *err) {
  return vd_fetch_docs_opt(ctx, urls, n, out, 1, err);
}

/* Both forms of fetching many documents: with rcs, each one's own outcome (rcs[i],
 * errs[i]) and what was fetched kept; without, all-or-nothing. */
static vd_code fetch_docs(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, int cache, vd_code *rcs,
                          vd_err *errs, vd_err *err) {
  if (rcs)
    for (int i = 0; i < n; i++) rcs[i] = VD_OK;
  vd_getreq *reqs = calloc(n ? n : 1, sizeof *reqs);
  int *slot = malloc((n ? n : 1) * sizeof *slot);
  if (!reqs || !slot) {
    free(reqs);
    free(slot);
    return vd_nomem(err);
  }
  int nreq = 0;
  for (int i = 0; i < n; i++) {
    out[i] = vd_cache_get(ctx->cache, urls[i], ctx->cfg.cache_ttl);
    if (out[i]) {
      ctx->stats[vd_url_backend(urls[i])].cache_hits++;
      continue;
    }
    reqs[nreq].url = urls[i];
    reqs[nreq].len = -1;
    slot[nreq++] = i;
  }
  if (nreq) vd_get_many(ctx, reqs, nreq); /* each request carries its own outcome */
  vd_code rc = VD_OK;
  for (int k = 0; k < nreq; k++) {
    if (reqs[k].rc == VD_OK) {
      vd_blob *b = vd_blob_from_buf(&reqs[k].body);
      if (!b) {
        if (!rc) rc = vd_nomem(err);
      } else {
        out[slot[k]] = b;
        if (cache && ctx->cfg.cache_ttl > 0) vd_cache_put(ctx->cache, urls[slot[k]], b, ctx->cfg.cache_size);
      }
    } else if (rcs) {
      rcs[slot[k]] = reqs[k].rc;
      errs[slot[k]] = reqs[k].err;
    } else if (!rc) {
      rc = reqs[k].rc;
      *err = reqs[k].err;
    }
    vd_buf_free(&reqs[k].body);
    vd_objinfo_free(&reqs[k].info);
  }
  if (rc && !rcs)
    for (int i = 0; i < n; i++) {
      vd_blob_unref(out[i]);
      out[i] = NULL;
    }
  free(reqs);
  free(slot);
  return rc;
}

vd_code vd_fetch_docs_opt(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, int cache, vd_err *err) {
  return fetch_docs(ctx, urls, n, out, cache, NULL, NULL, err);
}

vd_code vd_fetch_docs_each(vd_ctx *ctx, const char *const *urls, int n, vd_blob **out, vd_code *rcs, vd_err *errs,
                           vd_err *err) {
  return fetch_docs(ctx, urls, n, out, 1, rcs, errs, err);
}

vd_code vd_fetch_doc(vd_ctx *ctx, const char *url, vd_blob **out, vd_err *err) {
  return vd_fetch_docs(ctx, &url, 1, out, err);
}

vd_blob *vd_cache_lookup(vd_ctx *ctx, const char *url, const char *key) {
  if (vd_relay_on()) return vd_relay_cache_get(url, key, 1);
  vd_blob *b = vd_cache_get(ctx->cache, key, ctx->cfg.cache_ttl);
  if (b) ctx->stats[vd_url_backend(url)].cache_hits++;
  return b;
}

vd_blob *vd_cache_peek(vd_ctx *ctx, const char *key) {
  if (vd_relay_on()) return vd_relay_cache_get("", key, 0);
  return vd_cache_get(ctx->cache, key, ctx->cfg.cache_ttl);
}

void vd_cache_store(vd_ctx *ctx, const char *key, vd_blob *b) {
  if (vd_relay_on()) {
    vd_relay_cache_put(key, b);
    return;
  }
  if (ctx->cfg.cache_ttl > 0) vd_cache_put(ctx->cache, key, b, ctx->cfg.cache_size);
}

vd_code vd_fetch_range(vd_ctx *ctx, const char *url, int64_t off, int64_t len, const char *key, vd_blob **out,
                       vd_err *err) {
  if ((*out = vd_cache_lookup(ctx, url, key))) return VD_OK;
  vd_buf b = {0};
  vd_code rc = vd_get(ctx, url, off, len, &b, NULL, err);
  if (rc) return rc;
  if (!(*out = vd_blob_from_buf(&b))) {
    vd_buf_free(&b);
    return vd_nomem(err);
  }
  vd_cache_store(ctx, key, *out);
  return VD_OK;
}

void vd_store_invalidate(vd_ctx *ctx, const char *url) { vd_cache_drop(ctx->cache, url); }

void vd_store_config_changed(vd_ctx *ctx) {
  /* curl handles read the settings when a transfer is set up; the buckets' regions were
   * named by the endpoint in force, which may be another now: asked again when needed */
  vd_s3_regions_clear(ctx);
}

void vd_store_shutdown(vd_ctx *ctx) {
  if (ctx->http) vd_http_free(ctx->http);
  ctx->http = NULL;
  vd_s3_regions_clear(ctx);
}
