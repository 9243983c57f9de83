/* files.h — directories made and files replaced without loss: mkdir -p, and
 * a copy written to a temporary file, synced, and renamed into place. */
#ifndef ATTN_FILES_H
#define ATTN_FILES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Creates each missing directory of path in turn ("" refused; "/" and
 * repeated or trailing slashes create nothing extra). ATTN_ERR_INPUT with
 * the directory and the OS error. */
int files_mkdir_p(const char *path);
/* Copies from → to through to.tmp, synced and renamed into place: to is the
 * old file or the whole new one, never a part; the temporary file is removed
 * on failure. */
int files_copy_atomic(const char *from, const char *to);

#ifdef __cplusplus
}
#endif
#endif
