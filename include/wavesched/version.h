/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — the library's version.
 *
 * The one place the version is written: CMake reads WS_VERSION_MAJOR/MINOR/
 * PATCH from this file into project(wavesched VERSION ...), so the package
 * version (find_package, pkg-config, the shared library's SONAME) and these
 * macros cannot disagree. The header stays a plain source file, not a
 * generated one, because parts of the tree compile without CMake
 * (tools/fuzz/run.sh, scripts/hip-check).
 */
#ifndef WAVESCHED_VERSION_H
#define WAVESCHED_VERSION_H

#include <stdint.h>

#include "wavesched/export.h"

/** Major version: 0 while the API may still change between minor versions. */
#define WS_VERSION_MAJOR 0
/** Minor version: the shared library's SONAME is libwavesched.so.MAJOR.MINOR. */
#define WS_VERSION_MINOR 3
/** Patch version: fixes that keep the API and the ABI. */
#define WS_VERSION_PATCH 0

/** One integer per version, ordered like the versions: major * 10^6 + minor * 10^3 + patch. */
#define WS_MAKE_VERSION(major, minor, patch) ((major) * 1000000u + (minor) * 1000u + (patch))
/** The version these headers belong to, as WS_MAKE_VERSION encodes it. */
#define WS_VERSION_NUMBER WS_MAKE_VERSION(WS_VERSION_MAJOR, WS_VERSION_MINOR, WS_VERSION_PATCH)

/** @cond WS_INTERNAL */
#define WS_VERSION_STR2_(x) #x
#define WS_VERSION_STR_(x) WS_VERSION_STR2_(x)
/** @endcond */
/** The version these headers belong to, "MAJOR.MINOR.PATCH" (e.g. "0.2.0"). */
#define WS_VERSION_STRING                                                                          \
  WS_VERSION_STR_(WS_VERSION_MAJOR) "." WS_VERSION_STR_(WS_VERSION_MINOR) "." WS_VERSION_STR_(     \
      WS_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif
WS_API_BEGIN

/** The version of the linked library, "MAJOR.MINOR.PATCH" (e.g. "0.2.0"); a static string. */
const char *ws_version(void);
/** The version of the linked library as WS_MAKE_VERSION encodes it; differs from
 * WS_VERSION_NUMBER when the program runs against another build than its headers. */
uint32_t ws_version_number(void);

WS_API_END
#ifdef __cplusplus
}
#endif
#endif
