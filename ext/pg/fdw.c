/* The foreign-data wrapper `vdsql`: its handler, its validator, IMPORT FOREIGN SCHEMA
 * (one foreign table per relation of the catalogue) and the reading of a foreign
 * table's options and columns. Generic over the catalogue, as functions.c is: a relation
 * added later is a foreign table with nothing written here. */
#include "fdw.h"

#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "foreign/fdwapi.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(vdsql_fdw_handler);

Oid vdpg_type_oid(vd_type t) {
  switch (t) {
    case VD_INT: return INT8OID;
    case VD_REAL: return FLOAT8OID;
    case VD_BLOB: return BYTEAOID;
    default: return TEXTOID;
  }
}

vd_value vdpg_value_of(Datum d, Oid type) {
  switch (type) {
    case INT2OID: return vd_int(DatumGetInt16(d));
    case INT4OID: return vd_int(DatumGetInt32(d));
    case INT8OID: return vd_int(DatumGetInt64(d));
    case FLOAT4OID: return vd_real(DatumGetFloat4(d));
    case FLOAT8OID: return vd_real(DatumGetFloat8(d));
    case BOOLOID: return vd_int(DatumGetBool(d));
    case BYTEAOID: return vdsql_pg_arg(d, VD_BLOB);
    case TEXTOID:
    case VARCHAROID:
    case BPCHAROID: return vdsql_pg_arg(d, VD_TEXT);
    default: { /* anything else as its text form, as a cast to text gives it */
      Oid out;
      bool varlena;
      getTypeOutputInfo(type, &out, &varlena);
      return vd_text(OidOutputFunctionCall(out, d));
    }
  }
}

/* A tuple identifier holds 48 bits: a rowid below 2^47 fits with a non-zero offset. */
void vdpg_rowid_to_tid(int64_t rowid, ItemPointer tid) {
  ItemPointerSet(tid, (BlockNumber)((uint64)rowid >> 15), (OffsetNumber)((rowid & 0x7fff) + 1));
}

int64_t vdpg_tid_to_rowid(ItemPointer tid) {
  return ((int64_t)ItemPointerGetBlockNumberNoCheck(tid) << 15) | (ItemPointerGetOffsetNumberNoCheck(tid) - 1);
}

vd_ctx *vdpg_ftable_ctx(const vdpg_ftable *ft) {
  vd_ctx *ctx = vdsql_pg_ctx();
  vdpg_credentials_apply(ctx, ft->serverid);
  return ctx;
}

static const vd_relation *relation_named(const char *name) {
  for (int i = 0; name && vd_relations[i]; i++)
    if (strcmp(vd_relations[i]->name, name) == 0) return vd_relations[i];
  return NULL;
}

/* The names a relation's table connects with, from vd_table_ops.args ("url, layer"). */
static int conn_names(const vd_relation *r, char names[VDPG_MAX_CONN][64]) {
  int n = 0;
  const char *p = r->table ? r->table->args : NULL;
  while (p && *p && n < VDPG_MAX_CONN) {
    while (*p == ' ' || *p == ',') p++;
    size_t k = strcspn(p, ", ");
    if (!k) break;
    snprintf(names[n++], 64, "%.*s", (int)k, p);
    p += k;
  }
  return n;
}

static int arg_index(const vd_relation *r, const char *name) {
  for (int k = 0, c; (c = vd_rel_arg_col(r, k)) >= 0; k++)
    if (strcmp(r->cols[c].name, name) == 0) return k;
  return -1;
}

static int conflict_of(const char *v, const char *table) {
  if (strcmp(v, "error") == 0) return VD_CONFLICT_ABORT;
  if (strcmp(v, "replace") == 0) return VD_CONFLICT_REPLACE;
  if (strcmp(v, "ignore") == 0) return VD_CONFLICT_IGNORE;
  ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
                  errmsg("vdsql: %s: on_conflict is 'error', 'replace' or 'ignore', not '%s'", table, v)));
  return 0;
}

/* Checks a foreign table's options against its relation, fills what they say; the one
 * place both the validator and the planner read them. */
static const vd_relation *read_options(List *options, const char *table, vdpg_ftable *ft) {
  const vd_relation *r = NULL;
  ListCell *lc;
  foreach (lc, options) {
    DefElem *d = lfirst(lc);
    if (strcmp(d->defname, "relation") == 0 && !(r = relation_named(defGetString(d))))
      ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
                      errmsg("vdsql: %s: no relation named \"%s\" (SELECT name FROM vdsql_relations() lists them)",
                             table, defGetString(d))));
  }
  if (!r)
    ereport(ERROR, (errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
                    errmsg("vdsql: %s: the option relation is required, e.g. OPTIONS (relation 'vds_chunks')", table)));
  char names[VDPG_MAX_CONN][64];
  int nconn = conn_names(r, names), have = 0;
  if (ft) memset(ft, 0, sizeof *ft);
  foreach (lc, options) {
    DefElem *d = lfirst(lc);
    const char *v = defGetString(d);
    if (strcmp(d->defname, "relation") == 0) continue;
    if (strcmp(d->defname, "on_conflict") == 0) {
      int c = conflict_of(v, table);
      if (ft) ft->conflict = c;
      continue;
    }
    int known = 0, k = arg_index(r, d->defname);
    for (int i = 0; i < nconn; i++)
      if (strcmp(names[i], d->defname) == 0) {
        known = 1, have |= 1 << i;
        if (ft) ft->conn[i] = pstrdup(v);
      }
    if (k >= 0) {
      known = 1;
      if (ft) ft->fixed[k] = pstrdup(v);
    }
    if (!known) {
      StringInfoData s;
      initStringInfo(&s);
      appendStringInfoString(&s, "relation, on_conflict");
      for (int i = 0; i < nconn; i++) appendStringInfo(&s, ", %s", names[i]);
      for (int j = 0, c; (c = vd_rel_arg_col(r, j)) >= 0; j++)
        if (arg_index(r, r->cols[c].name) == j && !strstr(s.data, r->cols[c].name))
          appendStringInfo(&s, ", %s", r->cols[c].name);
      ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
                      errmsg("vdsql: %s: no option \"%s\" for %s (its options: %s)", table, d->defname, r->name, s.data)));
    }
  }
  bool named = nconn > 0 && have == (1 << nconn) - 1;
  if (r->flags & VD_REL_WRITES) /* a scan that writes would run at every plan's whim (rescans, workers) */
    ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
                    errmsg("vdsql: %s: %s changes its dataset: call the function %s(url) instead of a foreign table",
                           table, r->name, r->name)));
  if ((r->flags & VD_REL_TABLE_ONLY) && !named)
    ereport(ERROR, (errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
                    errmsg("vdsql: %s: %s is a table over one dataset: give OPTIONS (relation '%s', %s)", table, r->name,
                           r->name, r->table->args)));
  if (ft) {
    ft->rel = r;
    ft->named = named;
    ft->nconn = named ? nconn : 0;
  }
  return r;
}

vdpg_ftable *vdpg_ftable_get(Oid relid) {
  vdpg_ftable *ft = palloc(sizeof *ft);
  ForeignTable *t = GetForeignTable(relid);
  char *name = get_rel_name(relid);
  const vd_relation *r = read_options(t->options, name, ft);
  ft->relid = relid;
  ft->serverid = t->serverid;
  Relation rel = table_open(relid, NoLock);
  TupleDesc d = RelationGetDescr(rel);
  ft->natts = d->natts;
  if (d->natts > VDSQL_PG_MAX_COLS)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("vdsql: %s has %d columns, more than the %d the wrapper takes", name, d->natts, VDSQL_PG_MAX_COLS)));
  for (int i = 0; i < d->natts; i++) {
    Form_pg_attribute a = TupleDescAttr(d, i);
    ft->attcol[i] = -1;
    if (a->attisdropped) continue;
    for (int c = 0; c < r->ncols && ft->attcol[i] < 0; c++)
      if (strcmp(r->cols[c].name, NameStr(a->attname)) == 0) ft->attcol[i] = c;
    int c = ft->attcol[i];
    if (c < 0) {
      StringInfoData s;
      initStringInfo(&s);
      for (int j = 0; j < r->ncols; j++) appendStringInfo(&s, "%s%s", j ? ", " : "", r->cols[j].name);
      table_close(rel, NoLock);
      ereport(ERROR, (errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
                      errmsg("vdsql: %s: column \"%s\" is not a column of %s (its columns: %s)", name,
                             NameStr(a->attname), r->name, s.data)));
    }
    if (a->atttypid != vdpg_type_oid(r->cols[c].type)) {
      table_close(rel, NoLock);
      ereport(ERROR, (errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
                      errmsg("vdsql: %s: column \"%s\" is %s in %s, not %s", name, NameStr(a->attname),
                             format_type_be(vdpg_type_oid(r->cols[c].type)), r->name, format_type_be(a->atttypid))));
    }
  }
  table_close(rel, NoLock);
  return ft;
}

void vdpg_ftable_validate(List *options) {
  vdpg_ftable ft;
  const vd_relation *r = read_options(options, "foreign table", &ft);
  /* the dataset a named table or a fixed argument names is checked as a call's url; a
   * write is checked again when it happens (vdpg_writer) */
  for (int k = 0, c; (c = vd_rel_arg_col(r, k)) >= 0; k++)
    if (ft.fixed[k] && strcmp(r->cols[c].name, "url") == 0) vdpg_check_url(ft.fixed[k], false);
  if (ft.named) vdpg_check_url(ft.conn[0], false);
}

/* IMPORT FOREIGN SCHEMA vdsql FROM SERVER s INTO x: one foreign table per relation that
 * is not only a named table (those need their dataset as options), named as the relation,
 * with every column (arguments and hidden ones too: a foreign scan computes only the
 * columns a query reads). LIMIT TO / EXCEPT are applied by PostgreSQL on these names. */
static List *import_schema(ImportForeignSchemaStmt *stmt, Oid server) {
  if (strcmp(stmt->remote_schema, "vdsql") != 0)
    ereport(ERROR, (errcode(ERRCODE_FDW_SCHEMA_NOT_FOUND),
                    errmsg("vdsql: IMPORT FOREIGN SCHEMA takes the schema vdsql (the catalogue), not \"%s\"",
                           stmt->remote_schema)));
  ForeignServer *s = GetForeignServer(server);
  List *out = NIL;
  for (int i = 0; vd_relations[i]; i++) {
    const vd_relation *r = vd_relations[i];
    if (r->flags & (VD_REL_TABLE_ONLY | VD_REL_WRITES)) continue; /* writers are functions only */
    StringInfoData q;
    initStringInfo(&q);
    appendStringInfo(&q, "CREATE FOREIGN TABLE %s (", quote_identifier(r->name));
    for (int c = 0; c < r->ncols; c++)
      appendStringInfo(&q, "%s%s %s", c ? ", " : "", quote_identifier(r->cols[c].name),
                       format_type_be(vdpg_type_oid(r->cols[c].type)));
    appendStringInfo(&q, ") SERVER %s OPTIONS (relation %s)", quote_identifier(s->servername),
                     quote_literal_cstr(r->name));
    out = lappend(out, q.data);
  }
  return out;
}

Datum vdsql_fdw_handler(PG_FUNCTION_ARGS) {
  FdwRoutine *r = makeNode(FdwRoutine);
  vdpg_fdw_plan_routine(r);
  vdpg_fdw_scan_routine(r);
  vdpg_fdw_modify_routine(r);
  r->ImportForeignSchema = import_schema;
  PG_RETURN_POINTER(r);
}
