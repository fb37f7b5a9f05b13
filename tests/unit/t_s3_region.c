/* S3 answers that name a bucket's region (301 PermanentRedirect, 400
 * AuthorizationHeaderMalformed, as AWS words them), the ones that do not, hostile region
 * values (they become part of a host name), and the regions remembered per bucket. */
#include <string.h>

#include "store/s3_region.h"
#include "tap.h"

static const char redirect[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>PermanentRedirect</Code><Message>The bucket you are "
    "attempting to access must be addressed using the specified endpoint.</Message><Endpoint>b.s3.eu-west-1."
    "amazonaws.com</Endpoint><Bucket>b</Bucket><Region>eu-west-1</Region></Error>";
static const char malformed[] =
    "<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header is malformed; the region "
    "'us-east-1' is wrong; expecting 'ap-southeast-2'</Message><Region>ap-southeast-2</Region></Error>";

static int named(long status, const char *hdr, const char *body, const char *want) {
  char out[40] = "";
  int rc = vd_s3_region_answer(status, hdr, body, body ? strlen(body) : 0, out, sizeof out);
  return want ? rc == 0 && strcmp(out, want) == 0 : rc != 0;
}

int main(void) {
  ok(named(301, "eu-west-1", NULL, "eu-west-1"), "301 with x-amz-bucket-region (a HEAD: no body)");
  ok(named(400, "eu-central-1", malformed, "eu-central-1"), "the header wins over the body");
  ok(named(301, NULL, redirect, "eu-west-1"), "301 PermanentRedirect: <Region> of the body");
  ok(named(400, NULL, malformed, "ap-southeast-2"), "400 AuthorizationHeaderMalformed: <Region> of the body");
  ok(named(400, NULL, redirect, NULL), "400 with a PermanentRedirect body: no region (the code must fit the status)");
  ok(named(301, NULL, malformed, NULL), "301 with an AuthorizationHeaderMalformed body: no region");
  ok(named(403, "eu-west-1", NULL, NULL), "403 with the header: no region (only 301 and 400 are answered)");
  ok(named(307, "eu-west-1", NULL, NULL), "307 with the header: no region");
  ok(named(400, NULL, "<Error><Code>AuthorizationHeaderMalformed</Code></Error>", NULL), "400 without <Region>: none");
  ok(named(400, NULL, "<Error><Code>InvalidArgument</Code><Region>eu-west-1</Region></Error>", NULL),
     "400 of another code with a <Region>: none");
  ok(named(400, NULL, "not xml", NULL) && named(400, NULL, NULL, NULL), "no XML, no body: none");
  const char *bad[] = {"evil.example", "eu-west-1/x", "a@b", "EU-WEST-1", "", "eu-west-1:443",
                       "a-region-name-longer-than-32-bytes", "eu west"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char body[300];
    snprintf(body, sizeof body, "<Error><Code>PermanentRedirect</Code><Region>%s</Region></Error>", bad[i]);
    ok(named(301, bad[i], NULL, NULL) && named(301, NULL, body, NULL), "region '%s' refused (header and body)", bad[i]);
  }
  char small[8];
  ok(vd_s3_region_answer(301, "eu-west-1", NULL, 0, small, sizeof small) != 0, "no room for a region: none");

  vd_ctx *ctx = vd_ctx_new();
  ok(ctx && !vd_s3_region_of(ctx, "b", 1), "a new context knows no region");
  ok(vd_s3_region_set(ctx, "bucket-a", 8, "eu-west-1") == 0 && vd_s3_region_set(ctx, "bucket-b", 8, "us-west-2") == 0,
     "two buckets remembered");
  ok(vd_s3_region_of(ctx, "bucket-a/key", 8) && strcmp(vd_s3_region_of(ctx, "bucket-a/key", 8), "eu-west-1") == 0 &&
         strcmp(vd_s3_region_of(ctx, "bucket-b", 8), "us-west-2") == 0 && !vd_s3_region_of(ctx, "bucket", 6),
     "each bucket its own region, by the whole name");
  ok(vd_s3_region_set(ctx, "bucket-a", 8, "eu-north-1") == 0 && strcmp(vd_s3_region_of(ctx, "bucket-a", 8), "eu-north-1") == 0,
     "a bucket's region replaced");
  char *v = NULL;
  vd_err err = {0};
  ok(vd_config_apply(ctx, "s3_region", "us-east-2", &v, &err) == VD_OK && !vd_s3_region_of(ctx, "bucket-a", 8),
     "a setting changed: every region forgotten");
  free(v);
  vd_s3_region_set(ctx, "bucket-c", 8, "eu-west-3");
  vd_ctx_free(ctx); /* frees what is remembered (ASan's leak check) */
  return done_testing();
}
