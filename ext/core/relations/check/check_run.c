/* One dataset's health check (check_run.h): the format told by the URL's name, then that
 * format's checker (check_format.h) row by row. What the data holds is always a row; only
 * what is no finding of the data (an argument, the store refusing or unreachable, memory,
 * an interrupt) fails. */
#include "check_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_format.h"
#include "store/store.h"

static const char *verdicts[] = {"unreadable", "malformed", "missing", "short", "mismatch", "orphan", "uncommitted"};

const char *vc_verdict_name(int v) { return verdicts[v]; }

struct vc_run {
  char *url;
  const vc_checker *c;
  void *state;
  int pending; /* the one row of a dataset that could not be opened */
  vc_unopened how;
  char detail[1400];
};

static int ends(const char *s, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* The checker a name says (a ?query or #fragment is not part of it); OpenVDS, a folder,
 * otherwise. */
static const vc_checker *checker_of(const char *url) {
  size_t n = strcspn(url, "?#");
  while (n && url[n - 1] == '/') n--;
  if (ends(url, n, ".lindi.tar") || ends(url, n, ".lindi.json")) return &vc_lindi;
  if (ends(url, n, ".vtkhdf") || ends(url, n, ".hdf")) return &vc_vtkhdf;
  return &vc_openvds;
}

vd_code vc_open(vd_ctx *ctx, const vd_value *url, const char *who, vc_run **out, vd_err *err) {
  *out = NULL;
  if (url->type == VD_NULL) return vd_fail(err, VD_INVALID, "%s: the url is NULL", who);
  if (url->type != VD_TEXT)
    return vd_fail(err, VD_INVALID, "%s: the url must be text, not a %s", who, url->type == VD_BLOB ? "blob" : "number");
  vc_run *r = calloc(1, sizeof *r);
  if (!r || !(r->url = vd_value_strdup(url))) {
    free(r);
    return vd_nomem(err);
  }
  vd_code rc = vd_url_check(r->url, err);
  if (!rc && !*r->url) rc = vd_fail(err, VD_INVALID, "%s: the url is empty", who);
  if (rc) {
    vc_close(r);
    return rc;
  }
  r->c = checker_of(r->url);
  r->how = (vc_unopened){VC_UNREADABLE, NULL};
  rc = r->c->open(ctx, r->url, &r->state, &r->how, err);
  if (rc && vc_fatal(rc)) {
    vc_close(r);
    return rc;
  }
  if (rc) {
    r->c->close(r->state);
    r->state = NULL;
    r->pending = 1;
    snprintf(r->detail, sizeof r->detail, "%s", err->msg);
    vd_err_clear(err);
  }
  *out = r;
  return VD_OK;
}

vd_code vc_next(vc_run *r, vc_row *row, int *eof, vd_err *err) {
  memset(row, 0, sizeof *row);
  *eof = 0;
  if (r->pending) {
    r->pending = 0;
    row->verdict = r->how.verdict;
    row->item = r->how.item;
    row->detail = r->detail;
    return VD_OK;
  }
  if (!r->state) {
    *eof = 1;
    return VD_OK;
  }
  return r->c->next(r->state, row, eof, err);
}

const char *vc_format(const vc_run *r) { return r->c->format; }

int64_t vc_items(const vc_run *r) { return r->state ? r->c->items(r->state) : 0; }

void vc_close(vc_run *r) {
  if (!r) return;
  if (r->c) r->c->close(r->state);
  free(r->url);
  free(r);
}
