/* The codec of the VTKHDF reader's messages between vdsql and its HDF5 helper
 * (vtkhdf_wire.h). */
#include "vtkhdf_wire.h"

#include <stdlib.h>
#include <string.h>

#define NEW_ID 0x80000000u

void vhw_ids_free(vhw_ids *m) {
  free(m->key), free(m->id);
  memset(m, 0, sizeof *m);
}

static uint32_t slot_of(const vhw_ids *m, const void *k) {
  uintptr_t h = (uintptr_t)k;
  h ^= h >> 17, h *= 0x9e3779b97f4a7c15ull, h ^= h >> 29;
  uint32_t i = (uint32_t)h & (m->cap - 1);
  while (m->key[i] && m->key[i] != k) i = (i + 1) & (m->cap - 1);
  return i;
}

static int grow(vhw_ids *m) {
  vhw_ids g = {calloc(m->cap ? m->cap * 2 : 64, sizeof(void *)), calloc(m->cap ? m->cap * 2 : 64, sizeof(uint32_t)),
               m->cap ? m->cap * 2 : 64, m->n};
  if (!g.key || !g.id) return vhw_ids_free(&g), -1;
  for (uint32_t i = 0; i < m->cap; i++)
    if (m->key[i]) {
      uint32_t s = slot_of(&g, m->key[i]);
      g.key[s] = m->key[i], g.id[s] = m->id[i];
    }
  vhw_ids_free(m);
  *m = g;
  return 0;
}

int vhw_put_sid(vd_buf *b, vhw_ids *m, const char *s) {
  if (!s) return vd_wr_u32(b, 0);
  if ((m->n + 1) * 2 > m->cap && grow(m)) return -1;
  uint32_t i = slot_of(m, s);
  if (m->key[i]) return vd_wr_u32(b, m->id[i]);
  m->key[i] = s, m->id[i] = ++m->n;
  return vd_wr_u32(b, m->id[i] | NEW_ID) || vd_wr_str(b, s) ? -1 : 0;
}

const char *vhw_get_sid(vd_rd *r, vh_doc *d) {
  uint32_t id = vd_rd_u32(r);
  if (!id || r->bad) return NULL;
  if (!(id & NEW_ID)) {
    if (id > (uint32_t)d->nstrs) return r->bad = 1, NULL;
    return d->strs[id - 1];
  }
  char *s = vd_rd_str(r);
  if (!s || (id & ~NEW_ID) != (uint32_t)d->nstrs + 1) return free(s), r->bad = 1, NULL;
  if (d->nstrs == d->capstrs) {
    int nc = d->capstrs ? d->capstrs * 2 : 16;
    char **p = realloc(d->strs, (size_t)nc * sizeof *p);
    if (!p) return free(s), r->bad = 1, NULL;
    d->strs = p, d->capstrs = nc;
  }
  return d->strs[d->nstrs++] = s;
}

static int put_i64s(vd_buf *b, const int64_t *v, int64_t n) {
  if (vd_wr_u32(b, v != NULL)) return -1;
  for (int64_t i = 0; v && i < n; i++)
    if (vd_wr_u64(b, (uint64_t)v[i])) return -1;
  return 0;
}

int vhw_put_doc(vd_buf *b, vhw_ids *m, const vh_doc *d) {
  int bad = vd_wr_u32(b, (uint32_t)d->narrays);
  for (int i = 0; i < d->narrays && !bad; i++) {
    const vh_array *a = &d->arrays[i];
    bad = vd_wr_str(b, a->block) || vd_wr_str(b, a->association) || vd_wr_str(b, a->name) || vd_wr_str(b, a->type) ||
          vd_wr_str(b, a->attribute) || vd_wr_str(b, a->source_file) || vd_wr_u64(b, (uint64_t)a->components) ||
          vd_wr_u64(b, (uint64_t)a->tuples);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->nsources);
  for (int i = 0; i < d->nsources && !bad; i++) {
    const vh_source *s = &d->sources[i];
    bad = vd_wr_str(b, s->object) || vd_wr_str(b, s->kind) || vd_wr_str(b, s->file) || vd_wr_str(b, s->resolved) ||
          vd_wr_str(b, s->target) || vd_wr_u64(b, (uint64_t)s->exists) || vhw_put_sid(b, m, s->status) ||
          vd_wr_str(b, s->problem) || vd_wr_u32(b, (uint32_t)s->fault);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->nblocks);
  for (int i = 0; i < d->nblocks && !bad; i++) {
    const vh_block *k = &d->blocks[i];
    bad = vd_wr_str(b, k->path) || vd_wr_str(b, k->name) || vd_wr_str(b, k->kind) || vd_wr_str(b, k->leaf) ||
          vd_wr_str(b, k->type) || vd_wr_str(b, k->external_file) || vd_wr_u64(b, (uint64_t)k->index);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->nlarrs);
  for (int i = 0; i < d->nlarrs && !bad; i++) {
    const vh_leafarrs *l = &d->larrs[i];
    bad = vhw_put_sid(b, m, l->block) || vd_wr_u64(b, (uint64_t)l->nsteps) || put_i64s(b, l->base_pt, l->nsteps) ||
          put_i64s(b, l->base_cell, l->nsteps) || vd_wr_u32(b, (uint32_t)l->na);
    for (int k = 0; k < l->na && !bad; k++)
      bad = vhw_put_sid(b, m, l->a[k].association) || vhw_put_sid(b, m, l->a[k].name) || put_i64s(b, l->a[k].o, l->nsteps);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->nboxes);
  for (int i = 0; i < d->nboxes && !bad; i++) {
    const vh_amrbox *x = &d->boxes[i];
    bad = vhw_put_sid(b, m, x->block) || vd_wr_u64(b, (uint64_t)x->step) || vd_wr_u64(b, (uint64_t)x->level) ||
          vd_wr_u64(b, (uint64_t)x->box);
    for (int k = 0; k < 6 && !bad; k++) bad = vd_wr_u64(b, (uint64_t)x->ext[k]);
    for (int k = 0; k < 3 && !bad; k++) bad = vd_wr_f64(b, x->origin[k]) || vd_wr_f64(b, x->spacing[k]);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->ntrees);
  for (int i = 0; i < d->ntrees && !bad; i++) {
    const vh_tree *t = &d->trees[i];
    const int64_t v[] = {t->step, t->partition, t->tree, t->tree_id, t->depth, t->n_cells, t->cell_off, t->desc_off, t->desc_bits, t->mask_off, t->mask_bits};
    bad = vhw_put_sid(b, m, t->block);
    for (size_t k = 0; k < sizeof v / sizeof *v && !bad; k++) bad = vd_wr_u64(b, (uint64_t)v[k]);
  }
  bad = bad || vd_wr_u32(b, (uint32_t)d->ngeoms);
  for (int i = 0; i < d->ngeoms && !bad; i++) {
    const vh_geom *g = &d->geoms[i];
    bad = vhw_put_sid(b, m, g->block) || vd_wr_u32(b, (uint32_t)g->poly) || vd_wr_u64(b, (uint64_t)g->points) ||
          vd_wr_u64(b, (uint64_t)g->types);
    for (int k = 0; k < VH_NTOPO && !bad; k++) bad = vd_wr_u64(b, (uint64_t)g->offs[k]) || vd_wr_u64(b, (uint64_t)g->conn[k]);
  }
  return bad ? -1 : 0;
}

/* A count of elements of at least min bytes each: never more than the bytes left hold */
static int count(vd_rd *r, size_t min) {
  uint32_t n = vd_rd_u32(r);
  if (r->bad || n > (size_t)(r->end - r->p) / min || n > INT32_MAX) return r->bad = 1, 0;
  return (int)n;
}

static int64_t *get_i64s(vd_rd *r, int64_t n) {
  if (!vd_rd_u32(r) || r->bad) return NULL;
  if (n < 0 || n > (r->end - r->p) / 8) return r->bad = 1, NULL;
  int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) return r->bad = 1, NULL;
  for (int64_t i = 0; i < n; i++) v[i] = (int64_t)vd_rd_u64(r);
  return v;
}

void vhw_get_doc(vd_rd *r, vh_doc *d) {
  int n = count(r, 48);
  if (n && !(d->arrays = calloc((size_t)n, sizeof *d->arrays))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->narrays++) {
    vh_array *a = &d->arrays[i];
    a->block = vd_rd_str(r), a->association = vd_rd_str(r), a->name = vd_rd_str(r), a->type = vd_rd_str(r);
    a->attribute = vd_rd_str(r), a->source_file = vd_rd_str(r);
    a->components = (int64_t)vd_rd_u64(r), a->tuples = (int64_t)vd_rd_u64(r);
  }
  n = count(r, 36);
  if (n && !r->bad && !(d->sources = calloc((size_t)n, sizeof *d->sources))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->nsources++) {
    vh_source *s = &d->sources[i];
    s->object = vd_rd_str(r), s->kind = vd_rd_str(r), s->file = vd_rd_str(r), s->resolved = vd_rd_str(r);
    s->target = vd_rd_str(r), s->exists = (int64_t)vd_rd_u64(r), s->status = vhw_get_sid(r, d), s->problem = vd_rd_str(r);
    s->fault = (int)vd_rd_u32(r);
  }
  n = count(r, 32);
  if (n && !r->bad && !(d->blocks = calloc((size_t)n, sizeof *d->blocks))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->nblocks++) {
    vh_block *k = &d->blocks[i];
    k->path = vd_rd_str(r), k->name = vd_rd_str(r), k->kind = vd_rd_str(r), k->leaf = vd_rd_str(r);
    k->type = vd_rd_str(r), k->external_file = vd_rd_str(r), k->index = (int64_t)vd_rd_u64(r);
  }
  n = count(r, 24);
  if (n && !r->bad && !(d->larrs = calloc((size_t)n, sizeof *d->larrs))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->nlarrs++) {
    vh_leafarrs *l = &d->larrs[i];
    l->block = vhw_get_sid(r, d);
    l->nsteps = (int64_t)vd_rd_u64(r);
    l->base_pt = get_i64s(r, l->nsteps), l->base_cell = get_i64s(r, l->nsteps);
    int na = count(r, 12);
    if (na && !r->bad && !(l->a = calloc((size_t)na, sizeof *l->a))) r->bad = 1;
    for (int k = 0; k < na && !r->bad; k++, l->na++) {
      l->a[k].association = vhw_get_sid(r, d), l->a[k].name = vhw_get_sid(r, d);
      l->a[k].o = get_i64s(r, l->nsteps);
    }
  }
  n = count(r, 124);
  if (n && !r->bad && !(d->boxes = calloc((size_t)n, sizeof *d->boxes))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->nboxes++) {
    vh_amrbox *x = &d->boxes[i];
    x->block = vhw_get_sid(r, d);
    x->step = (int64_t)vd_rd_u64(r), x->level = (int64_t)vd_rd_u64(r), x->box = (int64_t)vd_rd_u64(r);
    for (int k = 0; k < 6; k++) x->ext[k] = (int64_t)vd_rd_u64(r);
    for (int k = 0; k < 3; k++) x->origin[k] = vd_rd_f64(r), x->spacing[k] = vd_rd_f64(r);
  }
  n = count(r, 92);
  if (n && !r->bad && !(d->trees = calloc((size_t)n, sizeof *d->trees))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->ntrees++) {
    vh_tree *t = &d->trees[i];
    t->block = vhw_get_sid(r, d);
    int64_t *v[] = {&t->step, &t->partition, &t->tree, &t->tree_id, &t->depth, &t->n_cells, &t->cell_off, &t->desc_off, &t->desc_bits, &t->mask_off, &t->mask_bits};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) *v[k] = (int64_t)vd_rd_u64(r);
  }
  n = count(r, 84);
  if (n && !r->bad && !(d->geoms = calloc((size_t)n, sizeof *d->geoms))) r->bad = 1;
  for (int i = 0; i < n && !r->bad; i++, d->ngeoms++) {
    vh_geom *g = &d->geoms[i];
    g->block = vhw_get_sid(r, d);
    g->poly = vd_rd_u32(r) != 0;
    g->points = (int64_t)vd_rd_u64(r), g->types = (int64_t)vd_rd_u64(r);
    for (int k = 0; k < VH_NTOPO; k++) g->offs[k] = (int64_t)vd_rd_u64(r), g->conn[k] = (int64_t)vd_rd_u64(r);
  }
}

/* Rows are most of what crosses (a million for a big file): each is a mask of the fields
 * that differ from what the row before predicts, then those fields, integers as LEB128
 * varints of the zigzagged difference (unsigned arithmetic: VH_NULL and overflow wrap the
 * same way at both ends). In a plain walk only the counts differ: 4 to 7 bytes a row. */
enum {
  F_INTS = 10, /* n_points, n_cells, n_conn, partition, step, point_off, cell_off, conn_off, offsets_off, n_trees */
  F_TIME = 1 << 10,
  F_FLAGS = 1 << 11, /* streamed | has_time << 1 | topo << 2 */
  F_SEG = 1 << 12,
  F_STR = 13, /* block, type, source_file, status: bits 13 to 16 */
  F_ALL = (1 << 17) - 1
};
#define MAX_VARINT 10

static unsigned char *put_varint(unsigned char *o, uint64_t v) {
  while (v >= 0x80) *o++ = (unsigned char)(v | 0x80), v >>= 7;
  *o++ = (unsigned char)v;
  return o;
}

static uint64_t get_varint(vd_rd *r) {
  uint64_t v = 0;
  for (int sh = 0; sh < 64; sh += 7) {
    if (r->p >= r->end) break;
    unsigned c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80)) return v;
  }
  r->bad = 1;
  return 0;
}

/* The row's integers and the values the row before predicts for them */
static void ints_of(const vh_part *p, uint64_t v[F_INTS]) {
  const int64_t x[F_INTS] = {p->n_points, p->n_cells, p->n_conn, p->partition, p->step,
                             p->point_off, p->cell_off, p->conn_off, p->offsets_off, p->n_trees};
  for (int k = 0; k < F_INTS; k++) v[k] = (uint64_t)x[k];
}
static void predict(const vh_part *q, uint64_t v[F_INTS]) {
  ints_of(q, v);
  v[3] += 1;                           /* the next partition */
  v[5] += (uint64_t)q->n_points;       /* each start moved on by the row before's count */
  v[6] += (uint64_t)q->n_cells;
  v[7] += (uint64_t)q->n_conn;
  v[8] += (uint64_t)q->n_cells + 1;    /* Offsets: one more entry than cells */
}

static unsigned flags_of(const vh_part *p, int streamed) {
  return (unsigned)(streamed != 0) | (p->has_time ? 2u : 0u) | (p->topo ? 4u : 0u);
}

void vhw_put_rows_start(vhw_ids *m) {
  memset(&m->prev, 0, sizeof m->prev);
  m->prev_seg = 0, m->prev_streamed = 0;
}

#define U(x) ((uint64_t)(x))

/* The row is what the one before predicts but for its counts (a plain walk's every row);
 * the differences or'ed, not tested one by one: one branch, not seventeen */
static int counts_only(const vh_part *p, const vh_part *q, uint32_t seg, int streamed, const vhw_ids *m) {
  uint64_t t;
  memcpy(&t, &p->time, 8);
  uint64_t u;
  memcpy(&u, &q->time, 8);
  uint64_t d = (U(seg) ^ U(m->prev_seg)) | (U(streamed) ^ U(m->prev_streamed)) | (uintptr_t)p->topo | (uintptr_t)q->topo |
               (U(p->has_time) ^ U(q->has_time)) | (U(p->step) ^ U(q->step)) | (U(p->partition) ^ (U(q->partition) + 1)) |
               (U(p->point_off) ^ (U(q->point_off) + U(q->n_points))) | (U(p->cell_off) ^ (U(q->cell_off) + U(q->n_cells))) |
               (U(p->conn_off) ^ (U(q->conn_off) + U(q->n_conn))) |
               (U(p->offsets_off) ^ (U(q->offsets_off) + U(q->n_cells) + 1)) | (U(p->n_trees) ^ U(q->n_trees)) |
               ((uintptr_t)p->block ^ (uintptr_t)q->block) | ((uintptr_t)p->type ^ (uintptr_t)q->type) |
               ((uintptr_t)p->source_file ^ (uintptr_t)q->source_file) | ((uintptr_t)p->status ^ (uintptr_t)q->status) | (t ^ u);
  return d == 0;
}

static unsigned char *put_delta(unsigned char *o, uint64_t v, uint64_t w) {
  uint64_t d = v - w;
  return put_varint(o, d << 1 ^ (0 - (d >> 63)));
}

static int put_row_full(vd_buf *b, vhw_ids *m, const vh_part *p, uint32_t seg, int streamed);

int vhw_put_row(vd_buf *b, vhw_ids *m, const vh_part *p, uint32_t seg, int streamed) {
  enum { ROOM = 3 + (F_INTS + 1) * MAX_VARINT + 9 + sizeof(vh_topo) };
  if (b->cap - b->len < ROOM && vd_buf_reserve(b, ROOM)) return -1;
  vh_part *q = &m->prev;
  if (counts_only(p, q, seg, streamed, m)) { /* the mask in one byte, then the counts that changed */
    unsigned char *e = b->data + b->len, *o = e + 1;
    unsigned mask = (p->n_points != q->n_points) | (p->n_cells != q->n_cells) << 1 | (p->n_conn != q->n_conn) << 2;
    if (mask & 1) o = put_delta(o, U(p->n_points), U(q->n_points));
    if (mask & 2) o = put_delta(o, U(p->n_cells), U(q->n_cells));
    if (mask & 4) o = put_delta(o, U(p->n_conn), U(q->n_conn));
    *e = (unsigned char)mask;
    b->len = (size_t)(o - b->data);
    q->partition = p->partition, q->point_off = p->point_off, q->cell_off = p->cell_off, q->conn_off = p->conn_off;
    q->offsets_off = p->offsets_off, q->n_points = p->n_points, q->n_cells = p->n_cells, q->n_conn = p->n_conn;
    return 0;
  }
  return put_row_full(b, m, p, seg, streamed);
}

__attribute__((noinline)) static int put_row_full(vd_buf *b, vhw_ids *m, const vh_part *p, uint32_t seg, int streamed) {
  const vh_part *q = &m->prev;
  uint64_t v[F_INTS], w[F_INTS];
  ints_of(p, v), predict(q, w);
  uint32_t mask = 0;
  for (int k = 0; k < F_INTS; k++) mask |= (uint32_t)(v[k] != w[k]) << k;
  if (memcmp(&p->time, &q->time, sizeof p->time)) mask |= F_TIME;
  unsigned fl = flags_of(p, streamed);
  if (fl != flags_of(q, m->prev_streamed)) mask |= F_FLAGS;
  if (seg != m->prev_seg) mask |= F_SEG;
  const char *s[4] = {p->block, p->type, p->source_file, p->status}, *o[4] = {q->block, q->type, q->source_file, q->status};
  for (int k = 0; k < 4; k++) mask |= (uint32_t)(s[k] != o[k]) << (F_STR + k);
  unsigned char *e = put_varint(b->data + b->len, mask);
  for (int k = 0; k < F_INTS; k++)
    if (mask >> k & 1) e = put_delta(e, v[k], w[k]);
  if (mask & F_TIME) memcpy(e, &p->time, 8), e += 8;
  if (mask & F_FLAGS) *e++ = (unsigned char)fl;
  if (mask & F_SEG) e = put_varint(e, seg);
  if (p->topo) memcpy(e, p->topo, sizeof *p->topo), e += sizeof *p->topo;
  b->len = (size_t)(e - b->data);
  for (int k = 0; k < 4; k++)
    if (mask >> (F_STR + k) & 1 && vhw_put_sid(b, m, s[k])) return -1;
  m->prev = *p;
  m->prev_seg = seg, m->prev_streamed = streamed;
  return 0;
}

void vhw_get_rows_start(vh_part *p, uint32_t *seg, int *streamed) {
  memset(p, 0, sizeof *p);
  *seg = 0, *streamed = 0;
}

static inline int64_t undelta(int64_t w, uint64_t z) { return (int64_t)(U(w) + (z >> 1 ^ (0 - (z & 1)))); }

/* A varint known to lie before the message's end (checked once for the row) */
static inline uint64_t fast_varint(const unsigned char **q) {
  const unsigned char *o = *q;
  uint64_t v = *o & 0x7f;
  if (*o++ & 0x80)
    for (int sh = 7; sh < 64; sh += 7) {
      v |= (uint64_t)(*o & 0x7f) << sh;
      if (!(*o++ & 0x80)) break;
    }
  *q = o;
  return v;
}

static void get_row_full(vd_rd *r, vh_doc *d, vh_part *p, vh_topo *topo, uint32_t *seg, int *streamed);

/* Split from the rest so that a plain walk's row costs a few instructions, no more */
void vhw_get_row(vd_rd *r, vh_doc *d, vh_part *p, vh_topo *topo, uint32_t *seg, int *streamed) {
  if (r->end - r->p >= 1 + 3 * MAX_VARINT && *r->p < 8 && !p->topo) { /* counts_only: the walk moves on */
    const unsigned char *o = r->p;
    unsigned mask = *o++;
    p->partition = (int64_t)(U(p->partition) + 1);
    p->point_off = (int64_t)(U(p->point_off) + U(p->n_points));
    p->cell_off = (int64_t)(U(p->cell_off) + U(p->n_cells));
    p->conn_off = (int64_t)(U(p->conn_off) + U(p->n_conn));
    p->offsets_off = (int64_t)(U(p->offsets_off) + U(p->n_cells) + 1);
    if (mask & 1) p->n_points = undelta(p->n_points, fast_varint(&o));
    if (mask & 2) p->n_cells = undelta(p->n_cells, fast_varint(&o));
    if (mask & 4) p->n_conn = undelta(p->n_conn, fast_varint(&o));
    r->p = o;
    return;
  }
  get_row_full(r, d, p, topo, seg, streamed);
}

__attribute__((noinline)) static void get_row_full(vd_rd *r, vh_doc *d, vh_part *p, vh_topo *topo, uint32_t *seg,
                                                   int *streamed) {
  uint64_t mask = get_varint(r), v[F_INTS], w[F_INTS];
  if (r->bad || mask > F_ALL) {
    r->bad = 1;
    return;
  }
  ints_of(p, v), predict(p, w);
  for (int k = 0; k < F_INTS; k++) {
    v[k] = w[k];
    if (mask >> k & 1) v[k] = (uint64_t)undelta((int64_t)w[k], get_varint(r));
  }
  p->n_points = (int64_t)v[0], p->n_cells = (int64_t)v[1], p->n_conn = (int64_t)v[2], p->partition = (int64_t)v[3];
  p->step = (int64_t)v[4], p->point_off = (int64_t)v[5], p->cell_off = (int64_t)v[6], p->conn_off = (int64_t)v[7];
  p->offsets_off = (int64_t)v[8], p->n_trees = (int64_t)v[9];
  if (mask & F_TIME) {
    if (r->end - r->p < 8) return (void)(r->bad = 1);
    memcpy(&p->time, r->p, 8), r->p += 8;
  }
  if (mask & F_FLAGS) {
    if (r->p >= r->end || *r->p > 7) return (void)(r->bad = 1);
    unsigned fl = *r->p++;
    *streamed = fl & 1, p->has_time = (fl & 2) != 0, p->topo = fl & 4 ? topo : NULL;
  }
  if (mask & F_SEG) {
    uint64_t g = get_varint(r);
    if (g > UINT32_MAX) return (void)(r->bad = 1);
    *seg = (uint32_t)g;
  }
  if (p->topo) {
    if ((size_t)(r->end - r->p) < sizeof *topo) return (void)(r->bad = 1);
    memcpy(topo, r->p, sizeof *topo), r->p += sizeof *topo;
  }
  const char **s[4] = {&p->block, &p->type, &p->source_file, &p->status};
  for (int k = 0; k < 4; k++)
    if (mask >> (F_STR + k) & 1) *s[k] = vhw_get_sid(r, d);
}
