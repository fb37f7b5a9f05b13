/* libFuzzer target: the LayerStatus parser. A fixed, valid VolumeDataLayout (3 axes
 * 200x150x100, BrickSize_64, margins 4/4, LODLevels_1, channels Amplitude R32 Direct
 * and Trace U8 PerTrace) is parsed once; each input is the LayerStatus JSON given to
 * vds_parse_status with it. On success every page of every paged layer goes through
 * vds_page_key and vds_page_stored, and every chunk through vds_chunk_index and
 * vds_chunk_size; then everything is freed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/openvds/openvds.h"

static const char layout_json[] =
    "{\"axisDescriptors\":["
    "{\"name\":\"Sample\",\"unit\":\"ms\",\"numSamples\":200,\"coordinateMin\":0.0,\"coordinateMax\":796.0},"
    "{\"name\":\"Crossline\",\"unit\":\"unitless\",\"numSamples\":150,\"coordinateMin\":1000.0,"
    "\"coordinateMax\":1149.0},"
    "{\"name\":\"Inline\",\"unit\":\"unitless\",\"numSamples\":100,\"coordinateMin\":2000.0,"
    "\"coordinateMax\":2099.0}],"
    "\"channelDescriptors\":["
    "{\"name\":\"Amplitude\",\"format\":\"Format_R32\",\"components\":\"Components_1\","
    "\"channelMapping\":\"Direct\",\"mappedValues\":1,\"valueRange\":[-1.0,1.0]},"
    "{\"name\":\"Trace\",\"format\":\"Format_U8\",\"components\":\"Components_1\","
    "\"channelMapping\":\"PerTrace\",\"mappedValues\":1,\"valueRange\":[0.0,256.0]}],"
    "\"layoutDescriptor\":{\"brickSize\":\"BrickSize_64\",\"brickSize2DMultiplier\":4,\"create2DLODs\":false,"
    "\"forceFullResolutionDimension\":false,\"fullResolutionDimension\":-1,\"lodLevels\":\"LODLevels_1\","
    "\"negativeMargin\":4,\"positiveMargin\":4},"
    "\"metadata\":[]}";

static vds_layout layout;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  vd_err err;
  if (vds_parse_layout(layout_json, strlen(layout_json), "fuzz/VolumeDataLayout", &layout, &err) != VD_OK) abort();
  /* the layout lives for the whole process; keep LeakSanitizer quiet about it */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int n;
  vds_layer *layers;
  vd_err err;
  if (vds_parse_status((const char *)data, size, "fuzz/LayerStatus", &layout, &n, &layers, &err) != VD_OK)
    return 0;
  for (int i = 0; i < n; i++) {
    const vds_layer *l = &layers[i];
    if (l->geom.total < 1 || l->geom.total > 1000000) abort(); /* the fixed layout has a few hundred at most */
    for (int64_t c = 0; c < l->geom.total; c++) {
      int64_t idx[VDS_MAXDIM], sz[3];
      vds_chunk_index(&l->geom, c, idx);
      vds_chunk_size(&l->geom, idx, sz);
      if (sz[0] < 1 || sz[1] < 1 || sz[2] < 1) abort();
    }
    if (!l->has_pages) continue;
    if (l->page_count < 1 || l->page_count > l->chunk_count) abort();
    for (int64_t p = 0; p < l->page_count; p++) {
      char *key = vds_page_key(l, p);
      int64_t stored = vds_page_stored(l, p);
      if ((key == NULL) != (stored < 0)) abort();
      free(key);
    }
  }
  vds_layers_free(layers, n);
  return 0;
}
