/* OpenVDS cloud layout: VolumeDataLayout and LayerStatus documents, chunk geometry,
 * chunk-metadata page entries and the None/RLE/Zip chunk codec. Facts from
 * shared/spec/openvds.md; section numbers below refer to it. */
#ifndef VD_OPENVDS_H
#define VD_OPENVDS_H

#include <stdint.h>

#include "vd_buf.h"
#include "vd_ctx.h"
#include "vd_err.h"

#define VDS_MAXDIM 6

enum vds_format { VDS_F_1BIT = 0, VDS_F_U8, VDS_F_U16, VDS_F_R32, VDS_F_U32, VDS_F_R64, VDS_F_U64 };
enum vds_method {
  VDS_M_NONE = 0, VDS_M_WAVELET, VDS_M_RLE, VDS_M_ZIP, VDS_M_WAVELET_NB, VDS_M_WAVELET_LOSSLESS,
  VDS_M_WAVELET_NB_LOSSLESS, VDS_M_UNKNOWN = -1
};
enum vds_status { VDS_S_UNWRITTEN = 0, VDS_S_DATA, VDS_S_CONSTANT, VDS_S_NOVALUE };

typedef struct vds_axis {
  char *name, *unit;
  int64_t samples;
  double cmin, cmax;
} vds_axis;

typedef struct vds_channel {
  char *name, *unit;
  int format;           /* enum vds_format */
  int components;       /* 1, 2, 4 */
  double vmin, vmax;
  int per_trace;        /* channelMapping PerTrace */
  int mapped_values;
  int discrete, renderable, lossy, use_no_value;
  double no_value, scale, offset;
} vds_channel;

typedef struct vds_metadata_item {
  char *category, *name, *type;
  void *value; /* cJSON node, owned by the layout's document */
} vds_metadata_item;

typedef struct vds_layout {
  int dims;
  int brick_log2;       /* 5..12 */
  int neg, pos;
  int mult2d;
  int lod_levels;
  int create_2d_lods;
  int force_full_res;
  int full_res_dim;     /* -1 unless forced */
  vds_axis axes[VDS_MAXDIM];
  int nchannels;
  vds_channel *channels;
  int nmeta;
  vds_metadata_item *meta;
  void *doc;            /* the parsed cJSON document (metadata values point into it) */
} vds_layout;

/* Chunk grid of one layer (section 6). */
typedef struct vds_geom {
  int64_t n[VDS_MAXDIM];       /* samples per dimension (LOD0) */
  int64_t b[VDS_MAXDIM];       /* valid samples per chunk (LOD0 units); 1 outside the group */
  int64_t chunks[VDS_MAXDIM];
  int neg[VDS_MAXDIM], pos[VDS_MAXDIM];
  int in_group[VDS_MAXDIM];
  int shift[VDS_MAXDIM];       /* LOD decimation per dimension (0 for the full-res one) */
  int group[3], ngroup;        /* chunk axes X, Y, Z: the group's dimensions ascending */
  int64_t total;
} vds_geom;

typedef struct vds_layer {
  char *name, *channel_name, *dim_group, *produce, *compression;
  int lod;
  int method;                  /* enum vds_method */
  double tolerance;
  int has_pages;
  int64_t chunk_count;         /* from the layout (checked against LayerStatus when present) */
  int page_size, entry_size;
  int64_t page_count;
  int64_t *page_dir;           /* NULL when LayerStatus has no pageDirectory */
  int64_t valid_chunk_count, serialized_size, uncompressed_size; /* -1 when absent */
  int channel;                 /* index into layout channels */
  vds_geom geom;
} vds_layer;

typedef struct vds_dataset {
  char *url;
  vds_layout layout;
  int nlayers;
  vds_layer *layers;
} vds_dataset;

/* Document parsing; `where` names the document in errors. */
vd_code vds_parse_layout(const char *json, size_t len, const char *where, vds_layout *out, vd_err *err);
void vds_layout_free(vds_layout *l);
vd_code vds_parse_status(const char *json, size_t len, const char *where, const vds_layout *layout,
                         int *nlayers, vds_layer **layers, vd_err *err);
void vds_layers_free(vds_layer *layers, int n);

/* Dataset = layout + status fetched (through the cache) under a base URL. */
vd_code vds_open(vd_ctx *ctx, const char *url, vds_dataset **out, vd_err *err);
/* The same, and when a document was fetched but does not parse, which one: *bad_doc 1
 * for VolumeDataLayout, 2 for LayerStatus (0 otherwise: a fetch failed, or none). */
vd_code vds_open_which(vd_ctx *ctx, const char *url, vds_dataset **out, int *bad_doc, vd_err *err);
void vds_close(vds_dataset *ds);
/* The dataset from fresh cached documents only, for planners: NULL when not cached. */
vds_dataset *vds_peek(vd_ctx *ctx, const char *url);
/* What vds_open does with the two documents once fetched (ds zeroed; url not set), for
 * callers that fetch many datasets' documents at once; where: their redacted URLs. */
vd_code vds_parse_docs(const vd_blob *layout, const vd_blob *status, const char *lwhere, const char *swhere,
                       vds_dataset *ds, vd_err *err);
/* The one wording of a dataset whose VolumeDataLayout or LayerStatus could not be fetched
 * (rc VD_NOTFOUND: "<url>: not an OpenVDS dataset: ..." before err's message). */
vd_code vds_not_dataset(const char *url, vd_code rc, vd_err *err);
vd_code vds_find_layer(const vds_dataset *ds, const char *name, const vds_layer **out, vd_err *err);
char *vds_page_key(const vds_layer *l, int64_t page);   /* "<layer>/ChunkMetadata/<n>", NULL if -1 */
char *vds_chunk_key_url(const char *url, const char *layer, int64_t chunk); /* "<url>/<layer>/<chunk>" */
int64_t vds_page_stored(const vds_layer *l, int64_t page); /* stored name, -1 if absent */

/* Geometry (section 6). */
vd_code vds_geom_init(const vds_layout *lay, const vds_channel *ch, const char *dim_group, int lod,
                      vds_geom *g, vd_err *err);
void vds_chunk_index(const vds_geom *g, int64_t chunk, int64_t idx[VDS_MAXDIM]);
/* Valid (margin-free) LOD0 sample range of position i along d, inclusive. */
void vds_chunk_valid(const vds_geom *g, int d, int64_t i, int64_t *min, int64_t *max);
/* Voxel size of the stored chunk (margins included, LOD voxels) along X, Y, Z. */
void vds_chunk_size(const vds_geom *g, const int64_t idx[VDS_MAXDIM], int64_t size[3]);
int vds_format_bytes(int format); /* 0 for 1-bit */
const char *vds_format_name(int format);
int vds_method_from_name(const char *s);

/* Page entries (section 4). */
typedef struct vds_entry {
  int status;                  /* enum vds_status */
  uint64_t hash;
  float constant;              /* for VDS_S_CONSTANT */
  uint32_t object_size;        /* 28-byte entries only */
  const unsigned char *levels; /* 16 bytes for 28-byte entries, else NULL */
} vds_entry;

void vds_entry_decode(const unsigned char *p, int entry_size, vds_entry *e);
/* What a chunk hash stands for (spec section 4): 0 unwritten, all ones NoValue,
 * 0x01010101 in the high half a constant (its float in the low half), else data. */
int vds_hash_status(uint64_t hash);
/* Checks a downloaded page: whole entries, not longer than a page, covering every chunk
 * of the layer it must hold. */
vd_code vds_page_check(const vds_layer *l, int64_t page, size_t len, const char *where, vd_err *err);

/* Chunk codec (section 9). Decodes a None/RLE/Zip object into samples; when expect is
 * not NULL the descriptor must match it (sizes X,Y,Z, format, components). */
typedef struct vds_shape {
  int64_t size[3];
  int format, components;
} vds_shape;
vd_code vds_decode(int method, const unsigned char *obj, size_t n, const vds_shape *expect,
                   const char *where, vd_buf *out, vds_shape *got, vd_err *err);
size_t vds_shape_bytes(const vds_shape *s);
/* Fills a chunk that has no object: constant value, NoValue, or not written. */
vd_code vds_fill(const vds_channel *ch, const vds_shape *s, int status, float constant, vd_buf *out,
                 vd_err *err);

/* Decoded samples of one chunk (openvds_chunk.c): fetched and decoded, or filled for
 * constant / NoValue / unwritten chunks; shape gets the voxel size and format. */
vd_code vds_read_chunk(vd_ctx *ctx, const vds_dataset *ds, const vds_layer *l, int64_t chunk, vd_buf *samples,
                       vds_shape *shape, vd_err *err);

#endif
