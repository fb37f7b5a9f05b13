/* Chunk grid arithmetic (spec section 6): chunks per dimension, chunk index <->
 * position, valid sample ranges and stored voxel sizes, PerTrace channels included. */
#include <stdio.h>
#include <string.h>

#include "openvds.h"

vd_code vds_geom_init(const vds_layout *lay, const vds_channel *ch, const char *dim_group, int lod,
                      vds_geom *g, vd_err *err) {
  memset(g, 0, sizeof *g);
  const char *digits = strncmp(dim_group, "Dimensions_", 11) == 0 ? dim_group + 11 : NULL;
  size_t nd = digits ? strlen(digits) : 0;
  if (nd < 2 || nd > 3)
    return vd_fail(err, VD_INVALID, "dimension group \"%s\" is not Dimensions_ with 2 or 3 digits", dim_group);
  int prev = -1;
  for (size_t k = 0; k < nd; k++) {
    int d = digits[k] - '0';
    if (d <= prev || d >= lay->dims)
      return vd_fail(err, VD_INVALID, "dimension group \"%s\" does not fit a %d-dimensional layout", dim_group,
                     lay->dims);
    g->in_group[d] = 1;
    prev = d;
  }
  if (lod < 0 || lod > 12) return vd_fail(err, VD_INVALID, "LOD %d out of range", lod);
  int64_t brick = (int64_t)1 << lay->brick_log2;
  int64_t internal = brick - lay->neg - lay->pos;
  if (nd == 2) internal *= lay->mult2d;
  for (int d = 0; d < VDS_MAXDIM; d++) {
    g->n[d] = d < lay->dims ? lay->axes[d].samples : 1;
    g->shift[d] = d == lay->full_res_dim ? 0 : lod;
    if (g->in_group[d]) {
      g->neg[d] = lay->neg;
      g->pos[d] = lay->pos;
    }
  }
  if (ch && ch->per_trace) { /* dimension 0 becomes the mapped values, one chunk thick */
    g->n[0] = ch->mapped_values;
    g->neg[0] = g->pos[0] = 0;
    if (ch->mapped_values == 1) g->in_group[0] = 0;
  }
  g->total = 1;
  for (int d = 0; d < VDS_MAXDIM; d++) {
    if (!g->in_group[d]) {
      g->b[d] = 1;
      g->chunks[d] = g->n[d];
    } else if (d == 0 && ch && ch->per_trace) {
      g->b[d] = g->n[d];
      g->chunks[d] = 1;
    } else {
      int64_t b = internal << g->shift[d];
      g->b[d] = b < g->n[d] ? b : g->n[d];
      int64_t c = (g->n[d] - 1 - g->neg[d] - g->pos[d]) / g->b[d] + 1;
      g->chunks[d] = c < 1 ? 1 : c;
    }
    if (g->in_group[d] && g->ngroup < 3) g->group[g->ngroup++] = d;
    if (g->chunks[d] > ((int64_t)1 << 50) / g->total) /* test before multiplying: it could overflow */
      return vd_fail(err, VD_INVALID, "chunk count out of range");
    g->total *= g->chunks[d];
  }
  return VD_OK;
}

void vds_chunk_index(const vds_geom *g, int64_t chunk, int64_t idx[VDS_MAXDIM]) {
  for (int d = 0; d < VDS_MAXDIM; d++) {
    idx[d] = chunk % g->chunks[d];
    chunk /= g->chunks[d];
  }
}

void vds_chunk_valid(const vds_geom *g, int d, int64_t i, int64_t *min, int64_t *max) {
  if (!g->in_group[d]) {
    *min = *max = i;
    return;
  }
  *min = i == 0 ? 0 : i * g->b[d] + g->neg[d];
  *max = i == g->chunks[d] - 1 ? g->n[d] - 1 : (i + 1) * g->b[d] + g->neg[d] - 1;
}

void vds_chunk_size(const vds_geom *g, const int64_t idx[VDS_MAXDIM], int64_t size[3]) {
  size[0] = size[1] = size[2] = 1;
  for (int k = 0; k < g->ngroup; k++) {
    int d = g->group[k];
    int64_t start = idx[d] * g->b[d];
    int64_t end = (idx[d] + 1) * g->b[d] + g->neg[d] + g->pos[d];
    if (end > g->n[d]) end = g->n[d];
    int s = g->shift[d];
    size[k] = ((end - start) + ((int64_t)1 << s) - 1) >> s;
  }
}
