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
          vd_wr_str(b, s->problem);
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
}

/* Rows are most of what crosses (a million for a big file): their fixed part is copied
 * as it is in memory (both ends are the same build on the same machine), and a string
 * seen in the row before is found without hashing. */
typedef struct rowfix {
  uint32_t seg, flags;
  double time;
  int64_t v[10];
} rowfix;

int vhw_put_row(vd_buf *b, vhw_ids *m, const vh_part *p, uint32_t seg, int streamed) {
  if (vd_buf_reserve(b, sizeof(rowfix) + 16 + sizeof(vh_topo))) return -1;
  rowfix x = {seg, (uint32_t)(streamed | (p->has_time ? 2 : 0) | (p->topo ? 4 : 0)), p->time,
              {p->step, p->partition, p->n_points, p->n_cells, p->n_conn, p->point_off, p->cell_off, p->conn_off,
               p->offsets_off, p->n_trees}};
  memcpy(b->data + b->len, &x, sizeof x);
  b->len += sizeof x;
  const char *s[4] = {p->block, p->type, p->source_file, p->status};
  for (int k = 0; k < 4; k++) {
    if (s[k] && s[k] == m->last[k]) { /* the common case: as in the row before */
      memcpy(b->data + b->len, &m->last_id[k], 4);
      b->len += 4;
    } else if (vhw_put_sid(b, m, s[k])) {
      return -1;
    } else if (s[k]) {
      m->last[k] = s[k];
      m->last_id[k] = m->id[slot_of(m, s[k])];
    }
  }
  if (p->topo && vd_buf_append(b, p->topo, sizeof *p->topo)) return -1;
  return 0;
}

void vhw_get_row(vd_rd *r, vh_doc *d, vh_part *p, vh_topo *topo, uint32_t *seg, int *streamed) {
  rowfix x;
  if (r->bad || (size_t)(r->end - r->p) < sizeof x) {
    r->bad = 1;
    return;
  }
  memcpy(&x, r->p, sizeof x);
  r->p += sizeof x;
  *seg = x.seg;
  *streamed = x.flags & 1;
  p->has_time = (x.flags & 2) != 0;
  p->time = x.time;
  p->step = x.v[0], p->partition = x.v[1], p->n_points = x.v[2], p->n_cells = x.v[3], p->n_conn = x.v[4];
  p->point_off = x.v[5], p->cell_off = x.v[6], p->conn_off = x.v[7], p->offsets_off = x.v[8], p->n_trees = x.v[9];
  const char **s[4] = {&p->block, &p->type, &p->source_file, &p->status};
  for (int k = 0; k < 4; k++) {
    uint32_t id;
    if ((size_t)(r->end - r->p) >= 4 && (memcpy(&id, r->p, 4), id - 1 < (uint32_t)d->nstrs)) { /* a string seen before */
      r->p += 4;
      *s[k] = d->strs[id - 1];
    } else {
      *s[k] = vhw_get_sid(r, d);
    }
  }
  p->topo = NULL;
  if (x.flags & 4) {
    if ((size_t)(r->end - r->p) < sizeof *topo) {
      r->bad = 1;
      return;
    }
    memcpy(topo, r->p, sizeof *topo);
    r->p += sizeof *topo;
    p->topo = topo;
  }
}
