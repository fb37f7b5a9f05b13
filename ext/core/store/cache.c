/* Bounded LRU + TTL document cache (see cache.h): a chained hash table threaded
 * with a doubly linked recency list. Every entry carries the scope it was stored under
 * (the identity of the credentials in force) and is found only under that scope. */
#include "cache.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct entry {
  char *key;
  uint64_t scope;              /* the credentials it was fetched with (vd_cache_scope) */
  vd_blob *blob;
  double stamp;
  struct entry *hnext;         /* hash chain */
  struct entry *prev, *next;   /* recency list, head = most recent */
} entry;

struct vd_cache {
  entry **tab;
  size_t nbuckets, count;
  int64_t bytes;
  uint64_t scope;              /* what lookups and stores are keyed with now */
  entry *head, *tail;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t hash(const char *s) {
  size_t h = 1469598103934665603ull; /* FNV-1a */
  while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
  return h;
}

static int64_t cost(const entry *e) { return (int64_t)e->blob->len + (int64_t)strlen(e->key) + 64; }

vd_cache *vd_cache_new(void) {
  vd_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->nbuckets = 256;
  c->tab = calloc(c->nbuckets, sizeof *c->tab);
  if (!c->tab) {
    free(c);
    return NULL;
  }
  return c;
}

static void unlink_lru(vd_cache *c, entry *e) {
  if (e->prev) e->prev->next = e->next; else c->head = e->next;
  if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(vd_cache *c, entry *e) {
  e->prev = NULL;
  e->next = c->head;
  if (c->head) c->head->prev = e;
  c->head = e;
  if (!c->tail) c->tail = e;
}

static void remove_entry(vd_cache *c, entry *e) {
  entry **pp = &c->tab[hash(e->key) % c->nbuckets];
  while (*pp != e) pp = &(*pp)->hnext;
  *pp = e->hnext;
  unlink_lru(c, e);
  c->bytes -= cost(e);
  c->count--;
  vd_blob_unref(e->blob);
  free(e->key);
  free(e);
}

/* key's entry under the current scope; with any_scope, the first under any scope */
static entry *find(vd_cache *c, const char *key, int any_scope) {
  for (entry *e = c->tab[hash(key) % c->nbuckets]; e; e = e->hnext)
    if ((any_scope || e->scope == c->scope) && strcmp(e->key, key) == 0) return e;
  return NULL;
}

void vd_cache_scope(vd_cache *c, uint64_t scope) { c->scope = scope; }

void vd_cache_clear(vd_cache *c) {
  while (c->head) remove_entry(c, c->head);
}

void vd_cache_free(vd_cache *c) {
  if (!c) return;
  vd_cache_clear(c);
  free(c->tab);
  free(c);
}

vd_blob *vd_cache_get(vd_cache *c, const char *key, double ttl) {
  entry *e = find(c, key, 0);
  if (!e) return NULL;
  if (ttl <= 0 || now() - e->stamp > ttl) {
    remove_entry(c, e);
    return NULL;
  }
  unlink_lru(c, e);
  push_front(c, e);
  return vd_blob_ref(e->blob);
}

static void grow(vd_cache *c) {
  size_t n = c->nbuckets * 2;
  entry **tab = calloc(n, sizeof *tab);
  if (!tab) return; /* stay at the old size: slower, still correct */
  for (size_t i = 0; i < c->nbuckets; i++) {
    entry *e = c->tab[i];
    while (e) {
      entry *nx = e->hnext;
      size_t h = hash(e->key) % n;
      e->hnext = tab[h];
      tab[h] = e;
      e = nx;
    }
  }
  free(c->tab);
  c->tab = tab;
  c->nbuckets = n;
}

void vd_cache_trim(vd_cache *c, int64_t max_bytes) {
  while (c->tail && c->bytes > max_bytes) remove_entry(c, c->tail);
}

void vd_cache_put(vd_cache *c, const char *key, vd_blob *b, int64_t max_bytes) {
  entry *old = find(c, key, 0);
  if (old) remove_entry(c, old);
  if ((int64_t)b->len > max_bytes / 2) return; /* one document may not flush everything else */
  entry *e = calloc(1, sizeof *e);
  if (!e || !(e->key = strdup(key))) {
    free(e);
    return;
  }
  e->blob = vd_blob_ref(b);
  e->scope = c->scope;
  e->stamp = now();
  size_t h = hash(key) % c->nbuckets;
  e->hnext = c->tab[h];
  c->tab[h] = e;
  push_front(c, e);
  c->bytes += cost(e);
  c->count++;
  if (c->count > c->nbuckets * 2) grow(c);
  vd_cache_trim(c, max_bytes);
}

/* Every scope's copy goes: a write changed the object for everyone. */
void vd_cache_drop(vd_cache *c, const char *key) {
  for (entry *e; (e = find(c, key, 1));) remove_entry(c, e);
}

int64_t vd_cache_bytes(const vd_cache *c) { return c->bytes; }
