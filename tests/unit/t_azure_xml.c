/* Azure XML answers: a List Blobs page as Azurite 3.35 writes it (metadata names in their
 * own case, unquoted Etag, NextMarker, a BlobPrefix), encoded names, the empty last page, error bodies
 * and headers, and hostile documents (DTDs, entities, wrong roots, bad sizes). */
#include <string.h>

#include "store/azure_xml.h"
#include "tap.h"

#define LIST_HEAD "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"http://127.0.0.1:1/a\" ContainerName=\"c\">"

static const char page[] = LIST_HEAD
    "<Prefix>list/</Prefix><MaxResults>3</MaxResults><Blobs>"
    "<Blob><Name>list/k00</Name><Properties><Creation-Time>Tue, 24 Nov 2026 14:00:00 GMT</Creation-Time>"
    "<Last-Modified>Tue, 24 Nov 2026 14:00:01 GMT</Last-Modified><Etag>0x8DE2C0FFEE12345</Etag>"
    "<Content-Length>8</Content-Length><Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
    "</Properties><Metadata><VdsChunkMetadata>AQIDBAUGBwg=</VdsChunkMetadata><n>0</n></Metadata></Blob>"
    "<Blob><Name>list/a &amp; b &lt;c&gt; \xc3\xa9</Name><Properties><Last-Modified>garbage</Last-Modified>"
    "<Etag>\"0x1\"</Etag><Content-Length>0</Content-Length></Properties><Metadata/></Blob>"
    "<Blob><Name Encoded=\"true\">list%2Fctl%01x</Name><Properties><Content-Length>12345678901</Content-Length></Properties></Blob>"
    "<BlobPrefix><Name>list/dir/</Name></BlobPrefix>"
    "</Blobs><NextMarker>list/k02</NextMarker></EnumerationResults>";

static void refused(const char *what, const char *body, const char *want) {
  vd_az_list l;
  vd_err err = {0};
  vd_code rc = vd_az_parse_list("az://c/x", body, strlen(body), &l, &err);
  ok(rc == VD_INVALID && strstr(err.msg, want) && strstr(err.msg, "az://c/x") && l.n == 0 && !l.blobs,
     "%s: refused (%s)", what, err.msg);
}

static void code_is(const char *hdr, const char *body, const char *want) {
  char c[64];
  vd_az_error_code(hdr, body, body ? strlen(body) : 0, c);
  ok(strcmp(c, want) == 0, "error code '%s' (%s)", want, hdr ? "header" : "body");
}

int main(void) {
  vd_az_list l;
  vd_err err = {0};
  vd_code rc = vd_az_parse_list("az://c/list/", page, strlen(page), &l, &err);
  ok(rc == VD_OK && l.n == 3, "a List Blobs page: 3 blobs (the BlobPrefix is not one): %s", err.msg);
  if (l.n == 3) {
    vd_az_blob *b = l.blobs;
    ok(strcmp(b[0].name, "list/k00") == 0 && b[0].info.size == 8 && strcmp(b[0].info.etag, "\"0x8DE2C0FFEE12345\"") == 0 &&
           b[0].info.mtime == 1795528801,
       "name, size, Etag quoted as the ETag header is, Last-Modified as epoch (%s %lld %s %lld)", b[0].name,
       (long long)b[0].info.size, b[0].info.etag, (long long)b[0].info.mtime);
    ok(b[0].info.nmeta == 2 && vd_objinfo_meta(&b[0].info, "vdschunkmetadata") &&
           strcmp(vd_objinfo_meta(&b[0].info, "VDSCHUNKMETADATA"), "AQIDBAUGBwg=") == 0 &&
           strcmp(b[0].info.meta[0].key, "vdschunkmetadata") == 0 && strcmp(vd_objinfo_meta(&b[0].info, "n"), "0") == 0,
       "metadata: names lower-cased, matched case-insensitively");
    ok(strcmp(b[1].name, "list/a & b <c> \xc3\xa9") == 0 && b[1].info.size == 0 && strcmp(b[1].info.etag, "\"0x1\"") == 0 &&
           b[1].info.mtime == 0 && b[1].info.nmeta == 0,
       "entities decoded, UTF-8 kept, a quoted Etag kept, an unparsable date is 0 (%s)", b[1].name);
    ok(strcmp(b[2].name, "list/ctl\001x") == 0 && b[2].info.size == 12345678901LL && b[2].info.etag[0] == 0,
       "an Encoded=\"true\" name is percent-decoded; sizes over 4 GiB");
  }
  ok(l.next_marker && strcmp(l.next_marker, "list/k02") == 0, "NextMarker: %s", l.next_marker ? l.next_marker : "(none)");
  ok(l.nprefixes == 1 && strcmp(l.prefixes[0], "list/dir/") == 0, "the BlobPrefix (a listing with a delimiter): "
     "a sub-folder, its name in full (%d)", l.nprefixes);
  vd_az_list_free(&l);
  const char noname[] = LIST_HEAD "<Blobs><BlobPrefix><Name/></BlobPrefix></Blobs></EnumerationResults>";
  rc = vd_az_parse_list("az://c/x", noname, strlen(noname), &l, &err);
  ok(rc == VD_INVALID && strstr(err.msg, "az://c/x: a List Blobs BlobPrefix without a Name") && !l.nprefixes && !l.prefixes,
     "a BlobPrefix with an empty Name: refused (%s)", err.msg);

  const char last[] = LIST_HEAD "<Blobs/><NextMarker/></EnumerationResults>";
  rc = vd_az_parse_list("az://c/", last, strlen(last), &l, &err);
  ok(rc == VD_OK && l.n == 0 && !l.next_marker, "an empty page with an empty <NextMarker/> is the last");
  vd_az_list_free(&l);

  refused("not XML", "<EnumerationResults><Blobs>", "not XML");
  refused("empty", "", "not XML");
  refused("another root", "<Error><Code>AuthorizationFailure</Code></Error>", "not an EnumerationResults");
  refused("no Name", LIST_HEAD "<Blobs><Blob><Properties><Content-Length>1</Content-Length></Properties></Blob></Blobs></EnumerationResults>",
          "without a Name");
  refused("no size", LIST_HEAD "<Blobs><Blob><Name>x</Name></Blob></Blobs></EnumerationResults>", "no valid Content-Length");
  refused("negative size", LIST_HEAD "<Blobs><Blob><Name>x</Name><Properties><Content-Length>-1</Content-Length></Properties></Blob></Blobs></EnumerationResults>",
          "no valid Content-Length");
  refused("size overflow", LIST_HEAD "<Blobs><Blob><Name>x</Name><Properties><Content-Length>99999999999999999999</Content-Length></Properties></Blob></Blobs></EnumerationResults>",
          "no valid Content-Length");
  refused("encoded NUL", LIST_HEAD "<Blobs><Blob><Name Encoded=\"true\">a%00b</Name><Properties><Content-Length>1</Content-Length></Properties></Blob></Blobs></EnumerationResults>",
          "NUL");
  refused("billion laughs", "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
          "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]><EnumerationResults><Blobs><Blob><Name>&c;</Name></Blob></Blobs></EnumerationResults>",
          "has a DTD");
  refused("external entity", "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
          "<EnumerationResults><Blobs><Blob><Name>&x;</Name></Blob></Blobs></EnumerationResults>", "has a DTD");
  refused("undeclared entity", LIST_HEAD "<Blobs><Blob><Name>&x;</Name></Blob></Blobs></EnumerationResults>", "not XML");
  char long_etag[800];
  snprintf(long_etag, sizeof long_etag, LIST_HEAD "<Blobs><Blob><Name>x</Name><Properties><Content-Length>1</Content-Length><Etag>%0200d</Etag></Properties></Blob></Blobs></EnumerationResults>", 0);
  refused("an Etag too long", long_etag, "Etag of over 125 bytes");

  /* the hand parser (xml_min.h says why not libxml2): what it takes and what it refuses */
  const char tricky[] = "\xEF\xBB\xBF<?xml version='1.0'?><!-- c --><EnumerationResults a='x>y'><Blobs>\n"
                        "<Blob ><Name Other=\"1\" Encoded='true'>a%2Fb&#233;&#xE9;&#x1F600;</Name><!-- in --><Properties>"
                        "<Content-Length >7</Content-Length ></Properties><Metadata><k/></Metadata></Blob></Blobs>"
                        "<NextMarker>m&amp;n</NextMarker></EnumerationResults>\n<!-- after -->\n";
  rc = vd_az_parse_list("az://c/", tricky, strlen(tricky), &l, &err);
  ok(rc == VD_OK && l.n == 1 && strcmp(l.blobs[0].name, "a/b\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80") == 0 && l.blobs[0].info.size == 7 &&
         l.blobs[0].info.nmeta == 1 && strcmp(l.blobs[0].info.meta[0].value, "") == 0 && l.next_marker &&
         strcmp(l.next_marker, "m&n") == 0,
     "BOM, declaration, comments, single quotes, '>' in an attribute, character references, empty elements: %s", err.msg);
  vd_az_list_free(&l);
  refused("CDATA", LIST_HEAD "<Blobs><Blob><Name><![CDATA[x]]></Name></Blob></Blobs></EnumerationResults>", "not XML");
  refused("mismatched tags", LIST_HEAD "<Blobs><Blob><Name>x</Nome></Blob></Blobs></EnumerationResults>", "not XML");
  refused("unclosed", LIST_HEAD "<Blobs><Blob><Name>x</Name></Blob></Blobs>", "not XML");
  refused("text after the root", LIST_HEAD "</EnumerationResults>junk", "not XML");
  refused("a second root", LIST_HEAD "</EnumerationResults><EnumerationResults/>", "not XML");
  refused("a surrogate reference", LIST_HEAD "<Blobs><Blob><Name>&#xD800;</Name></Blob></Blobs></EnumerationResults>", "not XML");
  refused("a NUL reference", LIST_HEAD "<Blobs><Blob><Name>&#0;</Name></Blob></Blobs></EnumerationResults>", "not XML");
  refused("a reference past U+10FFFF", LIST_HEAD "<Blobs><Blob><Name>&#x110000;</Name></Blob></Blobs></EnumerationResults>", "not XML");
  char nul[] = "<EnumerationResults>\0</EnumerationResults>";
  rc = vd_az_parse_list("az://c/x", nul, sizeof nul - 1, &l, &err);
  ok(rc == VD_INVALID && strstr(err.msg, "not XML"), "a NUL byte: refused (%s)", err.msg);
  char deep[2000] = LIST_HEAD;
  for (int i = 0; i < 40; i++) strcat(deep, "<d>");
  for (int i = 0; i < 40; i++) strcat(deep, "</d>");
  strcat(deep, "</EnumerationResults>");
  refused("nesting 41 deep", deep, "not XML");

  code_is("AuthorizationFailure", NULL, "AuthorizationFailure");
  code_is(NULL, "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobAlreadyExists</Code><Message>The specified blob already exists.\nRequestId:1</Message></Error>",
          "BlobAlreadyExists");
  code_is("", "<Error><Code>Auth\nFail<script></Code></Error>", "");
  code_is(NULL, "<Error><Code>Auth\n&lt;x&gt;Fail</Code><AuthenticationErrorDetail>sig SECRET</AuthenticationErrorDetail></Error>",
          "AuthxFail");
  code_is("Bad Code\r\n", "<Error><Code>Other</Code></Error>", "BadCode");
  code_is(NULL, "not xml", "");
  code_is(NULL, "<Other><Code>X</Code></Other>", "");

  rc = vd_az_fail(&err, "az://c/k", 403, "AuthorizationFailure");
  ok(rc == VD_IO && strcmp(err.msg, "az://c/k: HTTP 403 Forbidden (AuthorizationFailure)") == 0, "403: %s", err.msg);
  ok(vd_az_fail(&err, "az://c/k", 404, "BlobNotFound") == VD_NOTFOUND, "404 is VD_NOTFOUND");
  ok(vd_az_fail(&err, "az://c/k", 409, "BlobAlreadyExists") == VD_PRECONDITION, "409 BlobAlreadyExists is VD_PRECONDITION");
  ok(vd_az_fail(&err, "az://c/k", 412, "ConditionNotMet") == VD_PRECONDITION, "412 is VD_PRECONDITION");
  ok(vd_az_fail(&err, "az://c/k", 409, "ContainerBeingDeleted") == VD_IO, "another 409 is VD_IO");
  ok(vd_az_fail(&err, "az://c/k", 416, "InvalidRange") == VD_INVALID, "416 is VD_INVALID (a range past the end, as over http)");
  vd_az_fail(&err, "az://c/k", 500, "");
  ok(strcmp(err.msg, "az://c/k: HTTP 500 Internal Server Error") == 0, "no code: %s", err.msg);
  return done_testing();
}
