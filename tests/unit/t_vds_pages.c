/* The OpenVDS page layer's write-back, on a local copy of mkvds.py's survey_none:
 * entries set by two writers on the same page (the second one's base goes stale when
 * the first writes back: its If-Match loses, it re-reads and re-applies only its own
 * entries), a page not stored yet (created, pageDirectory updated; created by two
 * writers at once, the second's create-only put loses and it re-applies its entry over the
 * first's page), a discarded dirty set (nothing written). Expected values come from mkvds.py (its `dump` decodes the
 * pages and LayerStatus independently, in Python) and from the spec's formulas (section 3
 * counts, section 6 chunk sizes); the result is also read back through vds_chunks. An
 * http dataset is refused before any request. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/openvds/openvds_pages.h"
#include "tap.h"
#include "vd_catalog.h"

#define NTESTS 26

static char dir[] = "/tmp/vdsql-vdspages.XXXXXX";
static char url[600];

/* mkvds.py's independent reading of the dataset. */
static cJSON *dump(void) {
  const char *top = getenv("VDSQL_TOP");
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "python3 %s%stests/gen/mkvds.py dump %s", top ? top : "", top ? "/" : "", url);
  FILE *f = popen(cmd, "r");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0, k;
  char *buf = malloc(cap);
  while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 == cap) buf = realloc(buf, cap *= 2);
  }
  pclose(f);
  if (!buf) return NULL;
  buf[n] = 0;
  cJSON *j = cJSON_Parse(buf);
  free(buf);
  return j;
}

static cJSON *at(cJSON *d, const char *layer, const char *part, const char *key) {
  cJSON *o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, layer), part);
  return key ? cJSON_GetObjectItemCaseSensitive(o, key) : o;
}

static double num(cJSON *d, const char *layer, const char *part, const char *key) {
  cJSON *v = at(d, layer, part, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The hash of chunk's entry in the dump (0: no entry). */
static uint64_t hash_of(cJSON *d, const char *layer, int64_t chunk) {
  char k[32];
  snprintf(k, sizeof k, "%lld", (long long)chunk);
  cJSON *e = cJSON_GetArrayItem(at(d, layer, "entries", k), 0);
  return cJSON_IsString(e) ? strtoull(e->valuestring, NULL, 16) : 0;
}

static uint64_t constant(float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  return 0x0101010100000000ull | bits;
}

static vd_code set(vds_pages *pl, int64_t chunk, uint64_t hash, int64_t bytes, vd_err *err) {
  unsigned char raw[28];
  vds_entry_encode(raw, 8, hash, 0, NULL);
  return vds_pages_set(pl, chunk, raw, bytes, err);
}

/* Hashes of every chunk of layer through vds_chunks (a fresh context: nothing cached),
 * the cursor told LIMIT limit (-1: none) and read on past it all the same. */
static int read_chunks_limit(const char *layer, uint64_t *hash, int n, int64_t limit) {
  vd_ctx *ctx = vd_ctx_new();
  const vd_relation *rel = NULL;
  for (int i = 0; vd_relations[i]; i++)
    if (strcmp(vd_relations[i]->name, "vds_chunks") == 0) rel = vd_relations[i];
  vd_value args[2] = {vd_text(url), vd_text(layer)};
  void *cur = NULL;
  vd_err err = {0};
  int rows = 0;
  vd_value lim = vd_int(limit);
  vd_filter f = {-1, VD_OP_LIMIT, &lim, 1};
  if (rel && rel->open(ctx, args, 2, &f, limit >= 0, &cur, &err) == VD_OK) {
    for (; !rel->eof(cur) && rows < n; rows++) {
      vd_value v;
      if (rel->column(cur, 3, &v, &err) || v.type != VD_INT) break; /* hash */
      hash[rows] = (uint64_t)v.i;
      if (rel->next(cur, &err)) break;
    }
  } else {
    diag("vds_chunks: %s", err.msg);
  }
  if (rel && cur) rel->close(cur);
  vd_ctx_free(ctx);
  return rows;
}

static int read_chunks(const char *layer, uint64_t *hash, int n) { return read_chunks_limit(layer, hash, n, -1); }

int main(void) {
  const char *td = getenv("VDSQL_TESTDATA");
  if (!td) {
    skip(NTESTS, "VDSQL_TESTDATA not set: no mkvds.py datasets to copy (scripts/run-tests sets it)");
    return done_testing();
  }
  if (!mkdtemp(dir)) return 1;
  snprintf(url, sizeof url, "%s/ds", dir);
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "cp -a %s/survey_none %s", td, url); /* -a: the chunk objects' xattrs too */
  if (system(cmd) != 0) return 1;
  cJSON *before = dump();
  ok(before != NULL, "mkvds.py dump reads the copy");
  const char *L0 = "Dimensions_012LOD0", *L1 = "Dimensions_012LOD1";

  vd_ctx *ctx = vd_ctx_new();
  vd_err err = {0};
  vds_dataset *da = NULL, *db = NULL;
  const vds_layer *a0, *a1, *b0, *b1;
  vds_pages *pa0 = NULL, *pa1 = NULL, *pb0 = NULL, *pb1 = NULL, *pc0 = NULL;
  int opened = vds_open(ctx, url, &da, &err) == VD_OK && vds_open(ctx, url, &db, &err) == VD_OK &&
               vds_find_layer(da, L0, &a0, &err) == VD_OK && vds_find_layer(da, L1, &a1, &err) == VD_OK &&
               vds_find_layer(db, L0, &b0, &err) == VD_OK && vds_find_layer(db, L1, &b1, &err) == VD_OK &&
               vds_pages_open(ctx, db, b1, &pb1, &err) == VD_OK && vds_pages_open(ctx, da, a0, &pa0, &err) == VD_OK &&
               vds_pages_open(ctx, da, a1, &pa1, &err) == VD_OK && vds_pages_open(ctx, db, b0, &pb0, &err) == VD_OK &&
               vds_pages_open(ctx, da, a0, &pc0, &err) == VD_OK;
  ok(opened, "two writers open the dataset");
  if (!opened) {
    diag("%s", err.msg);
    return done_testing();
  }

  /* writer A: chunk 20 (unwritten, on the short last page 2) becomes data, chunk 3
   * (constant 0.5) constant 2.0; on LOD1, chunk 2 is on page 1, listed as -1 */
  const uint64_t H1 = 0x1122334455667788ull, H2 = 0x0f1e2d3c4b5a6978ull;
  ok(set(pa0, 20, H1, 1000, &err) == VD_OK && set(pa0, 3, constant(2.0f), 0, &err) == VD_OK &&
     set(pa1, 2, constant(1.5f), 0, &err) == VD_OK, "writer A sets three entries");
  ok(vds_pages_dirty(pa0) == 2 && vds_pages_dirty(pa1) == 1, "A's dirty pages: 2 on LOD0 (pages 0, 2), 1 on LOD1");
  vds_entry e;
  ok(vds_pages_entry(pa0, 20, &e, NULL, &err) == VD_OK && e.status == VDS_S_DATA && e.hash == H1,
     "A's page layer reads its own entry before write-back");
  /* writer B, same base page 2 as A: chunk 21 (unwritten) becomes data; and chunk 3 of
   * LOD1, on the page A creates too (the page put must be create-only, or one is lost) */
  ok(set(pb0, 21, H2, 500, &err) == VD_OK && set(pb1, 3, constant(0.25f), 0, &err) == VD_OK,
     "writer B sets chunk 21 on the same page, and chunk 3 on LOD1's page not stored yet");
  /* a third writer's entry, discarded (ROLLBACK) */
  ok(set(pc0, 0, 0x7777777777777777ull, 10, &err) == VD_OK, "writer C sets chunk 0");
  vds_pages_discard(pc0);
  ok(vds_pages_dirty(pc0) == 0 && vds_pages_write_back(pc0, &err) == VD_OK, "C's discarded set writes nothing");

  ok(vds_pages_write_back(pb0, &err) == VD_OK && vds_pages_write_back(pb1, &err) == VD_OK,
     "B writes back first (LOD1's page 1 is created by B)");
  memset(ctx->stats, 0, sizeof ctx->stats);
  vd_code rc = vds_pages_write_back(pa0, &err);
  ok(rc == VD_OK, "A writes back over B's page");
  /* page 0: 1 put; page 2: put (lost), get, put; LayerStatus: put (lost), get, put */
  ok(ctx->stats[VD_BE_FILE].requests == 7, "A's write-back: 7 requests (two lost races, each re-read once), got %lld",
     (long long)ctx->stats[VD_BE_FILE].requests);
  ok(vds_pages_dirty(pa0) == 0, "A has nothing dirty left");
  ok(vds_pages_write_back(pa1, &err) == VD_OK, "A writes back LOD1 (the page B created since: its create-only put "
     "loses; its LayerStatus was read before B wrote: another lost race)");
  /* an http dataset: refused in the store's one wording before any request */
  vds_dataset remote = *da;
  remote.url = "http://127.0.0.1:9/ds?sig=secret";
  vds_pages *pr = NULL;
  memset(ctx->stats, 0, sizeof ctx->stats);
  rc = vds_pages_open(ctx, &remote, a0, &pr, &err) ? VD_ERROR : set(pr, 1, H1, 1, &err);
  ok(rc == VD_READONLY && strstr(err.msg, "read-only") && !strstr(err.msg, "secret") &&
     ctx->stats[VD_BE_HTTP].requests == 0 && vds_pages_dirty(pr) == 0,
     "an http dataset's entry is refused, no request, the query redacted: %s", err.msg);
  vds_pages_close(pr);
  vds_pages_close(pa0);
  vds_pages_close(pa1);
  vds_pages_close(pb0);
  vds_pages_close(pb1);
  vds_pages_close(pc0);
  vds_close(da);
  vds_close(db);
  vd_ctx_free(ctx);

  cJSON *after = dump();
  ok(after != NULL, "mkvds.py dump reads the dataset written");
  int same = 1;
  for (int c = 0; c < 24; c++)
    if (c != 3 && c != 20 && c != 21 && hash_of(after, L0, c) != hash_of(before, L0, c)) same = 0;
  ok(hash_of(after, L0, 20) == H1 && hash_of(after, L0, 21) == H2, "both writers' entries survive (chunks 20 and 21)");
  ok(hash_of(after, L0, 3) == constant(2.0f) && same,
     "A's constant is written, every other LOD0 entry (chunk 0 of the discarded writer too) unchanged");
  ok(num(after, L0, "pages", "2") == 80, "the short last page is written full-size (10 entries of 8 bytes)");
  /* spec section 3: an 8-byte layer counts a chunk when it goes from unwritten to
   * written; chunks 20 (0,2,1) and 21 (1,2,1) are 64 x 38 x 44 R32 samples (section 6:
   * brick 64, margins 4+4 over 200 x 150 x 100) = 428032 bytes each; chunk 3 was written */
  ok(num(after, L0, "status", "validChunkCount") == num(before, L0, "status", "validChunkCount") + 2 &&
     num(after, L0, "status", "serializedSize") == num(before, L0, "status", "serializedSize") + 1500 &&
     num(after, L0, "status", "uncompressedSize") == num(before, L0, "status", "uncompressedSize") + 2 * 428032,
     "LOD0 counts: both writers' chunks counted once (valid +2, serialized +1500, uncompressed +2 x 428032)");
  cJSON *dir1 = at(after, L1, "status", "pageDirectory");
  ok(cJSON_GetArraySize(dir1) == 2 && cJSON_GetArrayItem(dir1, 1)->valuedouble == 1 &&
     num(after, L1, "pages", "1") == 16 && hash_of(after, L1, 2) == constant(1.5f) &&
     hash_of(after, L1, 3) == constant(0.25f),
     "LOD1: the new page is stored as 1 (16 bytes), listed in pageDirectory, with both writers' entries");
  ok(num(after, L1, "status", "validChunkCount") == num(before, L1, "status", "validChunkCount") + 2 &&
     num(after, L1, "status", "serializedSize") == num(before, L1, "status", "serializedSize") &&
     num(after, L1, "status", "uncompressedSize") == num(before, L1, "status", "uncompressedSize"),
     "LOD1 counts: two constant chunks add 2 valid chunks and no bytes");
  /* everything else in LayerStatus as it was */
  int others = 1;
  const char *names[] = {"TraceDimensions_012LOD0", "QualityDimensions_012LOD0", "Dimensions_01LOD0"};
  for (int i = 0; i < 3; i++)
    others &= cJSON_Compare(at(before, names[i], "status", NULL), at(after, names[i], "status", NULL), 1);
  cJSON *s0 = cJSON_Duplicate(at(after, L0, "status", NULL), 1), *b0s = at(before, L0, "status", NULL);
  const char *counted[] = {"validChunkCount", "serializedSize", "uncompressedSize"};
  for (int i = 0; i < 3; i++)
    cJSON_ReplaceItemInObjectCaseSensitive(s0, counted[i], cJSON_Duplicate(cJSON_GetObjectItem(b0s, counted[i]), 1));
  others &= cJSON_Compare(s0, b0s, 1);
  cJSON_Delete(s0);
  ok(others, "the other layers and LOD0's other keys are unchanged");

  uint64_t h[24];
  int rows = read_chunks(L0, h, 24), agree = rows == 24;
  for (int c = 0; c < rows; c++)
    if (h[c] != hash_of(after, L0, c)) agree = 0;
  ok(agree, "vds_chunks reads the same 24 hashes as mkvds.py dump (%d rows)", rows);
  /* a LIMIT hint is only a hint: pages past its last one are still read when asked */
  rows = read_chunks_limit(L0, h, 24, 3), agree = rows == 24;
  for (int c = 0; c < rows; c++)
    if (h[c] != hash_of(after, L0, c)) agree = 0;
  ok(agree, "vds_chunks told LIMIT 3 (page 0) and read on: the same 24 hashes, pages 1 and 2 too (%d rows)", rows);
  rows = read_chunks(L1, h, 4);
  ok(rows == 4 && h[2] == constant(1.5f) && h[3] == constant(0.25f), "vds_chunks reads LOD1's new page");
  ok(hash_of(after, L0, 0) == hash_of(before, L0, 0) && hash_of(before, L0, 0) != 0x7777777777777777ull,
     "the discarded entry is nowhere");

  cJSON_Delete(before);
  cJSON_Delete(after);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) diag("could not remove %s", dir);
  return done_testing();
}
