/* errors.c — the last-error message buffer behind errors.h, and the note of
 * what a variant's setup chose to run (attn.h). */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char last_message[1024];

volatile int attn_interrupted;

int attn_fail(int rc, const char *file, int line, const char *fmt, ...)
{
    /* Bad user input names the input's own place (file:line, option) in the
     * message; only internal failures carry the source location. */
    int n = 0;
    if (rc != ATTN_ERR_INPUT) {
        const char *base = strrchr(file, '/');
        n = snprintf(last_message, sizeof last_message, "%s:%d: ", base ? base + 1 : file, line);
        if (n < 0 || (size_t)n >= sizeof last_message) n = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message + n, sizeof last_message - (size_t)n, fmt, ap);
    va_end(ap);
    /* messages quote what the user gave (fields, lines, options): never echo
     * its control bytes (an ESC sequence, a carriage return) to a terminal */
    for (char *c = last_message; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return rc;
}

const char *attn_error_message(void) { return last_message; }

void attn_error_clear(void) { last_message[0] = '\0'; }

static char impl_note[256];

void attn_set_impl(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(impl_note, sizeof impl_note, fmt, ap);
    va_end(ap);
}

const char *attn_impl(void) { return impl_note; }

void attn_impl_clear(void) { impl_note[0] = '\0'; }
