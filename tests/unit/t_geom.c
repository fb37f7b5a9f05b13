/* Chunk arithmetic against the real OpenVDS LayerStatus + VolumeDataLayout
 * (shared/fixtures/openvds): 200/30/6 amplitude and 20/6/2 trace chunks, the
 * SEGYTraceHeader uncompressedSize reproduced from per-chunk sizes, and the spec's
 * worked example for chunk 57. */
#include <string.h>

#include "formats/openvds/openvds.h"
#include "tap.h"

static int load(vds_layout *lay, int *n, vds_layer **ls) {
  char p1[1024], p2[1024];
  snprintf(p1, sizeof p1, "%s/fixtures/openvds/VolumeDataLayout.json", shared_dir());
  snprintf(p2, sizeof p2, "%s/fixtures/openvds/LayerStatus.json", shared_dir());
  size_t l1, l2;
  char *a = (char *)slurp(p1, &l1), *b = (char *)slurp(p2, &l2);
  if (!a || !b) {
    free(a), free(b);
    return -1;
  }
  vd_err err = {0};
  int ok1 = vds_parse_layout(a, l1, p1, lay, &err) == VD_OK;
  ok(ok1, "real VolumeDataLayout parses (%s)", err.msg);
  int ok2 = ok1 && vds_parse_status(b, l2, p2, lay, n, ls, &err) == VD_OK;
  ok(ok2, "real LayerStatus parses, every chunkCount agrees with the layout (%s)", err.msg);
  free(a), free(b);
  return ok1 && ok2 ? 0 : 1;
}

static void real(void) {
  vds_layout lay;
  int n = 0;
  vds_layer *ls = NULL;
  int r = load(&lay, &n, &ls);
  if (r < 0) {
    fixture_missing(8, "real-layout tests (VolumeDataLayout.json, LayerStatus.json)");
    return;
  }
  if (r > 0) return;
  static const struct { const char *name; int64_t chunks; } want[] = {
      {"Dimensions_012LOD0", 200}, {"Dimensions_012LOD1", 30}, {"Dimensions_012LOD2", 6},
      {"TraceDimensions_012LOD0", 20}, {"TraceDimensions_012LOD1", 6}, {"TraceDimensions_012LOD2", 2}};
  char got[256] = "";
  int all = 1;
  for (size_t w = 0; w < 6; w++) {
    int found = 0;
    for (int i = 0; i < n; i++)
      if (strcmp(ls[i].name, want[w].name) == 0) {
        found = 1;
        all &= ls[i].chunk_count == want[w].chunks;
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s=%lld ", want[w].name, (long long)ls[i].chunk_count);
      }
    all &= found;
  }
  ok(all, "chunk counts 200/30/6 and 20/6/2: %s", got);
  /* SEGYTraceHeader (PerTrace, 240 values, U8): summing per-chunk voxels reproduces
   * the uncompressedSize OpenVDS wrote for each LOD */
  int checked = 0;
  for (int i = 0; i < n; i++) {
    if (strncmp(ls[i].name, "SEGYTraceHeader", 15) != 0) continue;
    int64_t sum = 0, idx[VDS_MAXDIM], sz[3];
    for (int64_t c = 0; c < ls[i].chunk_count; c++) {
      vds_chunk_index(&ls[i].geom, c, idx);
      vds_chunk_size(&ls[i].geom, idx, sz);
      sum += sz[0] * sz[1] * sz[2];
    }
    ok(sum == ls[i].uncompressed_size, "%s: sum of chunk sizes %lld = uncompressedSize %lld", ls[i].name,
       (long long)sum, (long long)ls[i].uncompressed_size);
    checked++;
  }
  ok(checked == 3, "three SEGYTraceHeader layers checked");
  /* worked example: LOD0 chunk 57 -> (7, 0, 1), margins-included extent [840,968) x [0,128) x [120,248) */
  const vds_layer *l0 = &ls[0];
  int64_t idx[VDS_MAXDIM], sz[3], mn, mx;
  vds_chunk_index(&l0->geom, 57, idx);
  ok(idx[0] == 7 && idx[1] == 0 && idx[2] == 1, "chunk 57 is at (7, 0, 1)");
  vds_chunk_size(&l0->geom, idx, sz);
  vds_chunk_valid(&l0->geom, 0, 7, &mn, &mx);
  ok(sz[0] == 128 && sz[1] == 128 && sz[2] == 128 && mn == 844 && mx == 963, "chunk 57: 128^3 voxels, valid dim0 844..963");
  vds_chunk_index(&l0->geom, 9, idx);
  vds_chunk_size(&l0->geom, idx, sz);
  vds_chunk_valid(&l0->geom, 0, 9, &mn, &mx);
  ok(sz[0] == 46 && mn == 1084 && mx == 1125, "last chunk along dim 0: 46 voxels [1080,1126), valid 1084..1125");
  vds_layers_free(ls, n);
  vds_layout_free(&lay);
}

static const char *LAYOUT =
    "{\"layoutDescriptor\":{\"brickSize\":\"BrickSize_64\",\"negativeMargin\":4,\"positiveMargin\":4,"
    "\"lodLevels\":\"LODLevels_1\"},\"axisDescriptors\":[{\"numSamples\":200},{\"numSamples\":150},"
    "{\"numSamples\":100}],\"channelDescriptors\":[{\"format\":\"Format_R32\",\"name\":\"A\"}]}";

static void status_errors(void) {
  vds_layout lay;
  vd_err err = {0};
  ok(vds_parse_layout(LAYOUT, strlen(LAYOUT), "L", &lay, &err) == VD_OK, "minimal layout parses (%s)", err.msg);
  static const struct { const char *json, *expect; } bad[] = {
      {"{}", "not a JSON array"},
      {"[{\"layerName\":\"x\"}]", "channelName"},
      {"[{\"layerName\":\"../x\",\"channelName\":\"A\",\"dimensionGroup\":\"Dimensions_012\",\"lod\":0}]",
       "not a usable layer name"},
      {"[{\"layerName\":\"x\",\"channelName\":\"B\",\"dimensionGroup\":\"Dimensions_012\",\"lod\":0}]", "channel \"B\""},
      {"[{\"layerName\":\"x\",\"channelName\":\"A\",\"dimensionGroup\":\"Dimensions_013\",\"lod\":0}]",
       "does not fit"},
      {"[{\"layerName\":\"x\",\"channelName\":\"A\",\"dimensionGroup\":\"Dimensions_012\",\"lod\":0,"
       "\"hasChunkMetadataPages\":true,\"chunkCount\":24,\"chunkMetadataPageSize\":10,\"chunkMetadataByteSize\":12}]",
       "unsupported chunkMetadataByteSize 12"},
      {"[{\"layerName\":\"x\",\"channelName\":\"A\",\"dimensionGroup\":\"Dimensions_012\",\"lod\":0,"
       "\"hasChunkMetadataPages\":true,\"chunkCount\":24,\"chunkMetadataPageSize\":10,\"chunkMetadataByteSize\":8,"
       "\"pageDirectory\":[0,1]}]",
       "pageDirectory must be an array of 3"},
      {"[{\"layerName\":\"x\",\"channelName\":\"A\",\"dimensionGroup\":\"Dimensions_012\",\"lod\":0,"
       "\"hasChunkMetadataPages\":true,\"chunkCount\":25,\"chunkMetadataPageSize\":10,\"chunkMetadataByteSize\":8}]",
       "chunkCount 25 disagrees with 24"},
      {"[1,", "malformed JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int n;
    vds_layer *ls;
    vd_code rc = vds_parse_status(bad[i].json, strlen(bad[i].json), "LS", &lay, &n, &ls, &err);
    ok(rc != VD_OK && strstr(err.msg, bad[i].expect) && strncmp(err.msg, "LS", 2) == 0, "bad LayerStatus %zu: %s",
       i, err.msg);
  }
  /* PerTrace with mappedValues 1 drops dimension 0 from the chunk group */
  vds_channel ch = {0};
  ch.per_trace = 1, ch.mapped_values = 1;
  vds_geom g;
  vds_geom_init(&lay, &ch, "Dimensions_012", 0, &g, &err);
  ok(g.total == 6 && g.ngroup == 2 && g.group[0] == 1 && g.group[1] == 2, "PerTrace(1) chunks over dims 1,2: %lld",
     (long long)g.total);
  vds_layout_free(&lay);
  static const char *badlay[] = {"{\"layoutDescriptor\":{\"brickSize\":\"BrickSize_48\"}}", "[]", "{",
                                 ("{\"layoutDescriptor\":{\"brickSize\":\"BrickSize_64\",\"negativeMargin\":40,"
                                  "\"positiveMargin\":4}}")};
  for (size_t i = 0; i < 4; i++)
    ok(vds_parse_layout(badlay[i], strlen(badlay[i]), "VDL", &lay, &err) != VD_OK && strncmp(err.msg, "VDL:", 4) == 0,
       "bad layout %zu: %s", i, err.msg);
}

int main(void) {
  real();
  status_errors();
  return done_testing();
}
