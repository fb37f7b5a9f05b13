/* vds_channels(url): one row per channel descriptor; channel 0 is the primary. */
#include "vds_cursor.h"

static const vd_colspec cols[] = {
    {"channel", VD_INT, 0},     {"name", VD_TEXT, 0},        {"unit", VD_TEXT, 0},
    {"format", VD_TEXT, 0},     {"components", VD_INT, 0},   {"value_min", VD_REAL, 0},
    {"value_max", VD_REAL, 0},  {"mapping", VD_TEXT, 0},     {"mapped_values", VD_INT, 0},
    {"discrete", VD_INT, 0},    {"renderable", VD_INT, 0},   {"allow_lossy_compression", VD_INT, 0},
    {"use_no_value", VD_INT, 0}, {"no_value", VD_REAL, 0},   {"integer_scale", VD_REAL, 0},
    {"integer_offset", VD_REAL, 0}, VDS_URL_ARG};

static vd_code open_(vd_ctx *ctx, const vd_value *a, int na, const vd_filter *f, int nf, void **out, vd_err *err) {
  (void)f, (void)nf;
  vds_cur *c;
  vd_code rc = vds_cur_open(ctx, a, na, 0, &c, err);
  if (!rc) c->nrows = c->ds ? c->ds->layout.nchannels : 0;
  *out = c;
  return rc;
}

static vd_code column(void *cur, int col, vd_value *v, vd_err *err) {
  (void)err;
  vds_cur *c = cur;
  const vds_channel *ch = &c->ds->layout.channels[c->row];
  switch (col) {
    case 0: *v = vd_int(c->row); break;
    case 1: *v = vd_text(ch->name); break;
    case 2: *v = vd_text(ch->unit); break;
    case 3: *v = vd_text(vds_format_name(ch->format)); break;
    case 4: *v = vd_int(ch->components); break;
    case 5: *v = vd_real(ch->vmin); break;
    case 6: *v = vd_real(ch->vmax); break;
    case 7: *v = vd_text(ch->per_trace ? "PerTrace" : "Direct"); break;
    case 8: *v = vd_int(ch->mapped_values); break;
    case 9: *v = vd_int(ch->discrete); break;
    case 10: *v = vd_int(ch->renderable); break;
    case 11: *v = vd_int(ch->lossy); break;
    case 12: *v = vd_int(ch->use_no_value); break;
    case 13: *v = ch->use_no_value ? vd_real(ch->no_value) : vd_null(); break;
    case 14: *v = vd_real(ch->scale); break;
    default: *v = vd_real(ch->offset); break;
  }
  return VD_OK;
}

const vd_relation vd_rel_vds_channels = {
    .name = "vds_channels",
    VD_COLS(cols),
    .flags = VD_REL_IO,
    .rows = 2, .requests = 2,
    .order_col = 0,
    .open = open_,
    .next = vds_cur_next,
    .eof = vds_cur_eof,
    .column = column,
    .rowid = vds_cur_rowid,
    .close = vds_cur_close,
    .doc = "one row per channel of the layout: format, components, value range, no-value, mapping"};
