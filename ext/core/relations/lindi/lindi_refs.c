/* lindi_refs(url): one row per ref of the archive's lindi.json (kerchunk-style
 * reference file system), or of a standalone .lindi.json (LINDI's JSON form): inline
 * text, base64 or JSON values, and [url, offset, size] refs with templates expanded and
 * ./member refs resolved to absolute archive offsets. The reading, decoding and writing
 * are the format's (formats/lindi/lindi_refs.h: streamed, nothing decoded before a
 * column asks); this file maps them to columns.
 * As a named table, CREATE VIRTUAL TABLE r USING lindi_refs('x.lindi.tar'), it takes
 * INSERT / INSERT OR REPLACE / DELETE of refs, committed with the archive's members. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "formats/lindi/lindi_refs.h"
#include "util/utf8.h"
#include "vd_catalog.h"

static const vd_colspec cols[] = {{"key", VD_TEXT, VD_COL_NOTNULL},    {"kind", VD_TEXT, 0},     {"value", VD_NULL, 0},
                                  {"target", VD_TEXT, 0}, {"offset", VD_INT, 0},    {"size", VD_INT, 0},
                                  {"member", VD_TEXT, 0}, {"archive_offset", VD_INT, 0},
                                  {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  *out = NULL;
  if (a[0].type == VD_NULL) return VD_OK; /* no rows */
  char *url = vd_value_strdup(&a[0]);
  if (!url) return vd_fail(err, VD_INVALID, "lindi_refs: the archive url must be text");
  vd_code rc = lindi_refs_open(ctx, url, (lindi_refs **)out, err);
  free(url);
  return rc;
}

static vd_code next(void *cur, vd_err *err) { return lindi_refs_next(cur, err); }
static int eof(void *cur) { return !cur || lindi_refs_eof(cur); }
static int64_t rowid(void *cur) { return lindi_refs_row(cur); }
static void close_(void *cur) { lindi_refs_close(cur); }

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  lindi_refs *r = cur;
  int ref = lindi_refs_is_ref(r), kind = LINDI_KIND_REF;
  if (col == 1 && lindi_refs_kind(r, &kind, err)) return err->code;
  const char *url = NULL;
  int64_t n = 0;
  if (ref && (col == 3 || col == 6 || col == 7) && lindi_refs_target(r, &url, err)) return err->code;
  if (ref && (col == 4 || col == 7) && lindi_refs_number(r, 1, &n, err)) return err->code;
  if (ref && col == 5 && lindi_refs_number(r, 2, &n, err)) return err->code;
  static const char *const kinds[] = {[LINDI_KIND_REF] = "ref", [LINDI_KIND_TEXT] = "text",
                                      [LINDI_KIND_BASE64] = "base64", [LINDI_KIND_JSON] = "json"};
  switch (col) {
    case 0: *v = vd_text(lindi_refs_key(r)); break;
    case 1: *v = vd_text(kinds[kind]); break;
    case 2:
      if (ref) {
        *v = vd_null();
      } else {
        unsigned char *p;
        size_t len;
        int text;
        if (lindi_refs_value(r, &p, &len, &text, err)) return err->code;
        *v = text ? vd_owned_text((char *)p) : vd_owned_blob(p, len);
      }
      break;
    case 3: *v = ref ? vd_text(url) : vd_null(); break;
    case 4:
    case 5: *v = ref ? vd_int(n) : vd_null(); break;
    case 6: {
      const char *m = ref ? lindi_refs_member(r, url) : NULL;
      *v = m ? vd_text(m) : vd_null();
      break;
    }
    default: {
      int64_t at;
      *v = ref && lindi_refs_archive_offset(r, url, n, &at) ? vd_int(at) : vd_null();
      break;
    }
  }
  return VD_OK;
}

/* --- the named, writable table --- */

static vd_code t_connect(vd_ctx *ctx, const char *const *args, int nargs, void **tab, vd_err *err) {
  if (nargs != 1) return vd_fail(err, VD_INVALID, "lindi_refs takes one argument: the archive path");
  return lindi_writer_open(ctx, args[0], (lindi_writer **)tab, err);
}

static vd_code t_open(vd_ctx *ctx, void *tab, void **out, vd_err *err) {
  return lindi_refs_open_writer(ctx, tab, (lindi_refs **)out, err);
}

static vd_code t_insert(void *tab, const vd_value *row, int replace, int64_t *rid, vd_err *err) {
  lindi_writer *w = tab;
  cJSON *doc, *val = NULL;
  vd_code rc = lindi_writer_refs(w, &doc, err);
  if (rc) return rc;
  if (row[0].type != VD_TEXT) return vd_fail(err, VD_CONSTRAINT, "lindi_refs: key must be text");
  /* written as a JSON key: UTF-8 without NUL (a C string), or readers refuse lindi.json */
  if ((row[0].n && memchr(row[0].p, 0, row[0].n)) || !vd_utf8_valid(row[0].p, row[0].n))
    return vd_fail(err, VD_CONSTRAINT, "lindi_refs: key must be UTF-8 text without NUL characters");
  char *key = vd_value_strdup(&row[0]), *kind = vd_value_strdup(&row[1]), *url = vd_value_strdup(&row[3]),
       *member = vd_value_strdup(&row[6]);
  int64_t off = 0, size = 0;
  /* kept in lindi.json as JSON numbers, which readers parse as doubles: exact to 2^53 */
  int has_range = row[4].type != VD_NULL && row[5].type != VD_NULL && !vd_value_as_int(&row[4], &off) &&
                  !vd_value_as_int(&row[5], &size) && off >= 0 && size >= 0 && off <= (int64_t)LINDI_REF_MAX &&
                  size <= (int64_t)LINDI_REF_MAX;
  if (url || member) {
    rc = lindi_ref_target(w, url, member, has_range, off, size, &val, err);
  } else if (row[2].type == VD_TEXT || row[2].type == VD_BLOB) {
    val = lindi_ref_inline(row[2].p, row[2].n, kind && strcmp(kind, "json") == 0, err);
  } else {
    rc = vd_fail(err, VD_CONSTRAINT, "lindi_refs: give a value, or target or member with offset and size");
  }
  if (!rc && !val && !err->code) rc = vd_nomem(err);
  if (!rc && err->code) rc = err->code;
  if (!rc) rc = lindi_refs_put(w, key, val, replace == VD_CONFLICT_REPLACE, rid, err);
  else cJSON_Delete(val);
  free(key);
  free(kind);
  free(url);
  free(member);
  return rc;
}

static vd_code t_remove(void *tab, int64_t rid, vd_err *err) { return lindi_refs_remove(tab, rid, err); }

static const vd_table_ops ops = {
    .connect = t_connect,
    .disconnect = lindi_tx_disconnect,
    .open = t_open,
    .insert = t_insert,
    .remove = t_remove,
    .begin = lindi_tx_begin,
    .sync = lindi_tx_sync,
    .commit = lindi_tx_commit,
    .rollback = lindi_tx_rollback,
    .savepoint = lindi_tx_savepoint,
    .rollback_to = lindi_tx_rollback_to,
    .release = lindi_tx_release,
    .sees_own_rows = 1,
    .args = "url"};

const vd_relation vd_rel_lindi_refs = {
    .name = "lindi_refs",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 1000, .requests = 1,
    .order_col = -1,
    .open = open_,
    .next = next,
    .eof = eof,
    .column = column,
    .rowid = rowid,
    .close = close_,
    .table = &ops,
    .doc = "one row per lindi.json ref (of an archive or a standalone .lindi.json): key, kind, value, target, offset, size; as a named table, writable"};
