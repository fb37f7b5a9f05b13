/* Azure Blob credentials and URLs: which account, endpoint and secret an az:// URL is
 * read and written with, and the https (or Azurite http) URL of a blob or a listing.
 * Pure functions on strings: the Azure backend calls them at its first request (the
 * environment is read then, never when the extension loads). Signing is azure_sign.h,
 * the service's XML answers azure_xml.h. */
#ifndef VD_AZURE_AUTH_H
#define VD_AZURE_AUTH_H

#include <stddef.h>

#include "vd_ctx.h"
#include "vd_err.h"

/* The four ways of giving credentials, as vdsql_config keys or environment variables. */
typedef struct vd_az_settings {
  const char *connection_string; /* AZURE_STORAGE_CONNECTION_STRING */
  const char *account;           /* AZURE_STORAGE_ACCOUNT */
  const char *key;               /* AZURE_STORAGE_KEY (base64) */
  const char *sas_token;         /* AZURE_STORAGE_SAS_TOKEN */
  int from_config;               /* errors name the vdsql_config keys (1) or the variables (0) */
} vd_az_settings;

typedef struct vd_az_cred {
  char account[64];       /* may be empty with a SAS and an explicit endpoint */
  char endpoint[512];     /* scheme://host[:port][/path], no trailing '/' */
  unsigned char key[128]; /* decoded account key (Shared Key), keylen 0 without one */
  size_t keylen;
  char sas[4096];         /* SAS query without a leading '?', "" without one */
} vd_az_cred;

/* Parses the settings: a connection string wins; otherwise account with key or SAS.
 * Every fault has one wording naming the setting, never its secret value. */
vd_code vd_az_cred_parse(const vd_az_settings *s, vd_az_cred *out, vd_err *err);
/* The settings of ctx (vdsql_config's azure_* keys) when any is set, else (when
 * cfg->env_credentials) the environment's AZURE_STORAGE_* variables, parsed. */
vd_code vd_az_cred_load(const vd_config *cfg, vd_az_cred *out, vd_err *err);
/* Wipes the secrets. */
void vd_az_cred_clear(vd_az_cred *c);

/* az://container/key[?query] -> the blob's URL: endpoint/container/encoded-key, then the
 * URL's own query or else the credentials' SAS. The key is percent-decoded once with
 * decode (the store's URLs: vd_url_join encodes names), else taken literally (a test
 * driver's names); then every byte but A-Z a-z 0-9 - . _ ~ / is percent-encoded. An
 * empty key gives the container's URL. *out is malloc'd. */
vd_code vd_az_blob_url(const vd_az_cred *c, const char *az_url, int decode, char **out, vd_err *err);
/* The List Blobs URL for az://container/prefix: include=metadata, delimiter=/ with delim,
 * the marker when not NULL, maxresults when > 0; query values encoded; SAS appended.
 * decode: as above. */
vd_code vd_az_list_url(const vd_az_cred *c, const char *az_url, int decode, int delim, const char *marker,
                       int maxresults, char **out, vd_err *err);

#endif
