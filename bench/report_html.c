/* report_html.c — `report html`: the report page of a run, with the figures
 * found beside it, the summary table and the run's environment. */
#include "report.h"
#include "../common/errors.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static bool exists(const char *dir, const char *name)
{
    char p[1100];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && st.st_size > 0;
}

static void html_summary(FILE *f, const struct result_set *s, const char *const *variants, int nv)
{
    fputs("<table>\n<tr><th>mode</th><th>point</th>", f);
    for (int v = 0; v < nv; v++) {
        fputs("<th>", f);
        html_text(f, variants[v]);
        fputs(" ms</th>", f);
    }
    fputs("<th>best</th><th>TFLOP/s</th><th>speedup over naive</th></tr>\n", f);
    for (size_t i = 0; i < s->count; i++) {
        const struct result_key *k = &s->rows[i].key;
        bool first = true; /* one table row per point: its first variant's row */
        for (size_t j = 0; j < i && first; j++) {
            struct result_key a = s->rows[j].key, b = *k;
            snprintf(a.variant, sizeof a.variant, "-");
            snprintf(b.variant, sizeof b.variant, "-");
            first = !result_key_equal(&a, &b);
        }
        if (!first) continue;
        fprintf(f, "<tr><td>%s</td><td>B=%d H=%d S=%d D=%d %s %s</td>", k->mode, k->batch, k->heads,
                k->seq_len, k->head_dim, k->causal ? "causal" : "full", k->dtype);
        const struct result_rec *best = NULL;
        for (int v = 0; v < nv; v++) {
            const struct result_rec *r = report_twin(s, k, variants[v]);
            if (report_row_ok(r)) {
                fprintf(f, "<td>%.4g</td>", r->ms_median);
                if (!best || r->ms_median < best->ms_median) best = r;
            } else {
                fprintf(f, "<td class=\"gap\">%s</td>", r ? r->status : "—");
            }
        }
        const struct result_rec *n = report_twin(s, k, "naive");
        if (best) {
            fputs("<td>", f);
            html_text(f, best->key.variant);
            fprintf(f, "</td><td>%.1f</td>", best->tflops);
            if (report_row_ok(n)) fprintf(f, "<td>%.2f×</td>", n->ms_median / best->ms_median);
            else fputs("<td>—</td>", f);
        } else {
            fputs("<td colspan=\"3\" class=\"gap\">no ok row</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

int report_html(const struct report_args *a, const struct result_set *s)
{
    char path[1100], env[1100];
    snprintf(path, sizeof path, "%s/report.html", a->outdir);
    if (a->env) snprintf(env, sizeof env, "%s", a->env);
    else report_env_beside(a->results, env, sizeof env);
    FILE *f = fopen(path, "w");
    if (!f) return ATTN_FAIL(ATTN_ERR_INPUT, "%s: unable to create: %s", path, strerror(errno));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>attnbench report</title>\n<style>\n"
          "body{font-family:sans-serif;max-width:1400px;margin:2em auto;color:#222}\n"
          "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:right}th{background:#eee}td:nth-child(2){text-align:left}\n"
          ".gap{color:#a00}img{max-width:100%;border:1px solid #ddd;margin:1em 0}\n"
          "</style></head><body>\n<h1>attnbench report</h1>\n<p>Results <code>", f);
    html_text(f, a->results);
    fprintf(f, "</code>, %zu rows, GPU <b>", s->count);
    html_text(f, s->rows[0].gpu);
    fputs("</b>.</p>\n", f);
    static const char *const figs[][2] = {
        {"latency", "Latency vs sequence length"},
        {"throughput", "Throughput vs sequence length (dashed: measured bf16 GEMM peak)"},
        {"speedup", "Speedup over naive"},
        {"speedup_cudnn", "Speedup over cudnn_sdpa"},
        {"memory", "Extra device memory vs sequence length"},
        {"ratio", "Current / baseline per row (red: the allowed slowdown)"},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        char svg[64], png[64];
        snprintf(svg, sizeof svg, "%s.svg", figs[i][0]);
        snprintf(png, sizeof png, "%s.png", figs[i][0]);
        if (!exists(a->outdir, png) && !exists(a->outdir, svg)) continue;
        fprintf(f, "<h2>%s</h2>\n<a href=\"%s\"><img src=\"%s\" alt=\"%s\"></a>\n", figs[i][1],
                exists(a->outdir, svg) ? svg : png, png, figs[i][1]);
    }
    const char *variants[MAX_VARIANTS];
    int nv = report_variants(s, variants);
    fputs("<h2>Summary: best variant per point</h2>\n", f);
    html_summary(f, s, variants, nv);
    fputs("<h2>Environment</h2>\n<table>\n", f);
    FILE *e = fopen(env, "r");
    char line[2048];
    while (e && fgets(line, sizeof line, e)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq) continue;
        *eq = '\0';
        fputs("<tr><th>", f);
        html_text(f, line);
        fputs("</th><td style=\"text-align:left\">", f);
        html_text(f, eq + 1);
        fputs("</td></tr>\n", f);
    }
    if (e) fclose(e);
    else fputs("<tr><td>no environment file found beside the CSV</td></tr>\n", f);
    fputs("</table>\n</body></html>\n", f);
    if (fclose(f) != 0) return ATTN_FAIL(ATTN_ERR, "%s: write failed", path);
    printf("report: %s\n", path);
    return ATTN_OK;
}

