/* vds_metadata(url): the key/value metadata of VolumeDataLayout. Numbers come out as
 * numbers, vectors as JSON text, BLOBs decoded from base64. */
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "util/base64.h"
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"category", VD_TEXT, 0}, {"name", VD_TEXT, 0}, {"type", VD_TEXT, 0}, {"value", VD_NULL, 0}, VDS_URL_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 0, &c, err);
  if (!rc) c->nrows = c->ds ? c->ds->layout.nmeta : 0;
  *out = c;
  return rc;
}

static vd_code value(vds_cur *c, const vds_metadata_item *m, vd_value *v, vd_err *err) {
  const cJSON *j = m->value;
  char where[600];
  if (!j || cJSON_IsNull(j)) {
    *v = vd_null();
  } else if (strcmp(m->type, "BLOB") == 0) {
    unsigned char *bytes;
    size_t n;
    if (!cJSON_IsString(j) || vd_base64_decode(j->valuestring, strlen(j->valuestring), &bytes, &n)) {
      vd_url_redact(c->ds->url, where, sizeof where);
      return vd_fail(err, VD_INVALID, "%s/VolumeDataLayout: metadata %s/%s is not valid base64", where,
                     m->category, m->name);
    }
    *v = vd_owned_blob(bytes, n);
  } else if (cJSON_IsString(j)) {
    *v = vd_text(j->valuestring);
  } else if (cJSON_IsNumber(j)) {
    /* an Int that is no whole number in int64 range (2.5, 1e300) comes out as written,
     * as a real: casting it would be undefined */
    double d = j->valuedouble;
    int whole = d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == floor(d);
    *v = strcmp(m->type, "Int") == 0 && whole ? vd_int((int64_t)d) : vd_real(d);
  } else if (cJSON_IsBool(j)) {
    *v = vd_int(cJSON_IsTrue(j));
  } else {
    char *s = cJSON_PrintUnformatted(j);
    if (!s) return vd_nomem(err);
    *v = vd_owned_text(s);
  }
  return VD_OK;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  vds_cur *c = cur;
  const vds_metadata_item *m = &c->ds->layout.meta[c->row];
  switch (col) {
    case 0: *v = vd_text(m->category); return VD_OK;
    case 1: *v = vd_text(m->name); return VD_OK;
    case 2: *v = vd_text(m->type); return VD_OK;
    default: return value(c, m, v, err);
  }
}

const vd_relation vd_rel_vds_metadata = {
    .name = "vds_metadata",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 10, .requests = 2,
    .order_col = -1,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "one row per metadata item of the layout: category, name, type, value"};
