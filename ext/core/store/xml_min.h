/* A small bounded XML reader for the object stores' answers (S3 ListObjectsV2 and
 * errors, Azure List Blobs and errors): elements, attributes, text, the five predefined
 * entities and character references; everything else (a DTD, CDATA, an undeclared
 * entity, mismatched tags, nesting deeper than 32) is "not XML". Not libxml2: Debian's
 * libxml2 loads ICU and libstdc++, about 2 MiB more resident memory in every process that
 * loads vdsql (sqlite3 .load: 11.0 -> 13.2 MiB peak RSS), which broke the 32 MiB budget of
 * tests/lindi/memory.t, for answers that are flat and simple; a DTD is also how entity
 * expansion attacks come in. Memory is bounded by the answer's size. */
#ifndef VD_XML_MIN_H
#define VD_XML_MIN_H

#include <stddef.h>

typedef struct vd_xml {
  const char *name, *attrs; /* into the document; attrs: the raw text after the name */
  size_t namel, attrsl;
  char *text; /* decoded character data directly inside, NUL-terminated */
  size_t textl;
  struct vd_xml *child, *last, *next;
} vd_xml;

/* The document's root element; NULL when it is not one well-formed element with only
 * white space, comments and processing instructions around it (or out of memory). */
vd_xml *vd_xml_parse(const char *body, size_t len);
void vd_xml_free(vd_xml *n);
int vd_xml_is(const vd_xml *n, const char *name);               /* n is an element of that name */
vd_xml *vd_xml_child(const vd_xml *n, const char *name);        /* its first child of that name */
char *vd_xml_text(const vd_xml *n, size_t *len);                /* a malloc'd copy; NULL without n */
int vd_xml_has_attr(const vd_xml *n, const char *name, const char *value); /* name="value" */

#endif
