/* A core cursor's current row as Datums (rows.h): the loop every streaming scan of the
 * front end shares, with its fast paths (a relation's integer row, a repeated text value
 * kept as the last Datum) and vdsql_config's hidden credentials. */
#include "rows.h"

#include "utils/memutils.h"

bool vdpg_is_credential(const char *key, size_t n) {
  const char *k, *doc;
  int action;
  for (int i = 0; vd_config_setting(i, &k, &doc, &action); i++)
    if (strlen(k) == n && strncmp(k, key, n) == 0) return (vd_config_flags(i) & VD_SETTING_CREDENTIAL) != 0;
  return false;
}

/* vdsql_config() shows a credential of a PUBLIC mapping as pg_user_mappings shows the
 * mapping's options: NULL to a role that may not read them. */
static bool hide_value(const vd_relation *r, void *cur, int c, vd_value *v) {
  if (!vdpg_credentials_hidden() || strcmp(r->cols[c].name, "value") != 0) return false;
  vd_value key = vd_null();
  vd_err err;
  vd_err_clear(&err);
  bool hide = r->column(cur, 0, &key, &err) == VD_OK && key.type == VD_TEXT && vdpg_is_credential(key.p, key.n);
  if (key.dtor) key.dtor((void *)key.p);
  if (hide && v->dtor) v->dtor((void *)v->p);
  return hide;
}

void vdpg_rows_init(vdpg_rows *w, const vd_relation *r, MemoryContext cx, int natts, const int *attcol, uint64 cols,
                    const Datum *args, const bool *argnull) {
  memset(w, 0, sizeof *w);
  w->rel = r, w->cx = cx, w->natts = natts, w->args = args, w->argnull = argnull;
  w->rowcx = AllocSetContextCreate(cx, "vdsql row", ALLOCSET_DEFAULT_SIZES);
  w->read = MemoryContextAllocZero(cx, sizeof(vdpg_att_read) * (natts + 1));
  for (int a = 0; a < natts; a++) {
    int c = attcol[a];
    if (c < 0 || !(cols & ((uint64)1 << (c < 63 ? c : 63)))) continue; /* stays NULL */
    vdpg_att_read *x = &w->read[w->nread++];
    x->att = a, x->col = c;
    if (r->cols[c].flags & VD_COL_ARG) {
      x->how = VDPG_READ_ARG;
      for (int j = 0; j < c; j++) x->idx += (r->cols[j].flags & VD_COL_ARG) != 0;
    } else if (r->ints && r->int_col && r->int_col[c] >= 0) {
      x->how = VDPG_READ_INT, x->idx = r->int_col[c];
    } else {
      x->how = VDPG_READ_COLUMN;
    }
  }
}

/* A text value of a text column as a Datum in the attribute's buffer: the last one again
 * when the bytes are the same, else checked and copied in. */
static vd_code text_datum(vdpg_rows *w, vdpg_att_read *x, const vd_value *v, Datum *out, vd_err *err) {
  const char *p = v->p ? v->p : "";
  size_t n = v->n;
  if (x->cached && VARSIZE(x->buf) - VARHDRSZ == n && memcmp(VARDATA(x->buf), p, n) == 0) {
    *out = PointerGetDatum(x->buf);
    return VD_OK;
  }
  x->cached = false;
  vd_code rc = vdsql_pg_text_check(p, n, w->rel->cols[x->col].name, err);
  if (rc) return rc;
  if (!x->buf || n > x->cap) {
    size_t cap = n < 32 ? 32 : n * 2;
    if (cap > MaxAllocSize - VARHDRSZ) cap = n; /* too long to double: an error below if too long at all */
    text *b = MemoryContextAlloc(w->cx, VARHDRSZ + cap);
    if (x->buf) pfree(x->buf);
    x->buf = b, x->cap = cap;
  }
  SET_VARSIZE(x->buf, VARHDRSZ + n);
  if (n) memcpy(VARDATA(x->buf), p, n);
  x->cached = true;
  *out = PointerGetDatum(x->buf);
  return VD_OK;
}

vd_code vdpg_rows_fill(vdpg_rows *w, void *cur, Datum *values, bool *isnull, vd_err *err) {
  const vd_relation *r = w->rel;
  if (w->rowcx_used) MemoryContextReset(w->rowcx);
  w->rowcx_used = false;
  memset(isnull, true, sizeof(bool) * w->natts); /* the unread attributes are never looked at */
  const int64_t *iv = r->ints ? r->ints(cur) : NULL;
  vd_code rc = VD_OK;
  for (int j = 0; j < w->nread && rc == VD_OK; j++) {
    vdpg_att_read *x = &w->read[j];
    Datum *d = &values[x->att];
    bool *nul = &isnull[x->att];
    if (x->how == VDPG_READ_ARG) {
      *nul = w->argnull[x->idx];
      *d = w->args[x->idx];
      continue;
    }
    if (x->how == VDPG_READ_INT && iv) {
      if (iv[x->idx] != VD_INT_NULL) *nul = false, *d = Int64GetDatum(iv[x->idx]);
      continue;
    }
    vd_value v = vd_null();
    if ((rc = r->column(cur, x->col, &v, err))) break;
    if (w->hide && hide_value(r, cur, x->col, &v)) continue;
    if (v.type == VD_TEXT && r->cols[x->col].type == VD_TEXT) {
      rc = text_datum(w, x, &v, d, err);
      *nul = rc != VD_OK;
    } else if (v.type != VD_NULL) {
      MemoryContext old = MemoryContextSwitchTo(w->rowcx);
      w->rowcx_used = true;
      rc = vdsql_pg_datum(&v, r->cols[x->col].type, r->cols[x->col].name, d, nul, err);
      MemoryContextSwitchTo(old);
    }
    if (v.dtor) v.dtor((void *)v.p);
  }
  return rc;
}

bool vdpg_rows_next(vdpg_rows *w, vd_ctx *ctx, const vdpg_identity *id, void *cur, bool *advance, Datum *values,
                    bool *isnull, vd_err *err) {
  const vd_relation *r = w->rel;
  vdpg_identity_use(ctx, id);
  vd_code rc;
  if (*advance) {
    *advance = false;
    if ((rc = r->next(cur, err))) vdsql_pg_raise(rc, err);
  }
  if (r->eof(cur)) return false;
  if ((rc = vdpg_rows_fill(w, cur, values, isnull, err))) vdsql_pg_raise(rc, err);
  *advance = true;
  return true;
}
