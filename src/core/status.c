/* SPDX-License-Identifier: MIT */
#include "wavesched/status.h"

const char *ws_status_name(ws_status status) {
  switch (status) {
#define WS_STATUS_NAME_(name, value, msg)                                                  \
  case WS_##name:                                                                          \
    return "WS_" #name;
    WS_STATUS_MAP(WS_STATUS_NAME_)
#undef WS_STATUS_NAME_
  }
  return "WS_UNKNOWN";
}

const char *ws_strerror(ws_status status) {
  switch (status) {
#define WS_STATUS_MSG_(name, value, msg)                                                   \
  case WS_##name:                                                                          \
    return msg;
    WS_STATUS_MAP(WS_STATUS_MSG_)
#undef WS_STATUS_MSG_
  }
  return "unknown status";
}
