/* The answers of batch deletes, as the services document them: S3 DeleteObjects
 * (<DeleteResult> with <Deleted> and <Error> per key, in any order; a NoSuchKey error is a
 * key already gone) and Azure Blob Batch (multipart/mixed, one application/http part per
 * Content-ID: 202 deleted, 404 BlobNotFound gone already, others refused; a part
 * without a Content-ID refusing the whole batch). Also the request bodies: keys XML must
 * escape, and the multipart framing. */
#include <string.h>

#include "store/azure_batch.h"
#include "store/s3_delete.h"
#include "tap.h"

static void s3_answers(void) {
  const char *keys[] = {"ds/a", "ds/b & c", "ds/gone", "ds/silent", "ds/a"};
  const char *where[] = {"s3://b/ds/a", "s3://b/ds/b%20%26%20c", "s3://b/ds/gone", "s3://b/ds/silent", "s3://b/ds/a"};
  vd_code rc[5];
  vd_err e[5];
  const char *ans = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    "<Error><Key>ds/b &amp; c</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
                    "<Deleted><Key>ds/a</Key></Deleted>"
                    "<Error><Key>ds/gone</Key><Code>NoSuchKey</Code><Message>x</Message></Error>"
                    "<Deleted><Key>ds/unasked</Key></Deleted>"
                    "</DeleteResult>";
  vd_code r = vd_s3_parse_delete(ans, strlen(ans), keys, 5, where, rc, e);
  ok(r == VD_OK && rc[0] == VD_OK, "s3: a Deleted key is deleted");
  ok(rc[1] == VD_IO && strcmp(e[1].msg, "s3://b/ds/b%20%26%20c: not deleted: DeleteObjects answers AccessDenied for it") == 0,
     "s3: an Error names the object and the code: %s", e[1].msg);
  ok(rc[2] == VD_OK, "s3: NoSuchKey is a key already gone: deleted");
  ok(rc[3] == VD_IO && strstr(e[3].msg, "s3://b/ds/silent: ") == e[3].msg && strstr(e[3].msg, "does not mention"),
     "s3: a key the answer never names is a failure: %s", e[3].msg);
  ok(rc[4] == VD_OK, "s3: the same key twice gets the one answer");
  r = vd_s3_parse_delete("<Error><Code>InternalError</Code></Error>", 40, keys, 2, where, rc, e);
  ok(r == VD_IO && rc[0] == VD_IO && rc[1] == VD_IO && strstr(e[1].msg, "s3://b/ds/b%20%26%20c: ") == e[1].msg,
     "s3: an answer that is no DeleteResult fails every key, each named: %s", e[1].msg);

  vd_buf b = {0};
  const char *odd[] = {"a&b<c>\"d", "t\tn\nr\r"};
  ok(vd_s3_delete_body(odd, 2, &b) == 0 && b.len && memmem(b.data, b.len, "<Key>a&amp;b&lt;c&gt;&quot;d</Key>", 34) &&
         memmem(b.data, b.len, "<Key>t&#9;n&#10;r&#13;</Key>", 28) && memmem(b.data, b.len, "<Quiet>false</Quiet>", 20),
     "s3: the body escapes & < > \" and writes tab, LF, CR as references");
  vd_buf_free(&b);
  ok(vd_s3_delete_key_ok("a b/\xc3\xa9") && !vd_s3_delete_key_ok("a\x01") && !vd_s3_delete_key_ok("\xff") &&
         !vd_s3_delete_key_ok(""),
     "s3: keys with a control character, invalid UTF-8 or nothing are not batched");
}

static void az_answers(void) {
  const char *where[] = {"az://c/a", "az://c/b", "az://c/gone", "az://c/silent"};
  vd_code rc[4];
  vd_err e[4];
  const char *ans = "--batchresponse_66925647-d0cb-4109-b6d3-28efe3e1e5ed\r\n"
                    "Content-Type: application/http\r\n"
                    "Content-ID: 1\r\n\r\n"
                    "HTTP/1.1 403 Server failed to authenticate the request.\r\n"
                    "x-ms-error-code: AuthorizationPermissionMismatch\r\n"
                    "x-ms-request-id: 1\r\n\r\n"
                    "--batchresponse_66925647-d0cb-4109-b6d3-28efe3e1e5ed\r\n"
                    "Content-Type: application/http\r\n"
                    "Content-ID: 0\r\n\r\n"
                    "HTTP/1.1 202 Accepted\r\n"
                    "x-ms-delete-type-permanent: true\r\n\r\n"
                    "--batchresponse_66925647-d0cb-4109-b6d3-28efe3e1e5ed\r\n"
                    "Content-Type: application/http\r\n"
                    "Content-ID: 2\r\n\r\n"
                    "HTTP/1.1 404 The specified blob does not exist.\r\n"
                    "x-ms-error-code: BlobNotFound\r\n"
                    "Content-Length: 216\r\n\r\n"
                    "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobNotFound</Code></Error>\r\n"
                    "--batchresponse_66925647-d0cb-4109-b6d3-28efe3e1e5ed--\r\n";
  vd_code r = vd_az_parse_batch(ans, strlen(ans), 4, where, rc, e);
  ok(r == VD_OK && rc[0] == VD_OK, "az: 202 Accepted is deleted");
  ok(rc[1] == VD_IO && strcmp(e[1].msg, "az://c/b: HTTP 403 Forbidden (AuthorizationPermissionMismatch)") == 0,
     "az: a refused subrequest names its blob and the code: %s", e[1].msg);
  ok(rc[2] == VD_OK, "az: 404 BlobNotFound is a blob already gone: deleted");
  ok(rc[3] == VD_IO && strstr(e[3].msg, "az://c/silent: ") == e[3].msg && strstr(e[3].msg, "does not mention"),
     "az: a Content-ID the answer never names is a failure: %s", e[3].msg);

  const char *whole = "--batchresponse_x\r\nContent-Type: application/http\r\n\r\n"
                      "HTTP/1.1 400 One of the request inputs is not valid.\r\nx-ms-error-code: InvalidInput\r\n\r\n"
                      "--batchresponse_x--\r\n";
  r = vd_az_parse_batch(whole, strlen(whole), 2, where, rc, e);
  ok(r == VD_OK && rc[0] == VD_IO && rc[1] == VD_IO &&
         strcmp(e[1].msg, "az://c/b: HTTP 400 Bad Request (InvalidInput) (the whole batch)") == 0,
     "az: a part without a Content-ID refusing the batch fails every blob: %s", e[1].msg);
  const char *missing = "--batchresponse_x\r\nContent-ID: 0\r\n\r\nHTTP/1.1 404 x\r\nx-ms-error-code: ContainerNotFound\r\n\r\n"
                        "--batchresponse_x--\r\n";
  r = vd_az_parse_batch(missing, strlen(missing), 1, where, rc, e);
  ok(rc[0] == VD_IO && strstr(e[0].msg, "ContainerNotFound"), "az: a missing container is a failure: %s", e[0].msg);
  r = vd_az_parse_batch("HTTP/1.1 200 OK\r\n", 17, 2, where, rc, e);
  ok(r == VD_IO && rc[0] == VD_IO && rc[1] == VD_IO && strstr(e[0].msg, "az://c/a: ") == e[0].msg,
     "az: an answer that is no multipart body fails every blob: %s", e[0].msg);

  vd_buf b = {0};
  const char *h[] = {"x-ms-date: Thu, 01 Jan 2026 00:00:00 GMT", "Content-Length: 0"};
  ok(vd_az_batch_part(&b, "batch_1", 0, "/acct/c/a%20b", h, 2) == 0 && vd_az_batch_end(&b, "batch_1") == 0 &&
         b.len == strlen("--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
                         "Content-ID: 0\r\n\r\nDELETE /acct/c/a%20b HTTP/1.1\r\nx-ms-date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
                         "Content-Length: 0\r\n\r\n--batch_1--\r\n") &&
         memcmp(b.data, "--batch_1\r\nContent-Type: application/http\r\n", 43) == 0,
     "az: a subrequest framed as the service documents it");
  vd_buf_free(&b);
}

int main(void) {
  s3_answers();
  az_answers();
  return done_testing();
}
