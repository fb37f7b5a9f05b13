/* URLs derived from a dataset URL keep its ?query (presigned / SAS): vd_url_join (a key
 * under a base), vd_url_sibling (a name next to a file), vd_url_carry_query (a URL HDF5
 * composed), vd_url_list_dir (the folder a listing's keys are relative to) and the
 * VTKHDF driver's vh_vfd_derived, which also puts back a name HDF5 joined after a '/'
 * inside the query. A query never goes to another server, and local
 * paths keep '?' as a byte of the name. Expected strings are written out by hand. */
#include <stdlib.h>
#include <string.h>

#include "formats/vtkhdf/vtkhdf_vfd.h"
#include "store/store.h"
#include "tap.h"
#include "vd_ctx.h"

static void is(char *got, const char *want, const char *what) {
  ok(got && !strcmp(got, want), "%s: %s", what, got ? got : "(null)");
  free(got);
}

int main(void) {
  is(vd_url_join("http://h/d?sig=1", "VolumeDataLayout"), "http://h/d/VolumeDataLayout?sig=1", "join: query kept");
  is(vd_url_join("http://h/d/?a=1/2", "L/ChunkMetadata/0"), "http://h/d/L/ChunkMetadata/0?a=1/2",
     "join: a '/' inside the query is the query's");
  is(vd_url_join("http://h/d", "a b#c"), "http://h/d/a%20b%23c", "join: names percent-encoded for remote stores");
  is(vd_url_join("/data/d?x", "k"), "/data/d?x/k", "join: a local path's '?' is part of its name");
  is(vd_url_sibling("http://h/d/main.vtkhdf?sig=1", "part0.vtkhdf"), "http://h/d/part0.vtkhdf?sig=1",
     "sibling: next to the file, query carried");
  is(vd_url_sibling("http://h/d/main.vtkhdf?c=a/b", "sub/p.vtkhdf"), "http://h/d/sub/p.vtkhdf?c=a/b",
     "sibling: the directory ends before the query");
  is(vd_url_sibling("https://h/main.vtkhdf", "p.vtkhdf"), "https://h/p.vtkhdf", "sibling: no query, none added");
  is(vd_url_list_dir("https://h/vds/nor?sig=1"), "https://h/vds/?sig=1", "list dir: up to the last '/', query carried");
  is(vd_url_list_dir("s3://b"), "s3://b/", "list dir: a bare bucket is its root");
  is(vd_url_list_dir("https://h?sig=1"), "https://h/?sig=1", "list dir: a bare host with a query");
  is(vd_url_list_dir("s3://b/"), "s3://b/", "list dir: a bucket's root as given");
  is(vd_url_list_dir("/data/t/su"), "/data/t/", "list dir: a local path");
  is(vd_url_list_dir("north_sea"), "", "list dir: a bare relative name: the current folder, empty");
  is(vd_url_carry_query("http://u:p@h:81/d/m?sig=1", "http://u:p@h:81/d/p"), "http://u:p@h:81/d/p?sig=1",
     "carry: same server");
  is(vd_url_carry_query("http://h/d/m?sig=1", "http://other/d/p"), "http://other/d/p", "carry: never to another host");
  is(vd_url_carry_query("http://h/d/m?sig=1", "http://h:8080/d/p"), "http://h:8080/d/p", "carry: nor another port");
  is(vd_url_carry_query("http://h/d/m?sig=1", "https://h/d/p"), "https://h/d/p", "carry: nor another scheme");
  is(vd_url_carry_query("http://h/d/m?sig=1", "http://h/d/p?own=2"), "http://h/d/p?own=2", "carry: a URL's own query stays");
  is(vd_url_carry_query("/d/m?x", "/d/p"), "/d/p", "carry: nothing for local paths");
  const char *b = "http://h/d/main.vtkhdf?X-Amz-Credential=AK/2026/s3&X-Amz-Signature=ff";
  is(vh_vfd_derived(b, b), b, "derived: the main file itself");
  is(vh_vfd_derived(b, "http://h/d/main.vtkhdf?X-Amz-Credential=AK/2026/p0.vtkhdf"),
     "http://h/d/p0.vtkhdf?X-Amz-Credential=AK/2026/s3&X-Amz-Signature=ff",
     "derived: a name HDF5 joined after the query's last '/' goes back next to the main file");
  is(vh_vfd_derived(b, "http://h/d/main.vtkhdf?X-Amz-Credential=AK/2026/sub/p1.vtkhdf"),
     "http://h/d/sub/p1.vtkhdf?X-Amz-Credential=AK/2026/s3&X-Amz-Signature=ff", "derived: ... with its subdirectory");
  is(vh_vfd_derived("http://h/d/m.vtkhdf?sig=1", "http://h/d/p.vtkhdf"), "http://h/d/p.vtkhdf?sig=1",
     "derived: HDF5's join of a query without '/': query carried");
  vd_ctx *ctx = vd_ctx_new();
  vd_err e;
  ok(vd_url_allowed(ctx, "http://h:notaport/d/m?sig=1", "http://h/d/p", &e) == VD_INVALID &&
         !strcmp(e.msg, "http://h:notaport/d/m?...: a malformed URL, so http://h/d/p (which it refers to) is not requested"),
     "allowed-hosts rule: a remote base that does not parse lets nothing through: %s", e.msg);
  ok(vd_url_allowed(ctx, "/d/m.vtkhdf", "http://anywhere/x", &e) == VD_OK, "... a local base is not held by it");
  vd_ctx_free(ctx);
  return done_testing();
}
