/* SPDX-License-Identifier: MIT */
/** @file
 * wavesched — which symbols the library exports.
 *
 * The library is compiled with hidden visibility (-fvisibility=hidden), so
 * a shared libwavesched exports exactly the functions declared between
 * WS_API_BEGIN and WS_API_END in the public headers: the `ws_`-prefixed API.
 * Internal helpers, whatever their prefix, stay inside the library
 * (tests/install checks `nm -D` against the headers). In a static library the
 * same markings keep the internal symbols hidden in whatever shared object
 * the consumer links it into.
 */
#ifndef WAVESCHED_EXPORT_H
#define WAVESCHED_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
/** Starts a region of public declarations (exported from the shared library). */
#define WS_API_BEGIN _Pragma("GCC visibility push(default)")
/** Ends the region WS_API_BEGIN started. */
#define WS_API_END _Pragma("GCC visibility pop")
/** Exports one declaration outside a WS_API_BEGIN region. */
#define WS_API __attribute__((visibility("default")))
#else
#define WS_API_BEGIN
#define WS_API_END
#define WS_API
#endif

#endif
