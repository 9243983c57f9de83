/* names.c — names that become file names checked against the safe alphabet,
 * and user text quoted for messages (names.h). */
#include "names.h"
#include "errors.h"

#include <stdio.h>
#include <string.h>

/* Length of the UTF-8 character at p (at most `left` bytes), 0 when it is not
 * one or is a C1 control (U+0080..U+009F: U+009B is CSI, which some
 * terminals act on as ESC [ does). */
static size_t utf8_char_len(const unsigned char *p, size_t left)
{
    const unsigned char b = p[0];
    size_t need = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3
                : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (need == 0 || need > left) return 0;
    for (size_t i = 1; i < need; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (b == 0xC2 && p[1] < 0xA0) return 0;
    return need;
}

const char *text_shown(const char *text, size_t n, char buf[TEXT_SHOWN_BYTES])
{
    const unsigned char *s = (const unsigned char *)text;
    size_t o = 0;
    for (size_t i = 0; i < n && s[i];) {
        size_t u = s[i] >= 0x80 ? utf8_char_len(s + i, n - i) : (s[i] >= 0x20 && s[i] != 0x7F);
        if (o + (u ? u : 4) + 4 > TEXT_SHOWN_BYTES) { /* room for "..." and the NUL */
            memcpy(buf + o, "...", 4);
            return buf;
        }
        if (u) {
            memcpy(buf + o, s + i, u);
            o += u;
            i += u;
        } else {
            snprintf(buf + o, 5, "\\x%02x", s[i]);
            o += 4;
            i++;
        }
    }
    buf[o] = '\0';
    return buf;
}

bool safe_name(const char *name, size_t max)
{
    const size_t n = strlen(name);
    if (n == 0 || n > max || name[0] == '.' || name[0] == '-') return false;
    for (size_t i = 0; i < n; i++) {
        const char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int safe_name_check(const char *name, size_t max, const char *opt, const char *kind)
{
    if (safe_name(name, max)) return ATTN_OK;
    char quoted[TEXT_SHOWN_BYTES];
    return ATTN_FAIL(ATTN_ERR_INPUT, "%s: '%s' is not a %s (1 to %zu %s)", opt,
                     text_shown(name, SIZE_MAX, quoted), kind, max, SAFE_NAME_RULE);
}
