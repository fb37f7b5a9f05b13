/* Streamed leaves (see vtkhdf_stream.h): the count datasets are opened at the first row,
 * read 8192 entries at a time with hyperslab reads and closed after the last; the
 * partition iterator (vtkhdf_parts.c) turns them into starts, and each row is completed
 * here with its time, status and source file. */
#include "vtkhdf_stream.h"

#include <stdlib.h>
#include <string.h>

#include "vtkhdf_vfd.h"

typedef struct loader {
  struct vh_stream *s;
  int which; /* 0 NumberOfPoints, 1 + k NumberOfCells, 1 + VH_NTOPO + k NumberOfConnectivityIds */
} loader;

#define NDS (1 + 2 * VH_NTOPO)
static const char *const ds_names[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"};

struct vh_stream {
  vh_stream_init in;
  char where[512];
  hid_t g, tg[VH_NTOPO], ds[NDS]; /* -1 until the first read, and again after the last */
  vh_col np, nc[VH_NTOPO], nci[VH_NTOPO], scan[VH_NTOPO];
  loader l[NDS];
  vh_iter it;
};

void vh_h5_enter(vh_h5scope *sc, vd_ctx *ctx, int remote) {
  H5Eget_auto2(H5E_DEFAULT, &sc->fn, &sc->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  sc->remote = remote;
  if (remote) vh_vfd_begin(ctx); /* sub-files HDF5 opens during a read use this context */
}

void vh_h5_leave(vh_h5scope *sc) {
  if (sc->remote) vh_vfd_end();
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, sc->fn, sc->data);
}

static void close_ids(vh_stream *s) {
  for (int i = 0; i < NDS; i++)
    if (s->ds[i] >= 0) H5Dclose(s->ds[i]), s->ds[i] = -1;
  for (int k = 0; k < VH_NTOPO; k++)
    if (s->tg[k] >= 0) H5Gclose(s->tg[k]), s->tg[k] = -1;
  if (s->g >= 0) H5Gclose(s->g), s->g = -1;
}

static const char *ds_name(int which) { return ds_names[which == 0 ? 0 : which <= VH_NTOPO ? 1 : 2]; }

static vd_code open_one(vh_stream *s, hid_t loc, int which, int64_t want, vd_err *err) {
  int64_t n;
  vd_code rc = vh5_open_counts(loc, ds_name(which), s->where, &s->ds[which], &n, err);
  if (!rc && (s->ds[which] < 0 || n != want))
    rc = vd_fail(err, VD_IO, "%s: %s changed while it was read", s->where, ds_name(which));
  return rc;
}

/* Opens the leaf group and its count datasets; they must still be what vh_open saw. */
static vd_code open_ids(vh_stream *s, vd_err *err) {
  char m[256];
  s->g = H5Gopen2(s->in.file, s->in.group, H5P_DEFAULT);
  if (s->g < 0) return vd_fail(err, VD_IO, "%s: cannot open %s again (HDF5: %s)", s->where, s->in.group, vh5_msg(m, sizeof m));
  vd_code rc = open_one(s, s->g, 0, s->in.c.n_np, err);
  for (int k = 0; k < (s->in.poly ? VH_NTOPO : 1) && !rc; k++) {
    hid_t loc = s->g;
    if (s->in.poly) {
      if ((s->tg[k] = H5Gopen2(s->g, vh_topo_names[k], H5P_DEFAULT)) < 0)
        return vd_fail(err, VD_IO, "%s: cannot open %s again (HDF5: %s)", s->where, vh_topo_names[k], vh5_msg(m, sizeof m));
      loc = s->tg[k];
    }
    if (!(rc = open_one(s, loc, 1 + k, s->in.c.n_nc[k], err))) rc = open_one(s, loc, 1 + VH_NTOPO + k, s->in.c.n_nci[k], err);
  }
  return rc;
}

static vd_code load(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  loader *l = arg;
  vh_stream *s = l->s;
  vh_h5scope sc;
  vh_h5_enter(&sc, s->in.ctx, s->in.remote);
  vd_code rc = s->g < 0 ? open_ids(s, err) : VD_OK;
  if (rc) close_ids(s);
  else rc = vh5_read_rows(s->ds[l->which], lo, n, dst, s->where, ds_name(l->which), err);
  vh_h5_leave(&sc);
  return rc;
}

void vh_stream_init_free(vh_stream_init *in) {
  free(in->group);
  /* the stream owns what c points to (vh_counts only reads, hence const there) */
  free((void *)in->c.part_offsets), free((void *)in->c.number_of_parts), free((void *)in->c.point_offsets);
  free((void *)in->c.cell_offsets), free((void *)in->c.conn_offsets), free((void *)in->c.values);
  vh5_maps_free(in->pm, in->npm);
  vh5_maps_free(in->cm, in->ncm);
  memset(in, 0, sizeof *in);
}

static void release(vh_stream *s);

vd_code vh_stream_new(vh_stream_init *in, vh_stream **out, vd_err *err) {
  *out = NULL;
  vh_stream *s = calloc(1, sizeof *s);
  if (!s) {
    vh_stream_init_free(in);
    return vd_nomem(err);
  }
  s->in = *in;
  snprintf(s->where, sizeof s->where, "%s", in->where);
  s->in.where = s->where;
  s->g = -1;
  for (int k = 0; k < VH_NTOPO; k++) s->tg[k] = -1;
  for (int i = 0; i < NDS; i++) s->ds[i] = -1, s->l[i] = (loader){s, i};
  int ntopo = in->poly ? VH_NTOPO : 1;
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO], *pscan[VH_NTOPO];
  vh_col_lazy(&s->np, "NumberOfPoints", s->where, in->c.n_np, load, &s->l[0]);
  for (int k = 0; k < ntopo; k++) {
    vh_col_lazy(&s->nc[k], "NumberOfCells", s->where, in->c.n_nc[k], load, &s->l[1 + k]);
    vh_col_lazy(&s->nci[k], "NumberOfConnectivityIds", s->where, in->c.n_nci[k], load, &s->l[1 + VH_NTOPO + k]);
    vh_col_lazy(&s->scan[k], "NumberOfCells", s->where, in->c.n_nc[k], load, &s->l[1 + k]);
    pnc[k] = &s->nc[k], pnci[k] = &s->nci[k], pscan[k] = &s->scan[k];
  }
  vd_code rc = vh_iter_init(&s->it, &s->in.c, &s->np, pnc, pnci, pscan, s->where, err);
  if (rc) {
    vh_stream_free(s);
    return rc;
  }
  *out = s;
  return VD_OK;
}

/* A partition row from its slot: time, counts, starts, status and source file */
static void make_row(const vh_stream_init *in, const vh_slot *x, vh_part *p, vh_topo *topo) {
  p->block = in->block;
  p->type = in->type;
  p->step = x->step;
  p->partition = x->partition;
  p->has_time = in->c.values && x->step < in->c.n_values;
  p->time = p->has_time ? in->c.values[x->step] : 0;
  p->point_off = x->point_off;
  p->cell_off = x->cell_off;
  p->conn_off = x->conn_off;
  p->offsets_off = x->offsets_off;
  p->topo = in->poly ? topo : NULL;
  p->status = "ok";
  p->n_points = x->np;
  p->n_cells = x->nc;
  p->n_conn = x->nci;
  p->source_file = in->holder;
  if (!in->npm && !in->ncm) return; /* one file: no virtual dataset to look into */
  /* the file behind the partition's Points; for an empty partition (no Points rows) the
   * file its NumberOfPoints entry comes from */
  const vh5_map *mp = in->npm ? vh5_map_at(in->pm, in->npm, x->point_off) : NULL;
  if (mp && !mp->exists && x->np > 0) {
    p->status = "missing_source";
    p->n_points = p->n_cells = p->n_conn = VH_NULL;
    for (int k = 0; in->poly && k < VH_NTOPO; k++) topo->nc[k] = topo->nci[k] = VH_NULL;
    p->source_file = mp->resolved;
  } else {
    const vh5_map *me = in->ncm ? vh5_map_at(in->cm, in->ncm, x->entry) : NULL;
    p->source_file = mp && x->np > 0 ? mp->resolved : me ? me->resolved : in->holder;
  }
}

vd_code vh_stream_fill(vh_stream *s, vh_part *rows, vh_topo *topos, int max, int *n, vd_err *err) {
  vh_slot x[VH_BATCH];
  if (max > VH_BATCH) max = VH_BATCH;
  vd_code rc = vh_iter_fill(&s->it, x, s->in.poly ? topos : NULL, max, n, err);
  for (int i = 0; i < *n; i++) make_row(&s->in, &x[i], &rows[i], &topos[i]);
  if (rc || *n < max) release(s); /* done with this leaf: give back its ids and windows now */
  return rc;
}

static void release(vh_stream *s) {
  if (s->g >= 0) {
    vh_h5scope sc;
    vh_h5_enter(&sc, s->in.ctx, s->in.remote);
    close_ids(s);
    vh_h5_leave(&sc);
  }
  vh_col_free(&s->np);
  for (int k = 0; k < VH_NTOPO; k++) vh_col_free(&s->nc[k]), vh_col_free(&s->nci[k]), vh_col_free(&s->scan[k]);
}

void vh_stream_free(vh_stream *s) {
  if (!s) return;
  release(s);
  vh_stream_init_free(&s->in);
  free(s);
}
