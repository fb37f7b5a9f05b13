/* Bounded document cache: (credential scope, URL) -> shared blob, least recently used first out, each entry
 * fresh for cache_ttl seconds. Holds JSON documents and chunk-metadata pages, never
 * chunk bodies. */
#ifndef VD_CACHE_H
#define VD_CACHE_H

#include <stdint.h>

#include "vd_buf.h"

typedef struct vd_cache vd_cache;

vd_cache *vd_cache_new(void);
void vd_cache_free(vd_cache *c);
void vd_cache_clear(vd_cache *c);
/* A new reference to a fresh entry, or NULL. Stale entries are dropped on sight. */
vd_blob *vd_cache_get(vd_cache *c, const char *key, double ttl);
/* Stores a reference (replacing an older one) and evicts down to max_bytes. */
void vd_cache_put(vd_cache *c, const char *key, vd_blob *b, int64_t max_bytes);
/* Drops key's entries under every scope. */
void vd_cache_drop(vd_cache *c, const char *key);
/* From now on entries are stored and found under this scope (0 at first): an identity
 * of the credentials in force, so that a document fetched with one role's credentials is
 * never served to another (PostgreSQL's SET ROLE, SECURITY DEFINER). Entries of other
 * scopes stay, unseen, until evicted. */
void vd_cache_scope(vd_cache *c, uint64_t scope);
void vd_cache_trim(vd_cache *c, int64_t max_bytes);
int64_t vd_cache_bytes(const vd_cache *c);

#endif
