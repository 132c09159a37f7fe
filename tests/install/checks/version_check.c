/* SPDX-License-Identifier: MIT */
/* The installed package's versions agree: the headers' macros, the linked
 * library's ws_version()/ws_version_number(), and the CMake package's
 * version (WS_PACKAGE_VERSION, from find_package) when given; run.sh also
 * compares the output with pkg-config --modversion. Prints
 * "<version> <backends compiled>"; exit 1 on a disagreement. */
#include <stdio.h>
#include <string.h>

#include "wavesched/wavesched.h"

int main(void) {
  int bad = 0;
  if (strcmp(ws_version(), WS_VERSION_STRING) != 0 || ws_version_number() != WS_VERSION_NUMBER) {
    fprintf(stderr, "library %s (%u), headers %s (%u)\n", ws_version(), ws_version_number(),
            WS_VERSION_STRING, (unsigned)WS_VERSION_NUMBER);
    bad = 1;
  }
  if (ws_version_number() != WS_MAKE_VERSION(WS_VERSION_MAJOR, WS_VERSION_MINOR, WS_VERSION_PATCH)) {
    fprintf(stderr, "WS_VERSION_NUMBER %u disagrees with the MAJOR/MINOR/PATCH macros\n",
            ws_version_number());
    bad = 1;
  }
#ifdef WS_PACKAGE_VERSION
  if (strcmp(ws_version(), WS_PACKAGE_VERSION) != 0) {
    fprintf(stderr, "library %s, CMake package %s\n", ws_version(), WS_PACKAGE_VERSION);
    bad = 1;
  }
#endif
  printf("%s", ws_version());
  for (int b = 0; b < WS_BACKEND_COUNT; ++b)
    if (ws_backend_compiled((ws_backend_kind)b))
      printf(" %s", ws_backend_name((ws_backend_kind)b));
  printf("\n");
#ifdef WS_PACKAGE_BACKENDS
  /* the package's list ("cpu vulkan") names what the library has */
  for (int b = 0; b < WS_BACKEND_COUNT; ++b) {
    const char *name = ws_backend_name((ws_backend_kind)b);
    const char *at = strstr(WS_PACKAGE_BACKENDS, name);
    const int listed = at && (at[strlen(name)] == ' ' || at[strlen(name)] == '\0');
    if (listed != (int)ws_backend_compiled((ws_backend_kind)b)) {
      fprintf(stderr, "wavesched_BACKENDS '%s' but ws_backend_compiled(%s) = %d\n",
              WS_PACKAGE_BACKENDS, name, (int)ws_backend_compiled((ws_backend_kind)b));
      bad = 1;
    }
  }
#endif
  return bad;
}
