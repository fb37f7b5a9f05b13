/* The URL rules of the VTKHDF reader (vtkhdf_vfd.h): what is shown of a URL (vh_show,
 * vh_show_text: no userinfo, no query, also for a URL inside a name or a message), which
 * sub-file URLs a remote main file may reach (vh_url_check: same scheme, host and port,
 * or allowed_hosts; malformed ones never), and which names HDF5 hands the driver are
 * URLs at all (vh_vfd_url). No network: nothing here sends a request. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "formats/vtkhdf/vtkhdf.h"
#include "formats/vtkhdf/vtkhdf_vfd.h"
#include "tap.h"

static int shows(const char *in, const char *want) {
  char out[600];
  vh_show(in, out, sizeof out);
  return ok(!strcmp(out, want), "vh_show(%s) = %s", in, out);
}

static int shows_text(const char *in, const char *want) {
  char out[600];
  vh_show_text(in, out, sizeof out);
  return ok(!strcmp(out, want), "vh_show_text(%s) = %s", in, out);
}

static vd_code check(vd_ctx *ctx, const char *base, const char *url, vd_err *e) {
  vd_err_clear(e);
  return vh_url_check(ctx, base, url, e);
}

int main(void) {
  shows("http://user:s3cretPW@h:8080/d/main.vtkhdf?X-Amz-Signature=s3cretSIG", "http://h:8080/d/main.vtkhdf?...");
  shows("https://h/d/x.vtkhdf", "https://h/d/x.vtkhdf");
  shows("part1.vtkhdf", "part1.vtkhdf");
  shows("/abs/part1.vtkhdf", "/abs/part1.vtkhdf");
  shows("h/http://u:pw@other/x.hdf?sig=1", "h/http://other/x.hdf?...");
  shows("http://u:pw@h/ok/h/http://u2:pw2@other/x.hdf", "http://h/ok/h/http://other/x.hdf");
  shows("http://h/x?next=http://u:pw@other/", "http://h/x?...");
  shows("http://u:pw@h/x#frag", "http://h/x?...");
  shows_text("h: cannot open 'http://u:pw@h/x?sig=1', tent_flags = 0", "h: cannot open 'http://h/x?...', tent_flags = 0");
  shows_text("http://u:pw@h/x.vtkhdf?sig=1: HTTP 404 Not Found", "http://h/x.vtkhdf?...: HTTP 404 Not Found");
  shows_text("already shown http://h/x?... stays", "already shown http://h/x?... stays");
  vd_err e;
  snprintf(e.msg, sizeof e.msg, "%s", "(see http://a:b@h/y?z) done");
  vh_err_redact(&e);
  ok(!strcmp(e.msg, "(see http://h/y?...) done"), "vh_err_redact: %s", e.msg);

  vd_ctx *ctx = vd_ctx_new();
  const char *base = "http://user:pw@127.0.0.1:8080/sim/main.vtkhdf?X-Amz-Signature=s3cretSIG";
  ok(check(ctx, base, base, &e) == VD_OK, "the main URL itself");
  ok(check(ctx, base, "http://user:pw@127.0.0.1:8080/sim/part0.vtkhdf", &e) == VD_OK, "a sub-file next to it");
  ok(check(ctx, base, "http://127.0.0.1:8080/other/dir/part0.vtkhdf", &e) == VD_OK, "an absolute URL on the same host");
  ok(check(ctx, base, "http://127.0.0.2:8080/part1.vtkhdf", &e) == VD_UNSUPPORTED &&
         !strcmp(e.msg, "http://127.0.0.1:8080/sim/main.vtkhdf?...: refers to http://127.0.0.2:8080/part1.vtkhdf, "
                        "another scheme, host or port (allow it with vdsql_config('allowed_hosts', '127.0.0.2:8080'))"),
     "another host: %s", e.msg);
  ok(check(ctx, base, "http://127.0.0.1:8081/part1.vtkhdf", &e) == VD_UNSUPPORTED, "another port");
  ok(check(ctx, base, "https://127.0.0.1:8080/part1.vtkhdf", &e) == VD_UNSUPPORTED, "another scheme");
  ok(check(ctx, base, "http://user:pw@127.0.0.1:8080/sim/h/http://127.0.0.2:9/x.hdf", &e) == VD_UNSUPPORTED &&
         strstr(e.msg, "refers to http://127.0.0.1:8080/sim/h/http://127.0.0.2:9/x.hdf, which is not a well-formed URL") &&
         !strstr(e.msg, "pw"),
     "a URL inside a URL (HDF5's join of a name holding one): %s", e.msg);
  ok(check(ctx, "http://h/d/main.vtkhdf?X-Amz-Credential=a/b", "http://h/d/main.vtkhdf?X-Amz-Credential=a/part0.vtkhdf",
           &e) == VD_UNSUPPORTED,
     "a name joined after a ?query that holds a '/'");
  char msg[1100];
  snprintf(msg, sizeof msg, "%s", e.msg);
  ok(!strstr(msg, "Credential"), "... whose error shows no query: %s", msg);
  vd_config_apply(ctx, "allowed_hosts", "127.0.0.2:8080", NULL, &e);
  ok(check(ctx, base, "http://127.0.0.2:8080/part1.vtkhdf", &e) == VD_OK, "allowed_hosts lets 127.0.0.2:8080 through");
  ok(check(ctx, base, "http://127.0.0.2:9/x.hdf", &e) == VD_UNSUPPORTED, "... and only its port");
  ok(check(ctx, base, "http://127.0.0.1:8080/sim/h/http://127.0.0.2:8080/x.hdf", &e) == VD_UNSUPPORTED,
     "... never a malformed URL");
  vd_ctx_free(ctx);

  char cwd[4096], name[4200];
  if (getcwd(cwd, sizeof cwd)) {
    snprintf(name, sizeof name, "%s/http://h/d/part0.vtkhdf", cwd);
    const char *u = vh_vfd_url(name);
    ok(u && !strcmp(u, "http://h/d/part0.vtkhdf"), "HDF5's '<cwd>/<url>' is the URL");
  }
  ok(vh_vfd_url("http://h/d/x") && !strcmp(vh_vfd_url("http://h/d/x"), "http://h/d/x"), "a URL is itself");
  ok(!vh_vfd_url("h/http://other/x.hdf"), "a name holding a URL is not one");
  ok(!vh_vfd_url("/elsewhere/http://other/x.hdf"), "nor a path that is not the current directory");
  ok(!vh_vfd_url("part1.vtkhdf"), "nor a plain name");
  return done_testing();
}
