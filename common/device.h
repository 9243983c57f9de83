/* device.h — what the runner knows about the GPU: the device description
 * variants see in supports(), and the short name results are filed under. */
#ifndef ATTN_DEVICE_H
#define ATTN_DEVICE_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills *out for the current device. Without a usable device, out->present
 * is false and the return is ATTN_ERR_INPUT with the reason in
 * attn_error_message(). */
int device_query(struct device_info *out);

/* "NVIDIA H200" -> "h200": lower case, vendor dropped, [a-z0-9-] only. */
const char *device_short_name(const char *name, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
