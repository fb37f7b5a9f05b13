/* Document cache: hits, byte bound (least recently used out first), time-to-live, and
 * scopes (the credentials in force): a document is found only under its own scope. */
#include <string.h>
#include <unistd.h>

#include "store/cache.h"
#include "tap.h"

int main(void) {
  vd_cache *c = vd_cache_new();
  char big[1000];
  memset(big, 'x', sizeof big);
  for (int i = 0; i < 10; i++) {
    char key[16];
    snprintf(key, sizeof key, "k%d", i);
    vd_blob *b = vd_blob_new(big, sizeof big);
    vd_cache_put(c, key, b, 5000);
    vd_blob_unref(b);
    if (i == 2) vd_blob_unref(vd_cache_get(c, "k0", 60)); /* k0 becomes recent */
  }
  ok(vd_cache_bytes(c) <= 5000, "cache stays under its byte bound (%lld)", (long long)vd_cache_bytes(c));
  vd_blob *hit = vd_cache_get(c, "k9", 60), *gone = vd_cache_get(c, "k1", 60);
  ok(hit && hit->len == 1000 && !gone, "newest entry kept, old unused entry evicted");
  vd_blob_unref(hit);
  vd_blob *b = vd_blob_new("abc", 3);
  vd_cache_put(c, "t", b, 5000);
  vd_blob *held = vd_cache_get(c, "t", 60);
  vd_cache_clear(c);
  ok(held && memcmp(held->data, "abc", 3) == 0, "a blob outlives its eviction while referenced");
  vd_blob_unref(held);
  vd_cache_put(c, "t", b, 5000);
  usleep(30000);
  ok(vd_cache_get(c, "t", 0.01) == NULL, "stale entry dropped after its time-to-live");
  vd_blob *huge = vd_blob_new(big, sizeof big);
  vd_cache_put(c, "h", huge, 1500);
  ok(vd_cache_get(c, "h", 60) == NULL, "a document over half the bound is not cached");
  vd_blob_unref(huge);
  vd_blob *mine = vd_blob_new("mine", 4);
  vd_cache_scope(c, 1);
  vd_cache_put(c, "s", mine, 5000);
  vd_cache_scope(c, 2);
  ok(vd_cache_get(c, "s", 60) == NULL, "a document stored under one scope is not found under another");
  vd_blob *theirs = vd_blob_new("theirs", 6);
  vd_cache_put(c, "s", theirs, 5000);
  vd_cache_scope(c, 1);
  vd_blob *back = vd_cache_get(c, "s", 60);
  ok(back && back->len == 4, "each scope keeps its own copy of a key");
  vd_blob_unref(back);
  vd_cache_drop(c, "s");
  vd_cache_scope(c, 2);
  ok(vd_cache_get(c, "s", 60) == NULL, "a drop (after a write) takes the key's copy under every scope");
  vd_blob_unref(mine);
  vd_blob_unref(theirs);
  vd_blob_unref(b);
  vd_cache_free(c);
  return done_testing();
}
