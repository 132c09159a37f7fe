/* SPDX-License-Identifier: MIT */
/* wavesched — the version of the library that is linked, which may differ
 * from the headers a program was compiled with (a shared library replaced
 * under it): compare ws_version_number() with WS_VERSION_NUMBER. */
#include "wavesched/version.h"

const char *ws_version(void) { return WS_VERSION_STRING; }

uint32_t ws_version_number(void) { return WS_VERSION_NUMBER; }
