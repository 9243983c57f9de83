/* names.h — user text on its way into a file name or a message: the names
 * that become file names (run ids, grid names) held to a safe alphabet where
 * they enter, and any user text quoted in a message with its control bytes
 * escaped. */
#ifndef ATTN_NAMES_H
#define ATTN_NAMES_H

#include "results_read.h"

#include <limits.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for text_shown's result, its NUL included. */
#define TEXT_SHOWN_BYTES 200
/* The first n bytes of text (fewer at a NUL) as a message may quote them:
 * user text is untrusted, and a raw ESC or C1 byte in a message would drive
 * the terminal that shows it. Control bytes, DEL and bytes that are not
 * UTF-8 become \xNN; text past the buffer ends in "...". Returns buf. */
const char *text_shown(const char *text, size_t n, char buf[TEXT_SHOWN_BYTES]);

/* The safe alphabet of a name that becomes a file name, as messages say it. */
#define SAFE_NAME_RULE "letters, digits, '.', '_' and '-', not starting with '.' or '-'"
/* The longest run id: what the results reader keeps of the run_id column. */
#define RUN_ID_MAX (sizeof ((struct result_rec *)0)->run_id - 1)
/* The longest grid name: NAME.grid is one file name. */
#define GRID_NAME_MAX (NAME_MAX - 5)

/* Whether name is 1..max characters of [A-Za-z0-9._-], not starting with '.'
 * or '-': no path, no shell syntax, no hidden file, no option look-alike. */
bool safe_name(const char *name, size_t max);
/* ATTN_OK when safe_name(name, max), else ATTN_ERR_INPUT with "OPT: 'NAME'
 * is not a KIND (1 to MAX letters, ...)" (NAME quoted by text_shown). */
int safe_name_check(const char *name, size_t max, const char *opt, const char *kind);

#ifdef __cplusplus
}
#endif
#endif
