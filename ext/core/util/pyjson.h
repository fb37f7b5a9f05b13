/* Serializes a cJSON value the way Python's json.dumps(obj, indent=2, sort_keys=True)
 * does (lindi writes lindi.json and its index that way), ASCII only. */
#ifndef VD_PYJSON_H
#define VD_PYJSON_H

#include <cJSON.h>

#include "../vd_buf.h"

int vd_pyjson(const cJSON *v, vd_buf *out); /* 0 ok, -1 out of memory */

#endif
