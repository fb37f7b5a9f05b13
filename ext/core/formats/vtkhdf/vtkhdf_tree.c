/* VTKHDF structure around the partitions: each leaf's data arrays, the Assembly tree of
 * composites (and the leaves it links, through external files), and every external link
 * and virtual-dataset mapping (vtkhdf_sources). */
#include "vtkhdf_read.h"
#include "vtkhdf_shape.h"
#include "vtkhdf_vfd.h"

static const char *type_name(hid_t t, char *buf, size_t n) {
  H5T_class_t cls = H5Tget_class(t);
  size_t sz = H5Tget_size(t);
  if (cls == H5T_INTEGER) snprintf(buf, n, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", sz * 8);
  else if (cls == H5T_FLOAT) snprintf(buf, n, "float%zu", sz * 8);
  else if (cls == H5T_STRING) snprintf(buf, n, "string");
  else snprintf(buf, n, "other");
  return buf;
}

/* VTK's attribute types, as vtkDataSetAttributes spells them (the values of an array's
 * own Attribute of 2.6): the names of the Version 1 convention, an attribute of the
 * PointData/CellData group naming its array (Scalars=<name>) */
static const char *const attr_types[] = {"Scalars", "Vectors", "Normals", "TCoords", "Tensors", "GlobalIds",
                                         "PedigreeIds", "EdgeFlag", "Tangents", "RationalWeights",
                                         "HigherOrderDegrees", "ProcessIds"};
#define NATTR (sizeof attr_types / sizeof *attr_types)

/* The arrays group g names with each attribute type (NULL: none), read once per group */
static void group_attributes(hid_t g, char *named[NATTR]) {
  for (size_t k = 0; k < NATTR; k++) named[k] = vh5_attr_str(g, attr_types[k]);
  H5Eclear2(H5E_DEFAULT);
}

/* The attribute type of array name by the group's names, or NULL */
static char *named_attribute(char *const named[NATTR], const char *name) {
  for (size_t k = 0; k < NATTR; k++)
    if (named[k] && !strcmp(named[k], name)) return strdup(attr_types[k]);
  return NULL;
}

vd_code vhr_leaf_arrays(rd *r, hid_t lg, const leaf *L, int image, int temporal) {
  static const char *const groups[] = {"PointData", "CellData", "FieldData", "RowData"};
  static const char *const assoc[] = {"point", "cell", "field", "row"};
  int64_t ext[6];
  int has_ext = 0;
  vd_code rc = image ? vhr_whole_extent(r, lg, L->where, ext, &has_ext) : VD_OK;
  for (int gi = 0; gi < 4 && !rc; gi++) {
    hid_t g;
    names ns;
    if ((rc = vhr_data_group(r, lg, L, groups[gi], &g, &ns)) || g < 0) continue;
    char *named[NATTR] = {NULL};
    if (gi < 2) group_attributes(g, named);
    for (int i = 0; i < ns.n && !rc; i++) {
      hid_t ds = H5Dopen2(g, ns.v[i], H5P_DEFAULT);
      if (ds < 0) { /* a group or a broken link among the arrays is not an array */
        H5Eclear2(H5E_DEFAULT);
        continue;
      }
      hid_t t = H5Dget_type(ds), sp = H5Dget_space(ds);
      int rank = H5Sget_simple_extent_ndims(sp);
      hsize_t dims[H5S_MAX_RANK] = {0};
      if (rank > 0) H5Sget_simple_extent_dims(sp, dims, NULL);
      int64_t total = 1;
      int ovf = 0; /* dims come from the file: a product past 64 bits has no count */
      for (int k = 0; k < rank; k++) ovf |= dims[k] > INT64_MAX || __builtin_mul_overflow(total, (int64_t)dims[k], &total);
      int64_t comps, tuples;
      if (has_ext && gi < 2) { /* structured: from the extent (vh_struct_shape) */
        vh_struct_shape(ext, gi == 1, temporal, rank, (const uint64_t *)dims, &tuples, &comps);
      } else if (image && gi < 2) { /* no extent to go by: (z, y, x[, c]), time first */
        comps = rank > 3 + temporal ? (int64_t)dims[rank - 1] : 1;
      } else if (gi < 2) { /* (n[, c...]): the axes after the first ((n, 3, 3) tensors: 9) */
        comps = 1;
        for (int k = 1; k < rank; k++) ovf |= dims[k] > INT64_MAX || __builtin_mul_overflow(comps, (int64_t)dims[k], &comps);
      } else {
        /* FieldData (n) or (n, c), and temporal (t, 1, n) as gridformat writes it: the
         * last axis; RowData columns (n[, c]) likewise */
        comps = rank > 1 ? (int64_t)dims[rank - 1] : 1;
      }
      if (comps < 1 || ovf) comps = 1;
      char tn[32];
      GROW(r->doc->arrays, r->doc->narrays, r->doc->caparrays);
      vh_array *a = &r->doc->arrays[r->doc->narrays++];
      memset(a, 0, sizeof *a);
      a->block = strdup(L->block);
      a->association = strdup(assoc[gi]);
      a->name = strdup(ns.v[i]);
      a->type = strdup(type_name(t, tn, sizeof tn));
      a->components = comps;
      a->tuples = ovf ? VH_NULL : total / comps;
      a->attribute = vh5_attr_str(ds, "Attribute");
      H5Eclear2(H5E_DEFAULT);
      if (!a->attribute) a->attribute = named_attribute(named, ns.v[i]); /* Version 1's Scalars=<name> */
      H5Tclose(t);
      H5Sclose(sp);
      H5Dclose(ds);
      vh5_map *mp;
      int nm;
      if ((rc = vh5_vds_maps(g, ns.v[i], L->holder, L->where, &mp, &nm, r->err))) break;
      const char *src = L->shown;
      for (int k = 0; k < nm; k++)
        if (strcmp(mp[k].resolved, mp[0].resolved)) src = NULL; /* several files: see vtkhdf_sources */
      if (nm && src) src = mp[0].shown;
      a->source_file = vhr_dup0(src);
      vh5_maps_free(mp, nm);
      if (!a->block || !a->association || !a->name || !a->type || (src && !a->source_file)) rc = vd_nomem(r->err);
    }
    for (size_t k = 0; k < NATTR; k++) free(named[k]);
    vhr_names_free(&ns);
    H5Gclose(g);
  }
  return rc;
}

/* A row of vtkhdf_sources; file and resolved are shown redacted */
static vd_code add_source(rd *r, const char *object, const char *kind, const char *file, const char *resolved,
                          const char *target, const vh5_found *src) {
  vh_doc *d = r->doc;
  GROW(d->sources, d->nsources, d->capsources);
  vh_source *s = &d->sources[d->nsources++];
  memset(s, 0, sizeof *s);
  s->object = strdup(object);
  s->kind = strdup(kind);
  s->file = vh_shown(file);
  s->resolved = vh_shown(resolved);
  s->target = strdup(target);
  s->exists = src->exists < 0 ? VH_NULL : src->exists;
  s->status = vh5_status(src->state);
  s->problem = vhr_dup0(src->why);
  s->fault = src->state == VH5_BAD ? src->fault : 0;
  return s->object && s->kind && s->file && s->resolved && s->target && (!src->why || s->problem) ? VD_OK
                                                                                                   : vd_nomem(r->err);
}

vd_code vhr_walk_sources(rd *r, hid_t g, const char *path, const char *holder, int depth) {
  if (depth > 16) return VD_OK; /* external links may form cycles; stop following */
  names ns;
  vd_code rc = vhr_children(r, g, 1, r->name, path, &ns);
  for (int i = 0; i < ns.n && !rc; i++) {
    char child[1024];
    snprintf(child, sizeof child, "%s/%s", path, ns.v[i]);
    int lt = vh5_link_type(g, ns.v[i]);
    if (lt == H5L_TYPE_EXTERNAL) {
      char *file = NULL, *obj = NULL;
      if (vh5_external_target(g, ns.v[i], &file, &obj)) {
        rc = vd_fail(r->err, VD_INVALID, "%s: cannot read the external link %s", r->name, child);
        break;
      }
      vh5_found src;
      char *res = vh5_resolve(holder, file, &src);
      if (res) vh5_check_object(res, obj, -1, 0, &src);
      rc = !res ? vd_nomem(r->err) : vh5_found_err(&src, r->err);
      if (!rc) rc = add_source(r, child, "external_link", file, res, obj, &src);
      if (!rc && src.state == VH5_OK) {
        hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (cg >= 0) {
          rc = vhr_walk_sources(r, cg, child, res, depth + 1);
          H5Gclose(cg);
        }
        H5Eclear2(H5E_DEFAULT);
      }
      vh5_found_free(&src);
      free(file), free(obj), free(res);
    } else if (lt == H5L_TYPE_HARD) {
      hid_t o = H5Oopen(g, ns.v[i], H5P_DEFAULT);
      if (o < 0) {
        H5Eclear2(H5E_DEFAULT);
        continue;
      }
      H5I_type_t it = H5Iget_type(o);
      H5Oclose(o);
      if (it == H5I_GROUP) {
        hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (cg >= 0) {
          rc = vhr_walk_sources(r, cg, child, holder, depth);
          H5Gclose(cg);
        }
      } else if (it == H5I_DATASET) {
        vh5_map *mp;
        int nm;
        if ((rc = vh5_vds_maps(g, ns.v[i], holder, r->name, &mp, &nm, r->err))) break;
        for (int k = 0; k < nm && !rc; k++)
          rc = add_source(r, child, "virtual", mp[k].file, mp[k].resolved, mp[k].dset, &mp[k].src);
        vh5_maps_free(mp, nm);
      }
    }
  }
  vhr_names_free(&ns);
  return rc;
}
