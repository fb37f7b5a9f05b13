/* Streamed leaves (see vtkhdf_stream.h): the count datasets are opened at the first row,
 * read 8192 entries at a time with hyperslab reads and closed after the last; the
 * partition iterator (vtkhdf_parts.c) turns them into starts, and each row is completed
 * here with its time, status and source file. Entries that come from a broken sub-file
 * are fixed as they are summed (vh_iter's fix hook) and reported by status. */
#include "vtkhdf_stream.h"

#include <stdlib.h>
#include <string.h>

#include "vtkhdf_vfd.h"

typedef struct loader {
  struct vh_stream *s;
  int which; /* 0 NumberOfPoints, 1 + k NumberOfCells, 1 + VH_NTOPO + k NumberOfConnectivityIds */
} loader;

#define NDS VH_NCOUNT
static const char *const ds_names[] = {"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"};

/* NumberOfCells[k] given back to an entry of a broken sub-file, for PolyData's scan of
 * earlier entries (sorted by entry) */
typedef struct fixed {
  int64_t e, nc[VH_NTOPO];
} fixed;

struct vh_stream {
  vh_stream_init in;
  char where[1024];
  hid_t g, tg[VH_NTOPO], ds[NDS]; /* -1 until the first read, and again after the last */
  vh_col np, nc[VH_NTOPO], nci[VH_NTOPO], scan[VH_NTOPO];
  loader l[NDS];
  vh_iter it;
  int broken;              /* some count entries come from a sub-file that is not ok */
  int64_t step, unknown;   /* the step of the last row; an entry shared with others (not
                            * recoverable) was seen in it: later starts are unknown */
  fixed *fx;
  int nfx, capfx;
  /* remote: where each count dataset's entries lie in its file (-1: not one run of bytes,
   * so not read ahead), their size, and the entry its next window starts at */
  int64_t at[NDS], esz[NDS], next[NDS];
};

void vh_h5_enter(vh_h5scope *sc, vd_ctx *ctx, int remote, const char *base) {
  H5Eget_auto2(H5E_DEFAULT, &sc->fn, &sc->data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  sc->remote = remote;
  if (remote) vh_vfd_begin(ctx, base); /* sub-files HDF5 opens during a read use this context */
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

static int64_t ds_len(const vh_stream_init *in, int which) {
  return which == 0 ? in->c.n_np : which <= VH_NTOPO ? in->c.n_nc[which - 1] : in->c.n_nci[which - 1 - VH_NTOPO];
}

static vd_code open_one(vh_stream *s, hid_t loc, int which, vd_err *err) {
  int64_t n;
  if (s->in.whole[which]) return VD_OK; /* read whole at open: no id */
  vd_code rc = vh5_open_counts(loc, ds_name(which), s->where, &s->ds[which], &n, err);
  if (!rc && (s->ds[which] < 0 || n != ds_len(&s->in, which)))
    rc = vd_fail(err, VD_IO, "%s: %s changed while it was read", s->where, ds_name(which));
  s->at[which] = -1;
  if (!rc && s->in.remote) { /* contiguous: one run of bytes (virtual, chunked: no address) */
    haddr_t a = H5Dget_offset(s->ds[which]);
    hid_t t = H5Dget_type(s->ds[which]);
    size_t z = t >= 0 ? H5Tget_size(t) : 0;
    if (t >= 0) H5Tclose(t);
    if (a != HADDR_UNDEF && z > 0) s->at[which] = (int64_t)a, s->esz[which] = (int64_t)z;
  }
  return rc;
}

/* Opens the leaf group and its count datasets; they must still be what vh_open saw. */
static vd_code open_ids(vh_stream *s, vd_err *err) {
  char m[256];
  s->g = H5Gopen2(s->in.file, s->in.group, H5P_DEFAULT);
  if (s->g < 0) return vd_fail(err, VD_IO, "%s: cannot open %s again (HDF5: %s)", s->where, s->in.group, vh5_msg(m, sizeof m));
  vd_code rc = open_one(s, s->g, 0, err);
  for (int k = 0; k < (s->in.poly ? VH_NTOPO : 1) && !rc; k++) {
    hid_t loc = s->g;
    if (s->in.poly) {
      if ((s->tg[k] = H5Gopen2(s->g, vh_topo_names[k], H5P_DEFAULT)) < 0)
        return vd_fail(err, VD_IO, "%s: cannot open %s again (HDF5: %s)", s->where, vh_topo_names[k], vh5_msg(m, sizeof m));
      loc = s->tg[k];
    }
    if (!(rc = open_one(s, loc, 1 + k, err))) rc = open_one(s, loc, 1 + VH_NTOPO + k, err);
  }
  return rc;
}

/* The mapping of entry e of count dataset which when its sub-file is not ok, else NULL */
static const vh5_map *broken_at(const vh_stream *s, int which, int64_t e) {
  const vh5_map *m = s->in.ncm[which] ? vh5_map_at(s->in.cm[which], s->in.ncm[which], e) : NULL;
  return m && m->src.state != VH5_OK ? m : NULL;
}

/* Whether entries [lo, lo + n) all come from sub-files that are not ok */
static int all_broken(const vh_stream *s, int which, int64_t lo, int64_t n) {
  for (int64_t e = lo; e < lo + n;) {
    const vh5_map *m = broken_at(s, which, e);
    if (!m) return 0;
    e = m->start + m->count;
  }
  return 1;
}

/* Whether entries [lo, lo + n) of a virtual count dataset all come from plain mappings
 * (or broken ones, which read as zeros) */
static int all_plain(const vh_stream *s, int which, int64_t lo, int64_t n) {
  if (!s->in.ncm[which]) return 0;
  for (int64_t e = lo; e < lo + n;) {
    const vh5_map *m = vh5_map_at(s->in.cm[which], s->in.ncm[which], e);
    if (!m || !m->count || (!m->plain && m->src.state == VH5_OK)) return 0;
    e = m->start + m->count;
  }
  return 1;
}

/* Entries [lo, lo + n) of a virtual count dataset read from its sources directly, one
 * sub-file open at a time: HDF5's own read of a virtual dataset keeps every source file
 * it opened open (about 0.6 MB each) until the dataset is closed, which a layout of many
 * sub-files (or a hostile one) turns into gigabytes. Entries of broken sub-files are 0,
 * as HDF5 reads them. */
static vd_code load_direct(vh_stream *s, int which, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  memset(dst, 0, (size_t)n * sizeof *dst);
  hid_t fapl = s->in.remote ? vh_vfd_fapl(s->in.ctx, s->in.base) : vh_local_fapl(s->in.ctx);
  if (fapl < 0) return vd_fail(err, VD_ERROR, "%s: cannot make an HDF5 access list", s->where);
  if (!s->in.remote) H5Pset_file_locking(fapl, 0, 1); /* as the main file is opened */
  vd_code rc = VD_OK;
  char m[256];
  for (int64_t e = lo; e < lo + n && !rc;) {
    const vh5_map *mp = vh5_map_at(s->in.cm[which], s->in.ncm[which], e);
    int64_t a = e, b = mp->start + mp->count < lo + n ? mp->start + mp->count : lo + n;
    e = b;
    if (mp->src.state != VH5_OK) continue;
    hid_t f = H5Fopen(mp->resolved, H5F_ACC_RDONLY, fapl), ds = f >= 0 ? H5Dopen2(f, mp->dset, H5P_DEFAULT) : -1;
    hid_t fs = ds >= 0 ? H5Dget_space(ds) : -1;
    hsize_t start = (hsize_t)(mp->src_start + (a - mp->start)), count = (hsize_t)(b - a);
    hid_t ms = H5Screate_simple(1, &count, NULL);
    herr_t st = fs >= 0 && ms >= 0 && H5Sget_simple_extent_ndims(fs) == 1
                    ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL)
                    : -1;
    if (st >= 0) st = H5Dread(ds, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, dst + (a - lo));
    if (st < 0)
      rc = vd_fail(err, VD_IO, "%s: cannot read %s[%lld..%lld] from %s (HDF5: %s)", s->where, ds_name(which),
                   (long long)a, (long long)(b - 1), mp->shown, vh5_msg(m, sizeof m));
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
  }
  H5Pclose(fapl);
  return rc;
}

/* Over http, a window past what the driver holds: the next windows of every count
 * dataset are asked for with it, in one round (vh_vfd_want), rather than each window
 * waiting for the one before (a round trip each: 7 for a 1.4 MB file). How far: the
 * next window of each, then more windows of each in turn while what they lack comes to
 * less than twice what the file has given so far (its head, vtkhdf_prefix, at least),
 * AHEAD_BYTES at most. A full scan then costs a round per tripling of what was read up
 * to AHEAD_BYTES, then one per AHEAD_BYTES; a query that stops early (LIMIT) has read
 * ahead at most twice what it had read. */
#define AHEAD_BYTES ((int64_t)4 << 20)
static void read_ahead(vh_stream *s, int which, int64_t lo, int64_t n) {
  if (s->at[which] < 0 || !vh_vfd_missing(s->ds[which], s->at[which] + lo * s->esz[which], n * s->esz[which])) return;
  int order[NDS], k = 0;
  order[k++] = which; /* this window's dataset first */
  for (int j = 0; j < NDS; j++)
    if (j != which && s->ds[j] >= 0 && s->at[j] >= 0) order[k++] = j;
  int64_t budget = vh_vfd_read(s->ds[which]), lacks = 0, len[NDS] = {0};
  if (budget > AHEAD_BYTES) budget = AHEAD_BYTES;
  for (int64_t t = 0, grew = 1; grew && (t == 0 || lacks < budget); t++) {
    grew = 0;
    for (int i = 0; i < k && (t == 0 || lacks < budget); i++) {
      int j = order[i];
      int64_t a = (j == which ? lo : s->next[j]) + t * n, total = ds_len(&s->in, j);
      if (a >= total) continue;
      int64_t w = (a + n < total ? n : total - a) * s->esz[j];
      lacks += vh_vfd_missing(s->ds[j], s->at[j] + a * s->esz[j], w);
      len[j] += w, grew = 1;
    }
  }
  hid_t obj[NDS];
  int64_t off[NDS], l[NDS];
  int m = 0;
  for (int i = 0; i < k; i++) {
    int j = order[i];
    if (len[j]) obj[m] = s->ds[j], off[m] = s->at[j] + (j == which ? lo : s->next[j]) * s->esz[j], l[m++] = len[j];
  }
  vh_vfd_want(obj, off, l, m); /* a failure: the read below asks again and says why */
}

static vd_code load(void *arg, int64_t lo, int64_t n, int64_t *dst, vd_err *err) {
  loader *l = arg;
  vh_stream *s = l->s;
  if (all_broken(s, l->which, lo, n)) {
    /* HDF5 would read the fill value after failing to open the source again (a request
     * per read for a remote one): the same zeros, without asking */
    memset(dst, 0, (size_t)n * sizeof *dst);
    return VD_OK;
  }
  vh_h5scope sc;
  if (all_plain(s, l->which, lo, n)) { /* the count dataset itself is never opened */
    vh_h5_enter(&sc, s->in.ctx, s->in.remote, s->in.base);
    vd_code rc = load_direct(s, l->which, lo, n, dst, err);
    vh_h5_leave(&sc);
    return rc;
  }
  vh_h5_enter(&sc, s->in.ctx, s->in.remote, s->in.base);
  vd_code rc = s->g < 0 ? open_ids(s, err) : VD_OK;
  if (rc) close_ids(s);
  else {
    if (s->in.remote) read_ahead(s, l->which, lo, n);
    rc = vh5_read_rows(s->ds[l->which], lo, n, dst, s->where, ds_name(l->which), err);
    s->next[l->which] = lo + n;
  }
  vh_h5_leave(&sc);
  return rc;
}

/* The size a broken entry's rows have in big dataset i: the mapping that starts at start
 * and comes from the same sub-file (the rows are still mapped to it); 0 when none does
 * (an empty partition maps nothing). */
static int64_t recover(const vh_stream *s, int i, int64_t start, const vh5_map *from) {
  const vh5_map *m = s->in.bm[i];
  int n = s->in.nbm[i], lo = 0, hi = n;
  while (lo < hi) { /* the first mapping that starts at or after start */
    int mid = (lo + hi) / 2;
    if (m[mid].start < start) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n && m[lo].start == start; lo++)
    if (!strcmp(m[lo].resolved, from->resolved)) return m[lo].count;
  return 0;
}

static int64_t fixed_nc(const vh_stream *s, int k, int64_t e, int64_t v) {
  int lo = 0, hi = s->nfx;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (s->fx[mid].e < e) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->nfx && s->fx[lo].e == e ? s->fx[lo].nc[k] : v;
}

static int64_t fixscan(void *arg, int k, int64_t e, int64_t v) {
  const vh_stream *s = arg;
  return broken_at(s, 1 + k, e) ? fixed_nc(s, k, e, v) : v;
}

/* Keeps a PolyData entry's fixed NumberOfCells for later scans (entries come in order;
 * a step that goes back, a static mesh, finds them already kept) */
static vd_code keep_fixed(vh_stream *s, int64_t e, const int64_t *nc, vd_err *err) {
  if (s->nfx && s->fx[s->nfx - 1].e >= e) return VD_OK;
  if (s->nfx == s->capfx) {
    int nc2 = s->capfx ? s->capfx * 2 : 16;
    fixed *p = realloc(s->fx, (size_t)nc2 * sizeof *p);
    if (!p) return vd_nomem(err);
    s->fx = p, s->capfx = nc2;
  }
  s->fx[s->nfx].e = e;
  memcpy(s->fx[s->nfx].nc, nc, sizeof s->fx[s->nfx].nc);
  s->nfx++;
  return VD_OK;
}

/* vh_iter's fix: an entry alone in a mapping to a broken sub-file gets the size its rows
 * have in the big datasets, at the starts the iterator is at */
static vd_code fix(void *arg, const vh_iter *it, int64_t e, int64_t *np, int64_t *nc, int64_t *nci, vd_err *err) {
  vh_stream *s = arg;
  int poly = s->in.poly, any = 0;
  const vh5_map *m;
  if ((m = broken_at(s, 0, e)) && m->count == 1) *np = recover(s, 0, it->pt, m);
  for (int k = 0; k < (poly ? VH_NTOPO : 1); k++) {
    if ((m = broken_at(s, 1 + k, e)) && m->count == 1) {
      /* UnstructuredGrid: Types rows; PolyData: the topology's Offsets, NC + 1 of them */
      int64_t v = poly ? recover(s, 1 + 2 * k, it->offs[k] + it->j, m) : recover(s, 1, it->cell[0], m);
      nc[k] = poly && v > 0 ? v - 1 : v;
      any = 1;
    }
    if ((m = broken_at(s, 1 + VH_NTOPO + k, e)) && m->count == 1) nci[k] = recover(s, 2 + 2 * k, it->conn[k], m);
  }
  return poly && any ? keep_fixed(s, e, nc, err) : VD_OK;
}

void vh_stream_init_free(vh_stream_init *in) {
  free(in->group);
  /* the stream owns what c points to (vh_counts only reads, hence const there) */
  free((void *)in->c.part_offsets), free((void *)in->c.number_of_parts), free((void *)in->c.point_offsets);
  free((void *)in->c.cell_offsets), free((void *)in->c.conn_offsets), free((void *)in->c.values);
  for (int i = 0; i < VH_NCOUNT; i++) free(in->whole[i]), vh5_maps_free(in->cm[i], in->ncm[i]);
  for (int i = 0; i < VH_NBIG; i++) vh5_maps_free(in->bm[i], in->nbm[i]);
  memset(in, 0, sizeof *in);
}

static void release(vh_stream *s);

/* A count column: in memory when read whole, else read in windows */
static void column(vh_stream *s, vh_col *c, int which) {
  if (s->in.whole[which]) vh_col_mem(c, ds_name(which), s->in.whole[which], ds_len(&s->in, which));
  else vh_col_lazy(c, ds_name(which), s->where, ds_len(&s->in, which), load, &s->l[which]);
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
  s->g = -1;
  s->step = -1;
  for (int k = 0; k < VH_NTOPO; k++) s->tg[k] = -1;
  for (int i = 0; i < NDS; i++) s->ds[i] = -1, s->l[i] = (loader){s, i};
  int ntopo = in->poly ? VH_NTOPO : 1;
  vh_col *pnc[VH_NTOPO], *pnci[VH_NTOPO], *pscan[VH_NTOPO];
  column(s, &s->np, 0);
  for (int k = 0; k < ntopo; k++) {
    column(s, &s->nc[k], 1 + k);
    column(s, &s->nci[k], 1 + VH_NTOPO + k);
    column(s, &s->scan[k], 1 + k);
    pnc[k] = &s->nc[k], pnci[k] = &s->nci[k], pscan[k] = &s->scan[k];
  }
  for (int i = 0; i < NDS; i++)
    for (int k = 0; k < s->in.ncm[i]; k++) s->broken |= s->in.cm[i][k].src.state != VH5_OK;
  vd_code rc = vh_iter_init(&s->it, &s->in.c, &s->np, pnc, pnci, pscan, s->where, err);
  if (rc) {
    vh_stream_free(s);
    return rc;
  }
  if (s->broken) {
    s->it.fix = fix, s->it.fix_arg = s;
    if (in->poly) s->it.fixscan = fixscan;
  }
  *out = s;
  return VD_OK;
}

/* A partition row from its slot: time, counts, starts, status and source file */
static void make_row(vh_stream *s, const vh_slot *x, vh_part *p, vh_topo *topo) {
  const vh_stream_init *in = &s->in;
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
  p->n_trees = VH_NULL;
  p->topo = in->poly ? topo : NULL;
  p->status = "ok";
  p->n_points = x->np;
  p->n_cells = x->nc;
  p->n_conn = x->nci;
  p->source_file = in->holder;
  if (!in->nbm[0] && !in->ncm[0] && !s->broken) return; /* one file: no virtual dataset to look into */
  /* an entry from a broken sub-file (the first count dataset that says so names it); one
   * that shares its mapping makes the starts after it in the step unknowable */
  const vh5_map *bad = NULL;
  int unknown = 0;
  if (s->broken) {
    int shared = 0;
    for (int i = 0; i < NDS; i++) {
      int k = i == 0 ? 0 : (i - 1) % VH_NTOPO;
      if (!in->poly && k > 0) continue;
      const vh5_map *m = broken_at(s, i, x->entry);
      if (m && !bad) bad = m;
      if (m && m->count > 1) shared = 1;
    }
    if (x->step != s->step) s->step = x->step, s->unknown = 0;
    unknown = (int)s->unknown;
    if (shared) s->unknown = 1;
  }
  if (unknown) {
    p->point_off = p->cell_off = p->conn_off = p->offsets_off = VH_NULL;
    for (int k = 0; in->poly && k < VH_NTOPO; k++) topo->cell_off[k] = topo->conn_off[k] = topo->offs_off[k] = VH_NULL;
    if (!bad) p->status = "offsets_unknown";
  }
  /* the file behind the partition's Points; for an empty partition (no Points rows) the
   * file its NumberOfPoints entry comes from */
  const vh5_map *mp = !unknown && in->nbm[0] && x->np > 0 ? vh5_map_at(in->bm[0], in->nbm[0], x->point_off) : NULL;
  if (mp && mp->src.state != VH5_OK) bad = mp;
  if (bad) {
    p->status = vh5_status(bad->src.state);
    p->n_points = p->n_cells = p->n_conn = VH_NULL;
    for (int k = 0; in->poly && k < VH_NTOPO; k++) topo->nc[k] = topo->nci[k] = VH_NULL;
    p->source_file = bad->shown;
  } else {
    const vh5_map *me = in->ncm[0] ? vh5_map_at(in->cm[0], in->ncm[0], x->entry) : NULL;
    p->source_file = mp ? mp->shown : me ? me->shown : in->holder;
  }
}

vd_code vh_stream_fill(vh_stream *s, vh_part *rows, vh_topo *topos, int max, int *n, vd_err *err) {
  vh_slot x[VH_BATCH];
  if (max > VH_BATCH) max = VH_BATCH;
  vd_code rc = vh_iter_fill(&s->it, x, s->in.poly ? topos : NULL, max, n, err);
  for (int i = 0; i < *n; i++) make_row(s, &x[i], &rows[i], &topos[i]);
  if (rc || *n < max) release(s); /* done with this leaf: give back its ids and windows now */
  return rc;
}

static void release(vh_stream *s) {
  if (s->g >= 0) {
    vh_h5scope sc;
    vh_h5_enter(&sc, s->in.ctx, s->in.remote, s->in.base);
    close_ids(s);
    vh_h5_leave(&sc);
  }
  vh_col_free(&s->np);
  for (int k = 0; k < VH_NTOPO; k++) vh_col_free(&s->nc[k]), vh_col_free(&s->nci[k]), vh_col_free(&s->scan[k]);
}

void vh_stream_done(vh_stream *s) { release(s); }

void vh_stream_free(vh_stream *s) {
  if (!s) return;
  release(s);
  vh_stream_init_free(&s->in);
  free(s->fx);
  free(s);
}
