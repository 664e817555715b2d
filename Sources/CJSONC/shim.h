#ifndef PUSHBRIDGE_CJSONC_SHIM_H
#define PUSHBRIDGE_CJSONC_SHIM_H
#include <json-c/json.h>
#endif
