/* URL redaction (vd_url_redact: no userinfo, no query or fragment values, whatever the
 * shape of the URL) and the allowed-hosts rule (vd_url_allowed: same scheme, host and
 * port, default ports included, or a host listed in allowed_hosts). Expected values
 * follow RFC 3986's split of a URL: scheme "://" [userinfo "@"] host [":" port] path
 * ["?" query] ["#" fragment]. */
#include <string.h>

#include "store/store.h"
#include "tap.h"
#include "vd_ctx.h"

static void redact(const char *url, const char *want) {
  char out[600];
  vd_url_redact(url, out, sizeof out);
  if (!ok(strcmp(out, want) == 0, "redact %s -> %s", url, want)) diag("got %s", out);
}

/* Nothing of secret (a password or a signature) survives any truncation either. */
static void hides(const char *url, const char *secret) {
  char out[600];
  int good = 1;
  for (size_t n = 1; n <= strlen(url) + 1; n++) {
    vd_url_redact(url, out, n);
    if (strstr(out, secret) || strlen(out) >= n) good = 0;
  }
  vd_url_redact(url, out, sizeof out);
  ok(good && !strstr(out, secret), "%s: \"%s\" hidden at every buffer size", url, secret);
}

static void allowed(vd_ctx *ctx, const char *hosts, const char *base, const char *target, int want) {
  vd_err e = {0};
  snprintf(ctx->cfg.allowed_hosts, sizeof ctx->cfg.allowed_hosts, "%s", hosts);
  vd_code rc = vd_url_allowed(ctx, base, target, &e);
  if (!ok((rc == VD_OK) == want, "allowed_hosts '%s': %s -> %s %s", hosts, base, target, want ? "allowed" : "refused"))
    diag("rc %d: %s", rc, e.msg);
  if (!want) ok(rc == VD_UNSUPPORTED && e.msg[0], "  ... with an error message (%s)", e.msg);
}

int main(void) {
  /* userinfo */
  redact("http://user:s3cret@host/p", "http://host/p");
  redact("https://user@host:8443/p", "https://host:8443/p");
  redact("http://user:s3cret@host", "http://host");
  redact("http://user:p@ss@host/p", "http://host/p"); /* the last @ of the authority ends it */
  redact("HTTP://U:S3CRET@Host:80/P", "HTTP://Host:80/P");
  redact("http://@host/p", "http://host/p");
  redact("http://user:s3cret@/p", "http:///p");
  /* @ outside the authority is not userinfo */
  redact("http://host/a@b/c", "http://host/a@b/c");
  redact("http://user:s3cret@host/a@b", "http://host/a@b");
  redact("http://host/p?to=a@b", "http://host/p?...");
  /* query and fragment */
  redact("http://host/p?X-Amz-Signature=s3cret&X-Amz-Credential=c", "http://host/p?...");
  redact("http://host?sig=s3cret", "http://host?...");
  redact("http://u:s3cret@host?sig=s3cret", "http://host?...");
  redact("http://host/p#frag", "http://host/p?...");
  redact("http://host/p#f?sig=s3cret", "http://host/p?...");
  redact("http://host/p?", "http://host/p?...");
  /* IPv6 literals */
  redact("http://[::1]:8080/p?sig=s3cret", "http://[::1]:8080/p?...");
  redact("http://user:s3cret@[::1]/p", "http://[::1]/p");
  redact("https://user:s3cret@[fe80::1%25eth0]:443/p", "https://[fe80::1%25eth0]:443/p");
  /* other schemes are URLs too (refused later, named safely) */
  redact("s3://AKIA:s3cret@bucket/key?X-Amz-Signature=s3cret", "s3://bucket/key?...");
  redact("file://user:s3cret@host/p", "file://host/p");
  redact("file:///tmp/a?b", "file:///tmp/a?...");
  /* no scheme: a local path, shown as it is */
  redact("dir/file", "dir/file");
  redact("/abs/path with space", "/abs/path with space");
  redact("", "");
  /* malformed */
  redact("http://", "http://");
  redact("http://user:s3cret@", "http://");
  redact("http://?sig=s3cret", "http://?...");
  redact("http://user:s3cret@host:notaport/p", "http://host:notaport/p");
  redact("http://us er:s3 cret@ho st/p q", "http://ho st/p q");
  hides("http://user:s3cret@host/p?sig=t0ken", "s3cret");
  hides("http://user:s3cret@host/p?sig=t0ken", "t0ken");
  hides("https://u:s3cret@[::1]:8443/a@b#t0ken", "s3cret");
  hides("https://u:s3cret@[::1]:8443/a@b#t0ken", "t0ken");

  vd_ctx *ctx = vd_ctx_new();
  if (!ok(ctx != NULL, "context")) return done_testing();
  /* same origin */
  allowed(ctx, "", "http://h.example/a/b", "http://h.example/c", 1);
  allowed(ctx, "", "http://h.example/a", "http://h.example:80/c", 1);
  allowed(ctx, "", "https://h.example:443/a", "https://h.example/c", 1);
  allowed(ctx, "", "http://H.Example/a", "http://h.EXAMPLE/c", 1);
  allowed(ctx, "", "http://u:p@h.example/a?sig=1", "http://h.example/c?x=2", 1);
  /* another port, scheme or host */
  allowed(ctx, "", "http://h.example/a", "http://h.example:8080/c", 0);
  allowed(ctx, "", "http://h.example:8080/a", "http://h.example/c", 0);
  allowed(ctx, "", "http://h.example/a", "https://h.example/c", 0);
  allowed(ctx, "", "https://h.example/a", "http://h.example/c", 0);
  allowed(ctx, "", "http://h.example:443/a", "https://h.example/c", 0); /* same port, other scheme */
  allowed(ctx, "", "http://h.example/a", "http://other.example/c", 0);
  allowed(ctx, "", "http://h.example/a", "http://h.example.evil/c", 0);
  /* targets that are no http(s) URL */
  allowed(ctx, "", "http://h.example/a", "file:///etc/passwd", 0);
  allowed(ctx, "", "http://h.example/a", "/etc/passwd", 0);
  allowed(ctx, "", "http://h.example/a", "ftp://h.example/c", 0);
  allowed(ctx, "*", "http://h.example/a", "file:///etc/passwd", 0);
  /* a local base allows anything (its links are local paths) */
  allowed(ctx, "", "/data/ds", "/data/other", 1);
  allowed(ctx, "", "file:///data/ds", "/data/other", 1);
  /* allowed_hosts */
  allowed(ctx, "other.example", "http://h.example/a", "http://other.example/c", 1);
  allowed(ctx, "other.example", "http://h.example/a", "http://other.example:8080/c", 1);
  allowed(ctx, "other.example", "http://h.example/a", "https://other.example/c", 1);
  allowed(ctx, "other.example:8080", "http://h.example/a", "http://other.example:8080/c", 1);
  allowed(ctx, "other.example:8080", "http://h.example/a", "http://other.example/c", 0);
  allowed(ctx, "other.example:80", "http://h.example/a", "http://other.example/c", 1);
  allowed(ctx, "a.example, other.example:9000 ,b.example", "http://h.example/a", "http://other.example:9000/c", 1);
  allowed(ctx, "OTHER.example", "http://h.example/a", "http://other.EXAMPLE/c", 1);
  allowed(ctx, "example", "http://h.example/a", "http://other.example/c", 0);
  allowed(ctx, "h.example:8080", "http://h.example/a", "http://h.example:8080/c", 1);
  allowed(ctx, "h.example:443", "http://h.example/a", "https://h.example/c", 1);
  allowed(ctx, "*", "http://h.example/a", "https://anything.example:1234/c", 1);
  /* IPv6 */
  allowed(ctx, "", "http://[::1]/a", "http://[::1]:80/c", 1);
  allowed(ctx, "", "http://[::1]:8080/a", "http://[::1]:8081/c", 0);
  allowed(ctx, "", "http://[::1]/a", "http://127.0.0.1/c", 0);
  allowed(ctx, "[::1]:8081", "http://[::1]:8080/a", "http://[::1]:8081/c", 1);
  allowed(ctx, "[::1]", "http://h.example/a", "http://[::1]:8081/c", 1);
  allowed(ctx, "[::1]:8082", "http://[::1]:8080/a", "http://[::1]:8081/c", 0);
  /* the error names both URLs redacted and the setting that would allow the target */
  {
    vd_err e = {0};
    ctx->cfg.allowed_hosts[0] = 0;
    vd_url_allowed(ctx, "http://u:s3cret@h.example/a?sig=s3cret", "https://v:s3cret@o.example:8443/b?sig=s3cret", &e);
    ok(strcmp(e.msg, "http://h.example/a?...: refers to https://o.example:8443/b?..., another scheme, host or port "
                     "(allow it with vdsql_config('allowed_hosts', 'o.example:8443'))") == 0,
       "refusal message: %s", e.msg);
  }
  vd_ctx_free(ctx);
  return done_testing();
}
