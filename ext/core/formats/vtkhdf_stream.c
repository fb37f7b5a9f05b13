/* Streamed leaves (see vtkhdf_stream.h): the count datasets are read 8192 entries at a
 * time with hyperslab reads, the partition iterator (vtkhdf_parts.c) turns them into
 * starts, and each row is completed here with its time, status and source file. */
#include "vtkhdf_stream.h"

#include <stdlib.h>
#include <string.h>

#include "vtkhdf_vfd.h"

typedef struct loader {
  struct vh_stream *s;
  hid_t ds;
  const char *name;
} loader;

struct vh_stream {
  vh_stream_init in;
  char where[512];
  vh_col np, nc[VH_NTOPO], nci[VH_NTOPO], scan[VH_NTOPO];
  loader lnp, lnc[VH_NTOPO], lnci[VH_NTOPO];
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

static vd_code load(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  loader *l = arg;
  vh_h5scope sc;
  vh_h5_enter(&sc, l->s->in.ctx, l->s->in.remote);
  vd_code rc = vh5_read_rows(l->ds, lo, n, dst, l->s->where, l->name, err);
  vh_h5_leave(&sc);
  return rc;
}

void vh_stream_init_free(vh_stream_init *in) {
  if (in->np >= 0) H5Dclose(in->np);
  for (int k = 0; k < VH_NTOPO; k++) {
    if (in->nc[k] >= 0) H5Dclose(in->nc[k]);
    if (in->nci[k] >= 0) H5Dclose(in->nci[k]);
  }
  for (int i = 0; i < 5; i++) free(in->steps_own[i]);
  free(in->values);
  vh5_maps_free(in->pm, in->npm);
  vh5_maps_free(in->cm, in->ncm);
}

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
  s->in.c.values = s->in.values;
  int ntopo = in->poly ? VH_NTOPO : 1;
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO], *pscan[VH_NTOPO];
  s->lnp = (loader){s, in->np, "NumberOfPoints"};
  vh_col_lazy(&s->np, "NumberOfPoints", s->where, in->n_np, load, &s->lnp);
  for (int k = 0; k < ntopo; k++) {
    s->lnc[k] = (loader){s, in->nc[k], "NumberOfCells"};
    s->lnci[k] = (loader){s, in->nci[k], "NumberOfConnectivityIds"};
    vh_col_lazy(&s->nc[k], "NumberOfCells", s->where, in->n_nc[k], load, &s->lnc[k]);
    vh_col_lazy(&s->nci[k], "NumberOfConnectivityIds", s->where, in->n_nci[k], load, &s->lnci[k]);
    vh_col_lazy(&s->scan[k], "NumberOfCells", s->where, in->n_nc[k], load, &s->lnc[k]);
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

vd_code vh_stream_next(vh_stream *s, vh_part *p, vh_topo *topo, int *eof, vd_err *err) {
  vh_slot x;
  vd_code rc = vh_iter_next(&s->it, &x, topo, eof, err);
  if (rc || *eof) return rc;
  const vh_stream_init *in = &s->in;
  p->block = in->block;
  p->type = in->type;
  p->step = x.step;
  p->partition = x.partition;
  p->has_time = in->values && x.step < in->c.n_values;
  p->time = p->has_time ? in->values[x.step] : 0;
  p->point_off = x.point_off;
  p->cell_off = x.cell_off;
  p->conn_off = x.conn_off;
  p->offsets_off = x.offsets_off;
  p->topo = in->poly ? topo : NULL;
  p->status = "ok";
  /* the file behind the partition's Points; for an empty partition (no Points rows) the
   * file its NumberOfPoints entry comes from */
  const vh5_map *mp = in->npm ? vh5_map_at(in->pm, in->npm, x.point_off) : NULL;
  if (mp && !mp->exists && x.np > 0) {
    p->status = "missing_source";
    p->n_points = p->n_cells = p->n_conn = VH_NULL;
    for (int k = 0; in->poly && k < VH_NTOPO; k++) topo->nc[k] = topo->nci[k] = VH_NULL;
    p->source_file = mp->resolved;
  } else {
    p->n_points = x.np;
    p->n_cells = x.nc;
    p->n_conn = x.nci;
    const vh5_map *me = in->ncm ? vh5_map_at(in->cm, in->ncm, x.entry) : NULL;
    p->source_file = mp && x.np > 0 ? mp->resolved : me ? me->resolved : in->holder;
  }
  return VD_OK;
}

void vh_stream_free(vh_stream *s) {
  if (!s) return;
  vh_h5scope sc;
  vh_h5_enter(&sc, s->in.ctx, s->in.remote);
  vh_stream_init_free(&s->in);
  vh_h5_leave(&sc);
  vh_col_free(&s->np);
  for (int k = 0; k < VH_NTOPO; k++) vh_col_free(&s->nc[k]), vh_col_free(&s->nci[k]), vh_col_free(&s->scan[k]);
  free(s);
}
