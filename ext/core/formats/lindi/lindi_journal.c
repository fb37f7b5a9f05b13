/* The LINDI writer's journal: format and checked parse (see lindi_journal.h). A journal
 * decides whether recovery truncates or rewrites an archive, so nothing in it is taken
 * on trust: its checksum, the file it names, and every number against the file's size. */
#include "lindi_journal.h"

#include <cJSON.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"

#define SUM_LINE 73 /* "\nsha256:" + 64 hex + "\n" */

static void sha256_hex(const void *p, size_t n, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL) != 1) mdlen = 0;
  for (unsigned i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", i < mdlen ? md[i] : 0);
  out[64] = 0;
}

static int add_b64(cJSON *o, const char *key, const unsigned char *p, size_t n) {
  char *s = vd_base64_encode(p, n);
  int ok = s && cJSON_AddStringToObject(o, key, s);
  free(s);
  return ok ? 0 : -1;
}

static int add_u64(cJSON *o, const char *key, uint64_t v) {
  char s[32];
  snprintf(s, sizeof s, "%llu", (unsigned long long)v);
  return cJSON_AddStringToObject(o, key, s) ? 0 : -1;
}

vd_code lindi_journal_format(const lindi_journal *j, uint64_t dev, uint64_t ino, vd_buf *out, vd_err *err) {
  cJSON *o = cJSON_CreateObject(), *tr = NULL;
  int bad = !o || add_u64(o, "dev", dev) || add_u64(o, "ino", ino) || !cJSON_AddNumberToObject(o, "end", (double)j->end) ||
            !cJSON_AddNumberToObject(o, "gen", (double)j->gen) ||
            add_b64(o, "entry_before", j->entry_before, LINDI_ENTRY_SIZE);
  if (!bad && j->has_commit) {
    bad = !cJSON_AddNumberToObject(o, "commit_at", (double)j->commit_at) ||
          !cJSON_AddNumberToObject(o, "new_end", (double)j->new_end) ||
          !cJSON_AddNumberToObject(o, "revive", (double)j->revive) || add_b64(o, "commit", j->commit, j->commit_len) ||
          add_b64(o, "hold", j->hold, sizeof j->hold) ||
          (j->has_entry && add_b64(o, "entry", j->entry, LINDI_ENTRY_SIZE)) ||
          !(tr = cJSON_AddArrayToObject(o, "trash"));
    for (int i = 0; i < j->ntrash && !bad; i++) {
      cJSON *t = cJSON_CreateArray();
      bad = !t || !cJSON_AddItemToArray(tr, t) || !cJSON_AddItemToArray(t, cJSON_CreateNumber((double)j->trash[i].o)) ||
            !cJSON_AddItemToArray(t, cJSON_CreateNumber((double)j->trash[i].dash)) ||
            !cJSON_AddItemToArray(t, cJSON_CreateString(j->trash[i].name));
    }
  }
  char *text = bad ? NULL : cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!text) return vd_nomem(err);
  char sum[65];
  sha256_hex(text, strlen(text), sum);
  out->len = 0;
  vd_buf_append(out, text, strlen(text));
  vd_buf_append(out, "\nsha256:", 8);
  vd_buf_append(out, sum, 64);
  vd_buf_append(out, "\n", 1);
  free(text);
  return out->data ? VD_OK : vd_nomem(err);
}

/* An integer in [lo, hi], exactly. */
static int num(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= (double)lo && v->valuedouble <= (double)hi)) return -1;
  *out = (int64_t)v->valuedouble;
  return (double)*out == v->valuedouble ? 0 : -1;
}

/* base64 text decoding to exactly want bytes (want 0: any length, malloc'd into *dyn). */
static int b64(const cJSON *o, const char *key, unsigned char *fixed, size_t want, unsigned char **dyn, size_t *len) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  unsigned char *p = NULL;
  size_t n = 0;
  if (!cJSON_IsString(v) || vd_base64_decode(v->valuestring, strlen(v->valuestring), &p, &n)) return -1;
  if (want && n != want) {
    free(p);
    return -1;
  }
  if (want) {
    memcpy(fixed, p, n);
    free(p);
  } else {
    *dyn = p;
    *len = n;
  }
  return 0;
}

static int same_u64(const cJSON *o, const char *key, uint64_t v) {
  char s[32];
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  snprintf(s, sizeof s, "%llu", (unsigned long long)v);
  return cJSON_IsString(x) && strcmp(x->valuestring, s) == 0;
}

const char *lindi_journal_parse(const char *text, size_t n, uint64_t dev, uint64_t ino, int64_t size,
                                lindi_journal *j) {
  memset(j, 0, sizeof *j);
  j->revive = -1;
  if (n < SUM_LINE || text[n - 1] != '\n' || memcmp(text + n - SUM_LINE, "\nsha256:", 8) != 0) return "no checksum";
  char want[65];
  sha256_hex(text, n - SUM_LINE, want);
  if (memcmp(want, text + n - 65, 64) != 0) return "its checksum does not match its text";
  cJSON *o = cJSON_ParseWithLength(text, n - SUM_LINE);
  if (!o) return "malformed JSON";
  const char *why = NULL;
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(o, "trash");
  if (!same_u64(o, "dev", dev) || !same_u64(o, "ino", ino)) why = "it was written for another file";
  else if (num(o, "end", 1536, size, &j->end) || num(o, "gen", 0, INT64_C(1) << 53, &j->gen) ||
           b64(o, "entry_before", j->entry_before, LINDI_ENTRY_SIZE, NULL, NULL))
    why = "fields missing or out of range";
  else if ((j->has_commit = cJSON_GetObjectItemCaseSensitive(o, "commit") != NULL) &&
           (num(o, "commit_at", 512, j->end, &j->commit_at) || num(o, "new_end", j->end, size, &j->new_end) ||
            num(o, "revive", -1, j->end - 512, &j->revive) || b64(o, "commit", NULL, 0, &j->commit, &j->commit_len) ||
            j->commit_len == 0 || j->commit_len > (size_t)(j->end - j->commit_at) ||
            b64(o, "hold", j->hold, sizeof j->hold, NULL, NULL) || !cJSON_IsArray(tr) ||
            ((j->has_entry = cJSON_GetObjectItemCaseSensitive(o, "entry") != NULL) &&
             b64(o, "entry", j->entry, LINDI_ENTRY_SIZE, NULL, NULL))))
    why = "fields missing or out of range";
  int nt = j->has_commit && !why ? cJSON_GetArraySize(tr) : 0;
  if (nt > 0 && !(j->trash = calloc((size_t)nt, sizeof *j->trash))) why = "out of memory";
  const cJSON *t = nt > 0 && !why ? tr->child : NULL;
  for (; t && !why; t = t->next) {
    lindi_trash_step *s = &j->trash[j->ntrash];
    const cJSON *o0 = cJSON_GetArrayItem(t, 0), *d0 = cJSON_GetArrayItem(t, 1), *nm = cJSON_GetArrayItem(t, 2);
    /* a member to trash lies wholly before E, after the entry, and keeps a .trash/ name */
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != 3 || !cJSON_IsNumber(o0) || !cJSON_IsNumber(d0) ||
        !cJSON_IsString(nm) || !(o0->valuedouble >= 1536 && o0->valuedouble <= (double)(j->end - 512)) ||
        !(d0->valuedouble >= 0 && d0->valuedouble <= (double)(j->end - 512) - o0->valuedouble) ||
        strncmp(nm->valuestring, ".trash/", 7) != 0 || strlen(nm->valuestring) >= sizeof s->name) {
      why = "fields missing or out of range";
      break;
    }
    s->o = (int64_t)o0->valuedouble;
    s->dash = (int64_t)d0->valuedouble;
    if ((double)s->o != o0->valuedouble || (double)s->dash != d0->valuedouble) {
      why = "fields missing or out of range";
      break;
    }
    memcpy(s->name, nm->valuestring, strlen(nm->valuestring) + 1);
    j->ntrash++;
  }
  cJSON_Delete(o);
  if (why) lindi_journal_free(j);
  return why;
}

void lindi_journal_free(lindi_journal *j) {
  free(j->commit);
  free(j->trash);
  j->commit = NULL;
  j->trash = NULL;
  j->ntrash = 0;
  j->commit_len = 0;
}
