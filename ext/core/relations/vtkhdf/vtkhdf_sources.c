/* vtkhdf_sources(path): one row per external link and per virtual-dataset mapping under
 * /VTKHDF (following external links into sub-files), with where the named file really
 * is, whether it exists, and whether it serves what is asked of it (status, problem).
 * URLs are shown redacted (no userinfo, no ?query). */
#include "vtkhdf_cursor.h"

static const vd_colspec cols[] = {{"object", VD_TEXT, 0},        {"kind", VD_TEXT, 0},   {"file", VD_TEXT, 0},
                                  {"resolved_path", VD_TEXT, 0}, {"target", VD_TEXT, 0}, {"exists", VD_INT, 0},
                                  {"status", VD_TEXT, 0},        {"problem", VD_TEXT, 0}, {"url", VD_TEXT, VD_COL_ARG}};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  return vh_cur_open(ctx, "vtkhdf_sources", a, VH_SOURCES, VH_FAN_NONE, out, err);
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  const vh_source *s = &((vh_cur *)cur)->doc.sources[((vh_cur *)cur)->row];
  switch (col) {
    case 0: *v = vd_text(s->object); break;
    case 1: *v = vd_text(s->kind); break;
    case 2: *v = vd_text(s->file); break;
    case 3: *v = vd_text(s->resolved); break;
    case 4: *v = vd_text(s->target); break;
    case 5: vh_put(v, s->exists); break;
    case 6: *v = vd_text(s->status); break;
    default: if (s->problem) *v = vd_text(s->problem); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vtkhdf_sources = {
    .name = "vtkhdf_sources",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 5, .requests = 4,
    .order_col = -1,
    .open = open_,
    .next = vh_cur_next,
    .eof = vh_cur_eof,
    .column = column,
    .rowid = vh_cur_rowid,
    .close = vh_cur_close,
    .doc = "the external links and virtual-dataset mappings of a VTKHDF file, with the file each resolves to"};
