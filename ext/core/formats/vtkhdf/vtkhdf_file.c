/* Reading a VTKHDF file (vh_open): opening it (locally or through the store's HDF5
 * driver), the header and Type, one leaf or the Assembly's leaves, the walk over the
 * partition rows and the doc's lifetime; plus the helpers the reader's parts share
 * (vtkhdf_read.h). The partition rows are made in vtkhdf_grid.c, arrays, Assembly and
 * sources in vtkhdf_tree.c. HDF5 follows links and virtual datasets by itself; we look at
 * them too, because HDF5 silently returns zeros for a missing virtual-dataset source and
 * we must never report those zeros as counts. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "vtkhdf_read.h"
#include "vtkhdf_shape.h"
#include "vtkhdf_stream.h"
#include "vtkhdf_vfd.h"

static int is_composite(const char *t) {
  return t && (!strcmp(t, "PartitionedDataSetCollection") || !strcmp(t, "MultiBlockDataSet"));
}

vd_code vhr_do_leaf(rd *r, hid_t lg, leaf *L) {
  vd_code rc = VD_OK;
  if (!L->type) { /* a composite leaf without Type is an empty block */
    if (r->what & VH_PARTS) {
      vh_part *p;
      if ((rc = vhr_add_part(r, L, &p))) return rc;
      p->status = "empty_block";
      p->source_file = vhr_intern(r->doc, L->shown, &(int){1});
    }
    return VD_OK;
  }
  if (is_composite(L->type)) return vd_fail(r->err, VD_INVALID, "%s: a composite leaf must not be composite itself", L->where);
  int ug = !strcmp(L->type, "UnstructuredGrid"), poly = !strcmp(L->type, "PolyData");
  int amr = !strcmp(L->type, "OverlappingAMR"), htg = !strcmp(L->type, "HyperTreeGrid");
  int sg = !strcmp(L->type, "StructuredGrid"), other = !strcmp(L->type, "RectilinearGrid") || sg || !strcmp(L->type, "Table");
  if (amr && (r->what & (VH_PARTS | VH_AMR))) rc = vhr_amr(r, lg, L);
  else if (htg && (r->what & (VH_PARTS | VH_TREES))) rc = vhr_htg(r, lg, L);
  else if (r->what & VH_PARTS)
    rc = (ug || poly) ? vhr_grid_parts(r, lg, L, poly) : other ? vhr_struct_parts(r, lg, L) : vhr_image_parts(r, lg, L);
  if (!rc && (r->what & VH_GEOM) && (ug || poly)) rc = vhr_geom(r, lg, L, poly);
  if (!rc && (r->what & VH_ARRAYS)) {
    int temporal = H5Lexists(lg, "Steps", H5P_DEFAULT) > 0;
    H5Eclear2(H5E_DEFAULT);
    if (amr) rc = vhr_amr_arrays(r, lg, L); /* each level's own PointData, CellData, FieldData */
    else
      rc = vhr_leaf_arrays(r, lg, L, !strcmp(L->type, "ImageData") || !strcmp(L->type, "RectilinearGrid") || sg,
                           temporal);
  }
  return rc;
}

static vd_code add_block(rd *r, const char *path, const char *name, const char *kind, const char *leafp,
                         const char *type, int64_t index, const char *ext) {
  if (!(r->what & VH_BLOCKS)) return VD_OK;
  vh_doc *d = r->doc;
  GROW(d->blocks, d->nblocks, d->capblocks);
  vh_block *b = &d->blocks[d->nblocks++];
  b->path = strdup(path);
  b->name = strdup(name);
  b->kind = strdup(kind);
  b->leaf = vhr_dup0(leafp);
  b->type = vhr_dup0(type);
  b->external_file = vhr_dup0(ext); /* shown (redacted) by the caller */
  b->index = index;
  return b->path && b->name && b->kind && (!ext || b->external_file) ? VD_OK : vd_nomem(r->err);
}

vd_code vhr_assembly(rd *r, hid_t root, hid_t g, const char *path, int depth) {
  char m[256];
  if (depth > 64) return vd_fail(r->err, VD_INVALID, "%s: the Assembly is nested too deep at %s", r->name, path);
  names ns;
  vd_code rc = vhr_children(r, g, 0, r->name, path, &ns);
  for (int i = 0; i < ns.n && !rc; i++) {
    char child[1024];
    snprintf(child, sizeof child, "%s/%s", path, ns.v[i]);
    int lt = vh5_link_type(g, ns.v[i]);
    if (lt == H5L_TYPE_SOFT) {
      char *target = vh5_soft_target(g, ns.v[i]);
      if (!target) {
        rc = vd_fail(r->err, VD_INVALID, "%s: cannot read the soft link %s", r->name, child);
        break;
      }
      /* the leaf is /VTKHDF/<name>; it may be an external link into <stem>_<name> */
      const char *lname = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
      char *efile = NULL, *eobj = NULL, *resolved = NULL, *shown = NULL;
      vh5_found src = {VH5_OK, 1, NULL};
      leaf L = {child, NULL, r->path, r->name, ""};
      snprintf(L.where, sizeof L.where, "%s: block %s (%s)", r->name, child, target);
      if (vh5_link_type(root, lname) == H5L_TYPE_EXTERNAL && !vh5_external_target(root, lname, &efile, &eobj)) {
        /* the file must open as HDF5 and hold the object, as HDF5 will need it */
        if ((resolved = vh5_resolve(r->path, efile, &src))) vh5_check_object(resolved, eobj, -1, 0, &src);
        if (!resolved || !(shown = vh_shown(resolved))) rc = vd_nomem(r->err);
        else rc = vh5_found_err(&src, r->err); /* the store could not say what it is: an error, not a status */
        L.holder = resolved, L.shown = shown;
        snprintf(L.where, sizeof L.where, "%s: block %s (%s in %s)", r->name, child, eobj, shown ? shown : "");
      }
      H5Eclear2(H5E_DEFAULT);
      if (!rc && src.state != VH5_OK) { /* one row for the block, which names the file */
        rc = add_block(r, child, ns.v[i], "leaf", target, NULL, VH_NULL, shown);
        if (!rc && (r->what & VH_PARTS)) {
          vh_part *p;
          if (!(rc = vhr_add_part(r, &L, &p))) {
            p->status = vh5_status(src.state);
            if (!(p->source_file = vhr_intern(r->doc, shown, &(int){1}))) rc = vd_nomem(r->err);
          }
        }
      } else if (!rc) {
        hid_t lg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
        if (lg < 0) {
          rc = vd_fail(r->err, VD_INVALID, "%s: cannot open the leaf %s (HDF5: %s)", r->name, target, vh5_msg(m, sizeof m));
        } else {
          char *type = NULL;
          int64_t index = VH_NULL;
          if (!(rc = vhr_read_type(r, lg, target, &type))) {
            if (vh5_attr_i64(lg, "Index", &index, 1) != 1) index = VH_NULL;
            H5Eclear2(H5E_DEFAULT);
            L.type = type;
            rc = add_block(r, child, ns.v[i], "leaf", target, type, index, shown);
            if (!rc) rc = vhr_do_leaf(r, lg, &L);
          }
          free(type);
          H5Gclose(lg);
        }
      }
      vh5_found_free(&src);
      free(efile), free(eobj), free(resolved), free(shown), free(target);
    } else if (lt == H5L_TYPE_HARD) {
      hid_t cg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
      if (cg < 0) {
        H5Eclear2(H5E_DEFAULT); /* a dataset inside the Assembly means nothing to VTK */
        continue;
      }
      int64_t index = VH_NULL; /* a PDC Assembly node may carry an Index too */
      if (vh5_attr_i64(cg, "Index", &index, 1) != 1) index = VH_NULL;
      H5Eclear2(H5E_DEFAULT);
      rc = add_block(r, child, ns.v[i], "node", NULL, NULL, index, NULL);
      if (!rc) rc = vhr_assembly(r, root, cg, child, depth + 1);
      H5Gclose(cg);
    }
  }
  vhr_names_free(&ns);
  return rc;
}

static vd_code read_all(rd *r) {
  char m[256];
  if (H5Lexists(r->file, "VTKHDF", H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return vd_fail(r->err, VD_INVALID, "%s: no /VTKHDF group: not a VTKHDF file", r->name);
  }
  hid_t root = H5Gopen2(r->file, "VTKHDF", H5P_DEFAULT);
  if (root < 0) return vd_fail(r->err, VD_INVALID, "%s: cannot open /VTKHDF (HDF5: %s)", r->name, vh5_msg(m, sizeof m));
  char *type = NULL;
  vd_code rc = vhr_read_type(r, root, "/VTKHDF", &type);
  if (!rc && !type) rc = vd_fail(r->err, VD_INVALID, "%s: /VTKHDF has no Type attribute (and Version is not 1.x)", r->name);
  if (!rc && is_composite(type)) {
    if ((r->what & (VH_PARTS | VH_ARRAYS | VH_BLOCKS | VH_STARTS | VH_AMR | VH_TREES))) {
      hid_t ag = H5Lexists(root, "Assembly", H5P_DEFAULT) > 0 ? H5Gopen2(root, "Assembly", H5P_DEFAULT) : -1;
      if (ag < 0) {
        rc = vd_fail(r->err, VD_INVALID, "%s: %s without an /VTKHDF/Assembly group", r->name, type);
      } else {
        rc = vhr_assembly(r, root, ag, "/Assembly", 0);
        H5Gclose(ag);
      }
    }
  } else if (!rc) {
    leaf L = {"", type, r->path, r->name, ""};
    snprintf(L.where, sizeof L.where, "%s: /VTKHDF", r->name);
    rc = vhr_do_leaf(r, root, &L);
  }
  if (!rc && (r->what & VH_SOURCES)) rc = vhr_walk_sources(r, root, "/VTKHDF", r->path, 0);
  free(type);
  H5Gclose(root);
  return rc;
}

vd_code vh_open(vd_ctx *ctx, const char *url, unsigned what, vh_doc *doc, vd_err *err) {
  memset(doc, 0, sizeof *doc);
  doc->file = -1;
  doc->ctx = ctx;
  int remote = doc->remote = vh_is_url(url);
  vd_code rc = VD_OK;
  if (!*url) return vd_fail(err, VD_INVALID, "vtkhdf: the file path is empty");
  /* schemes other than http(s) and file: the store's own refusal (and wording) */
  if (!remote && (rc = vd_url_check(url, err))) return rc;
  char *path = remote ? strdup(url) : vd_url_path(url);
  if (!path || !(doc->shown = vh_shown(path))) return free(path), vd_nomem(err);
  doc->path = path;
  const char *name = doc->shown;
  if (!*path) return vd_fail(err, VD_INVALID, "vtkhdf: the file path is empty");
  /* the store's refusals, in its words: missing, unreadable, a directory, a FIFO (which
   * HDF5's open would wait on) */
  if (!remote && (rc = vd_file_check_regular(path, err))) return rc;

  /* HDF5 prints its error stack by default; the core never prints, so switch it off
   * for this thread while we work and carry its messages into ours. */
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char m[256];
  /* remote: every byte through the store (and its counters), sub-files included, under
   * the rule of vh_url_check against this URL */
  hid_t fapl = remote ? vh_vfd_fapl(ctx, path) : vh_local_fapl(ctx);
  /* read-only and unlocked: VDS reads through a read-write handle can return zeros,
   * and another process may be writing the file */
  if (fapl >= 0 && !remote) H5Pset_file_locking(fapl, 0, 1);
  /* sub-files are checked (and opened) with the same access list, once per name */
  vh5_session(ctx, path, remote, fapl);
  if (remote) vh_vfd_begin(ctx, path);
  hid_t f = fapl >= 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : -1;
  m[0] = 0;
  if (f < 0 && !remote) vh5_msg(m, sizeof m); /* before the probe below replaces HDF5's error stack */
  /* only to say why an open failed: HDF5's signature, read through the store (the HDF5
   * helper opens nothing itself) */
  htri_t ish5 = remote || f >= 0 ? 1 : vh5_is_hdf5(path);
  if (remote && f < 0 && *vh_vfd_last_error()) {
    rc = vd_fail(err, VD_IO, "%s", vh_vfd_last_error());
    H5Eclear2(H5E_DEFAULT);
  } else if (ish5 <= 0) {
    rc = vd_fail(err, VD_INVALID, "%s: not an HDF5 file", name);
    H5Eclear2(H5E_DEFAULT);
  } else if (f < 0) {
    rc = vd_fail(err, VD_INVALID, "%s: cannot open as HDF5 (HDF5: %s)", name, m[0] ? m : vh5_msg(m, sizeof m));
  } else {
    rd r = {doc, ctx, remote, what, f, path, name, err};
    rc = read_all(&r);
    int streams = 0;
    for (int i = 0; i < doc->nsegs; i++) streams += doc->segs[i].st != NULL;
    if (streams && !rc) doc->file = f; /* the streamed leaves read from it later */
    else H5Fclose(f);
  }
  vh5_session_end();
  if (fapl >= 0) H5Pclose(fapl);
  if (remote) vh_vfd_end();
  if (remote && doc->file <= 0) vh_vfd_forget(ctx);
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  if (rc) vh_err_redact(err);
  return rc;
}

vd_code vh_rows_next(vh_rows *it, vd_err *err) {
  if (it->bi < it->bn) { /* the common case: the next row of a streamed batch */
    it->cur = &it->buf[it->bi++];
    return VD_OK;
  }
  vh_doc *d = it->doc;
  while (it->seg < d->nsegs) {
    vh_seg *g = &d->segs[it->seg];
    if (!g->st) {
      if (g->lo + it->i < g->hi) {
        it->cur = &d->parts[g->lo + it->i++];
        return VD_OK;
      }
    } else {
      if (it->bi < it->bn) {
        it->cur = &it->buf[it->bi++];
        return VD_OK;
      }
      if (it->pend) { /* the rows made before the error are out: now the error */
        vd_code rc = vd_fail(err, it->pend, "%s", it->pend_msg);
        it->pend = VD_OK;
        return rc;
      }
      if (!it->i) { /* the leaf is not done: its next batch */
        vd_code rc = vh_stream_fill(g->st, it->buf, it->tbuf, VH_BATCH, &it->bn, err);
        it->bi = 0;
        if (it->bn < VH_BATCH) it->i = 1; /* the leaf ended (or failed) with this batch */
        if (rc) {
          if (!it->bn) return rc;
          it->pend = rc;
          snprintf(it->pend_msg, sizeof it->pend_msg, "%s", err->msg);
          vd_err_clear(err);
        }
        if (it->bn) {
          it->cur = &it->buf[it->bi++];
          return VD_OK;
        }
      }
    }
    it->seg++, it->i = 0, it->bi = it->bn = 0;
  }
  it->eof = 1;
  it->cur = NULL;
  return VD_OK;
}

int vh_rows_streamed(const vh_rows *it) {
  return !it->eof && it->seg < it->doc->nsegs && it->doc->segs[it->seg].st != NULL;
}

void vh_rows_skip_leaf(vh_rows *it) {
  if (!vh_rows_streamed(it)) return;
  vh_stream_done(it->doc->segs[it->seg].st);
  it->seg++, it->i = 0, it->bi = it->bn = 0, it->pend = VD_OK;
}

void vh_doc_free(vh_doc *d) {
  for (int i = 0; i < d->nsegs; i++) vh_stream_free(d->segs[i].st);
  free(d->segs);
  if (d->file > 0) { /* 0 is never an HDF5 id: a doc that was never opened */
    vh_h5scope sc;
    vh_h5_enter(&sc, d->ctx, d->remote, d->path);
    H5Fclose(d->file);
    vh_h5_leave(&sc);
    if (d->remote) vh_vfd_forget(d->ctx);
  }
  for (int i = 0; i < d->nparts; i++) free(d->parts[i].topo);
  for (int i = 0; i < d->nstrs; i++) free(d->strs[i]);
  free(d->strs);
  for (int i = 0; i < d->narrays; i++) {
    vh_array *a = &d->arrays[i];
    free(a->block), free(a->association), free(a->name), free(a->type), free(a->attribute), free(a->source_file);
  }
  for (int i = 0; i < d->nsources; i++) {
    vh_source *s = &d->sources[i];
    free(s->object), free(s->kind), free(s->file), free(s->resolved), free(s->target), free(s->problem);
  }
  for (int i = 0; i < d->nblocks; i++) {
    vh_block *b = &d->blocks[i];
    free(b->path), free(b->name), free(b->kind), free(b->leaf), free(b->type), free(b->external_file);
  }
  for (int i = 0; i < d->nlarrs; i++) {
    vh_leafarrs *la = &d->larrs[i];
    for (int k = 0; k < la->na; k++) free(la->a[k].o);
    free(la->a), free(la->base_pt), free(la->base_cell);
  }
  free(d->boxes), free(d->trees), free(d->geoms);
  free(d->parts), free(d->arrays), free(d->sources), free(d->blocks), free(d->larrs), free(d->path), free(d->shown);
  memset(d, 0, sizeof *d);
  d->file = -1;
}
