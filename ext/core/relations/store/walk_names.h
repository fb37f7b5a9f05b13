/* Names met in a walk of a store's folders (vds_datasets, vdsql_datasets): keys relative
 * to the walked URL's directory, made URLs, and the keys no URL can address. */
#ifndef VD_WALK_NAMES_H
#define VD_WALK_NAMES_H

/* rel (relative to dir, "" for dir itself) as a URL, the way vds_open joins names;
 * malloc'd, NULL when out of memory. */
char *vd_walk_at(const char *dir, const char *rel);
/* Does the key have a "." or ".." segment (or an empty one)? As a URL it would name
 * another object: HTTP clients and servers resolve such segments (RFC 3986 5.2.4), and a
 * file path does too; so its dataset is reported, never opened. */
int vd_walk_unaddressable(const char *key);
/* The error of such a dataset, naming url (redacted); malloc'd, NULL when out of memory. */
char *vd_walk_unaddressable_error(const char *url);

#endif
