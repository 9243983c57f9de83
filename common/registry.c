/* registry.c — every attention variant attnbench knows, in the order --list
 * prints them. Adding a variant: one file in variants/ exporting a
 * `const struct attn_variant attn_variant_NAME`, and one X(NAME) line in
 * VARIANT_LIST below. Variants that need an optional library go inside the
 * #if of the macro the Makefile defines when it finds that library.
 * Variants defined at run time (the PyTorch peers, through libattnpeer.so,
 * whose build has no built-in variants: ATTN_NO_BUILTIN_VARIANTS) are added
 * after the built-in ones with registry_add; --list names the modules that
 * define them (registry_print_peers). */
#include "registry.h"
#include "errors.h"
#include "names.h"
#include "results_read.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The longest variant name the results reader takes back (its row key's
 * field): a longer one would be written, and then the whole run refused
 * where it is read. */
#define VARIANT_NAME_MAX (sizeof ((struct result_key *)0)->variant - 1)

/* cudnn_sdpa exists only when the Makefile found cuDNN (ATTN_HAVE_CUDNN). */
#ifdef ATTN_HAVE_CUDNN
#define CUDNN_VARIANTS(X) X(cudnn_sdpa)
#else
#define CUDNN_VARIANTS(X)
#endif
/* The tuning lab's variants exist only in `make lab`'s build (ATTN_LAB). */
#ifdef ATTN_LAB
#define LAB_VARIANTS(X) X(flash_hopper_lab) X(flash_mma_lab) X(flash_decode_lab)
#else
#define LAB_VARIANTS(X)
#endif
/* Variants that misbehave on purpose (a kernel that never ends) exist only
 * in the tests' build of attnbench (ATTN_TEST_VARIANTS). */
#ifdef ATTN_TEST_VARIANTS
#define TEST_VARIANTS(X) X(test_hang) X(test_hang_late)
#else
#define TEST_VARIANTS(X)
#endif
#ifdef ATTN_NO_BUILTIN_VARIANTS
#define VARIANT_LIST(X)
#else
#define VARIANT_LIST(X) \
    X(naive)            \
    X(inplace)          \
    CUDNN_VARIANTS(X)   \
    X(flash_mma)        \
    X(flash_hopper)     \
    X(flash_decode)     \
    LAB_VARIANTS(X)     \
    TEST_VARIANTS(X)
#endif

#define DECLARE(name) extern const struct attn_variant attn_variant_##name;
#define ENTRY(name) &attn_variant_##name,
VARIANT_LIST(DECLARE)
static const struct attn_variant *const builtin[] = {VARIANT_LIST(ENTRY) NULL};
static size_t builtin_count(void) { return sizeof builtin / sizeof builtin[0] - 1; }

#define ADDED_MAX 32
static const struct attn_variant *added[ADDED_MAX];
static size_t added_count;

size_t registry_count(void) { return builtin_count() + added_count; }

const struct attn_variant *registry_get(size_t i)
{
    if (i < builtin_count()) return builtin[i];
    return i < registry_count() ? added[i - builtin_count()] : NULL;
}

const struct attn_variant *registry_find(const char *name)
{
    for (size_t i = 0; i < registry_count(); i++)
        if (strcmp(registry_get(i)->name, name) == 0) return registry_get(i);
    return NULL;
}

int registry_add(const struct attn_variant *v)
{
    if (!v) return ATTN_FAIL(ATTN_ERR, "registry_add: no variant");
    if (added_count == ADDED_MAX)
        return ATTN_FAIL(ATTN_ERR, "registry_add: more than %d added variants", ADDED_MAX);
    added[added_count++] = v;
    if (registry_check() == ATTN_OK) return ATTN_OK;
    added_count--;
    return ATTN_ERR;
}

/* A name is [a-z0-9_]+: a CSV field that needs no quoting, a word of the
 * .env and of --variants, and part of a trace's file name. */
static bool valid_name(const char *s)
{
    if (!s || !*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

int registry_check(void)
{
    if (registry_count() == 0) return ATTN_FAIL(ATTN_ERR, "the variant registry is empty");
    for (size_t i = 0; i < registry_count(); i++) {
        const struct attn_variant *v = registry_get(i);
        char shown[TEXT_SHOWN_BYTES];
        if (!valid_name(v->name))
            return ATTN_FAIL(ATTN_ERR, "variant %zu: name '%s' is not [a-z0-9_]+", i,
                             v->name ? text_shown(v->name, SIZE_MAX, shown) : "(null)");
        if (strlen(v->name) > VARIANT_NAME_MAX)
            return ATTN_FAIL(ATTN_ERR, "variant %zu: name '%s' is %zu characters long, more than "
                             "the results reader takes (%zu)", i, text_shown(v->name, SIZE_MAX, shown),
                             strlen(v->name), VARIANT_NAME_MAX);
        if (!v->summary || !*v->summary)
            return ATTN_FAIL(ATTN_ERR, "variant '%s' has no summary", v->name);
        if (!v->supports || !v->workspace_bytes || !v->setup || !v->run || !v->teardown)
            return ATTN_FAIL(ATTN_ERR, "variant '%s' lacks a required op", v->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(registry_get(j)->name, v->name) == 0)
                return ATTN_FAIL(ATTN_ERR, "variant name '%s' is registered twice", v->name);
    }
    return ATTN_OK;
}

void registry_print(FILE *f)
{
    fprintf(f, "%-12s %s\n", "variant", "summary");
    for (size_t i = 0; i < registry_count(); i++)
        fprintf(f, "%-12s %s\n", registry_get(i)->name, registry_get(i)->summary);
}

#define PEER_SUFFIX "_peers.py"
#define PEER_MODULES_MAX 64
#define PEER_NAMES_MAX 64

/* The variant a line of a peer module names, into name[len]: a class
 * attribute `name = "X"` or `name, other = "X", ...` (indented, as in a class
 * body), X being a valid name. false for any other line. */
static bool peer_name_line(const char *line, char *name, size_t len)
{
    if (*line != ' ' && *line != '\t') return false;
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, "name", 4) != 0 || (line[4] != ' ' && line[4] != '=' && line[4] != ','))
        return false;
    const char *eq = strchr(line, '=');
    if (!eq || eq[1] == '=') return false;
    const char *q = eq + 1;
    while (*q == ' ') q++;
    if (*q != '"' && *q != '\'') return false;
    const char *end = strchr(q + 1, *q);
    if (!end || (size_t)(end - q - 1) >= len) return false;
    memcpy(name, q + 1, (size_t)(end - q - 1));
    name[end - q - 1] = '\0';
    return valid_name(name) && strlen(name) <= VARIANT_NAME_MAX;
}

/* The variants module `path` names, in file order, once each (the first
 * PEER_NAMES_MAX), into names[]; their count (0 when it names none or cannot
 * be read). */
static size_t peer_names(const char *path, char (*names)[VARIANT_NAME_MAX + 1])
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0, cap = 0;
    char *line = NULL;
    while (n < PEER_NAMES_MAX && getline(&line, &cap, f) > 0) {
        if (!peer_name_line(line, names[n], sizeof names[n])) continue;
        bool seen = false;
        for (size_t i = 0; i < n; i++) seen |= strcmp(names[i], names[n]) == 0;
        if (!seen) n++;
    }
    free(line);
    fclose(f);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The modules of dir (MODULE of each MODULE_peers.py, MODULE a valid name),
 * sorted, at most PEER_MODULES_MAX, each malloc'd into modules[]; their count. */
static size_t peer_modules(const char *dir, char **modules)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL && n < PEER_MODULES_MAX;) {
        const size_t len = strlen(e->d_name), suffix = strlen(PEER_SUFFIX);
        if (len <= suffix || strcmp(e->d_name + len - suffix, PEER_SUFFIX) != 0) continue;
        char *module = strndup(e->d_name, len - suffix);
        if (module && valid_name(module)) modules[n++] = module;
        else free(module);
    }
    if (d) closedir(d);
    qsort(modules, n, sizeof *modules, by_name);
    return n;
}

void registry_print_peers(FILE *f, const char *dir)
{
    char shown_dir[TEXT_SHOWN_BYTES];
    text_shown(dir, SIZE_MAX, shown_dir);
    char *modules[PEER_MODULES_MAX];
    const size_t n = peer_modules(dir, modules);
    if (n == 0) {
        fprintf(f, "\nPython peers: no MODULE" PEER_SUFFIX " in %s (ATTN_PEERS_DIR names the "
                "directory)\n", shown_dir);
        return;
    }
    fprintf(f, "\nPython peers in %s (make bench PEERS=MODULE adds them to the run):\n", shown_dir);
    fprintf(f, "%-12s %s\n", "module", "variants");
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX], names[PEER_NAMES_MAX][VARIANT_NAME_MAX + 1];
        snprintf(path, sizeof path, "%s/%s" PEER_SUFFIX, dir, modules[i]);
        const size_t count = peer_names(path, names);
        fprintf(f, "%-12s ", modules[i]);
        for (size_t j = 0; j < count; j++) fprintf(f, "%s%s", j ? ", " : "", names[j]);
        fprintf(f, "%s(make bench PEERS=%s)\n", count ? " " : "", modules[i]);
        free(modules[i]);
    }
}

int registry_find_peer(const char *dir, const char *name, char *module, size_t len)
{
    char *modules[PEER_MODULES_MAX];
    const size_t n = peer_modules(dir, modules);
    int rc = ATTN_ERR_INPUT;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX], names[PEER_NAMES_MAX][VARIANT_NAME_MAX + 1];
        snprintf(path, sizeof path, "%s/%s" PEER_SUFFIX, dir, modules[i]);
        const size_t count = peer_names(path, names);
        for (size_t j = 0; j < count && rc != ATTN_OK; j++)
            if (!strcmp(names[j], name) && (size_t)snprintf(module, len, "%s", path) < len) rc = ATTN_OK;
        free(modules[i]);
    }
    return rc;
}
