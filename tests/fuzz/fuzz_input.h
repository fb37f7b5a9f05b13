/* The fuzz targets' reading of their input: bytes in order (zero past the end), 8-byte
 * big-endian words, and the mix of small, negative and near-INT64_MAX numbers that the
 * counts of a broken file hold. */
#ifndef VD_FUZZ_INPUT_H
#define VD_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct in {
  const uint8_t *p;
  size_t n;
} in;

static inline unsigned byte(in *s) {
  if (!s->n) return 0;
  s->n--;
  return *s->p++;
}

static inline uint64_t raw(in *s) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | byte(s);
  return v;
}

/* mostly small (below small_mod), sometimes negative, near INT64_MAX or any word */
static inline int64_t hostile_value(in *s, unsigned small_mod) {
  unsigned k = byte(s);
  if (k < 200) return k % small_mod;
  if (k < 220) return -(int64_t)(k % 3) - 1;
  if (k < 240) return INT64_MAX - (int64_t)(k % 7);
  return (int64_t)raw(s);
}

#endif
