/* Strict accessors over cJSON nodes that produce errors naming the document and key. */
#ifndef VD_JSON_H
#define VD_JSON_H

#include <cJSON.h>
#include <stdint.h>

#include "vd_err.h"

/* Parses len bytes; on failure says where (byte offset) in `where`. */
vd_code vd_json_parse(const char *text, size_t len, const char *where, cJSON **out, vd_err *err);
/* Required members: error when missing or of the wrong type. `ctx` names the object. */
vd_code vd_json_int(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    int64_t *out, vd_err *err);
vd_code vd_json_num(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    double *out, vd_err *err);
vd_code vd_json_str(const cJSON *obj, const char *key, const char *where, const char *ctx,
                    const char **out, vd_err *err);
/* Optional members: keep *out (the default) when missing; error only on a wrong type. */
vd_code vd_json_opt_int(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        int64_t *out, vd_err *err);
vd_code vd_json_opt_num(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        double *out, vd_err *err);
vd_code vd_json_opt_bool(const cJSON *obj, const char *key, const char *where, const char *ctx,
                         int *out, vd_err *err);
vd_code vd_json_opt_str(const cJSON *obj, const char *key, const char *where, const char *ctx,
                        const char **out, vd_err *err);

#endif
