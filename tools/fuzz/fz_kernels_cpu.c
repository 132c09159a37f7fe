/* SPDX-License-Identifier: MIT */
/* The fuzz kernels as one C translation unit plus their module set, for
 * builds outside CMake (run.sh). CMake builds generate the same with
 * ws_add_kernels(... NAME fz_kernels SOURCE fz.kern.h). */
#include "fz_kernels.kern.h"

extern const ws_module_set fz_kernels_modules;
const ws_module_set fz_kernels_modules = {{&fz_kernels_module_cpu, 0, 0}};
