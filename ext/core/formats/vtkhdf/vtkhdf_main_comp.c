/* vtkhdf_main: the composite layout, as VTK 9.4's UseExternalComposite makes it: a
 * PartitionedDataSetCollection whose /VTKHDF/<block> entries are external links to each
 * part's /VTKHDF, and whose Assembly holds one soft link per block, in member order, all
 * with creation order tracked and indexed (VTK iterates children by it). VTK's writer
 * also sets each block's Index attribute, but through the link, i.e. inside the part file;
 * vdsql never writes into the parts, so the Index is not set (see docs/vtkhdf.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vtkhdf_h5.h"
#include "vtkhdf_main_impl.h"

vd_code vm_write_composite(vm_table *t, hid_t f, vm_member **m, int n, char **names, vd_err *err) {
  (void)t;
  char msg[256];
  hid_t gcpl = vm_gcpl();
  hid_t g = H5Gcreate2(f, "VTKHDF", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  hid_t a = g >= 0 ? H5Gcreate2(g, "Assembly", H5P_DEFAULT, gcpl, H5P_DEFAULT) : -1;
  int64_t ver[2] = {2, 1}; /* composites came with 2.1 */
  for (int i = 0; i < n; i++) {
    const int64_t *v = m[i]->info->version;
    if (v[0] > ver[0] || (v[0] == ver[0] && v[1] > ver[1])) ver[0] = v[0], ver[1] = v[1];
  }
  int bad = a < 0 || vm_attr_i64(g, "Version", ver, 2) < 0 || vm_attr_type(g, "PartitionedDataSetCollection") < 0;
  for (int i = 0; i < n && !bad; i++) {
    char target[1100];
    snprintf(target, sizeof target, "/VTKHDF/%s", m[i]->block);
    bad = H5Lcreate_external(names[i], "/VTKHDF", g, m[i]->block, H5P_DEFAULT, H5P_DEFAULT) < 0 ||
          H5Lcreate_soft(target, a, m[i]->block, H5P_DEFAULT, H5P_DEFAULT) < 0;
  }
  vd_code rc = bad ? vd_fail(err, VD_IO, "vtkhdf_main: cannot write the composite's links (HDF5: %s)", vh5_msg(msg, sizeof msg))
                   : VD_OK;
  if (a >= 0) H5Gclose(a);
  if (g >= 0) H5Gclose(g);
  if (gcpl >= 0) H5Pclose(gcpl);
  return rc;
}
