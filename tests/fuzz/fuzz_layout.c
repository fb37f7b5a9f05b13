/* libFuzzer target: the VolumeDataLayout parser. The input is the JSON document given
 * to vds_parse_layout. A layout that parses is then pushed through the chunk-grid
 * arithmetic (vds_geom_init for every channel, a few dimension groups and every LOD,
 * plus the first and last chunk's index and stored size), since that is what a
 * hostile layout reaches next in vds_open; everything is freed with vds_layout_free. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/openvds/openvds.h"

static void walk_geometry(const vds_layout *lay) {
  static const char *const groups[] = {"Dimensions_012", "Dimensions_01", "Dimensions_02", "Dimensions_12",
                                       "Dimensions_345", "Dimensions_013", "Dimensions_3"};
  for (int c = 0; c < lay->nchannels; c++)
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
      for (int lod = 0; lod <= lay->lod_levels; lod++) {
        vds_geom geom;
        vd_err err;
        if (vds_geom_init(lay, &lay->channels[c], groups[g], lod, &geom, &err)) continue;
        int64_t last[2] = {0, geom.total - 1};
        for (int k = 0; k < 2; k++) {
          int64_t idx[VDS_MAXDIM], size[3], lo, hi;
          vds_chunk_index(&geom, last[k], idx);
          vds_chunk_size(&geom, idx, size);
          for (int d = 0; d < VDS_MAXDIM; d++) vds_chunk_valid(&geom, d, idx[d], &lo, &hi);
        }
      }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vds_layout lay;
  vd_err err;
  if (vds_parse_layout((const char *)data, size, "fuzz/VolumeDataLayout", &lay, &err) != VD_OK) return 0;
  walk_geometry(&lay);
  vds_layout_free(&lay);
  return 0;
}
