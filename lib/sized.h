/* The ABI rule of the structs a caller hands in (jfrstream.h, "STRUCTS YOU
 * HAND IN"): each starts with `size_t size`; the library reads only
 * min(size, sizeof) bytes of it, the rest of its own copy keeps the defaults
 * (zero). Shared by both libraries (header only: nothing to export). */
#ifndef JFR_SIZED_H
#define JFR_SIZED_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Copy the caller's struct at `src` into `dst` (dst_size bytes, the
 * library's sizeof); dst's size member becomes dst_size. False, and dst
 * untouched, when the caller's size is below sizeof(size_t). */
static inline bool jfr__sized_copy(void *dst, size_t dst_size, const void *src) {
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n < sizeof n)
        return false;
    memset(dst, 0, dst_size);
    memcpy(dst, src, n < dst_size ? n : dst_size);
    memcpy(dst, &dst_size, sizeof dst_size);
    return true;
}

#endif /* JFR_SIZED_H */
