/* Results: tables of numbers printed as aligned text, CSV or JSON, written to
 * PREFIX.json, and drawn by plot.py (matplotlib) into PREFIX.png. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "util/plot_launch.h"

struct bench_table *report_table(struct bench_report *r, const char *name, const char *title)
{
	struct bench_table *t;

	if (r->nr_tables >= BENCH_MAX_TABLES)
		bench_die("internal: too many tables");
	t = &r->tables[r->nr_tables++];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->title = title;
	return t;
}

void table_col(struct bench_table *t, const char *name, const char *unit, enum col_kind kind, int precision)
{
	if (t->nr_cols >= (int)(sizeof(t->cols) / sizeof(t->cols[0])) || t->nr_rows)
		bench_die("internal: columns of table %s", t->name);
	t->cols[t->nr_cols++] = (struct bench_col){ name, unit ? unit : "", kind, precision };
}

int table_row(struct bench_table *t)
{
	if (t->nr_rows == t->cap_rows) {
		int cap = t->cap_rows ? t->cap_rows * 2 : 64;
		struct bench_cell *cells = realloc(t->cells, (size_t)cap * (size_t)t->nr_cols * sizeof(*cells));

		if (!cells)
			bench_die("out of memory");
		t->cells = cells;
		t->cap_rows = cap;
	}
	for (int i = 0; i < t->nr_sampled; i++) {
		struct bench_sampled *sm = &t->sampled[i];

		if (!(sm->rows = realloc(sm->rows, (size_t)t->cap_rows * sizeof(*sm->rows))))
			bench_die("out of memory");
		sm->rows[t->nr_rows] = (struct samples){ NULL, 0, 0 };
	}
	for (int c = 0; c < t->nr_cols; c++) {
		t->cells[t->nr_rows * t->nr_cols + c].num = NAN;
		t->cells[t->nr_rows * t->nr_cols + c].text[0] = '\0';
	}
	return t->nr_rows++;
}

static int col_index(const struct bench_table *t, const char *col)
{
	for (int c = 0; c < t->nr_cols; c++)
		if (!strcmp(t->cols[c].name, col))
			return c;
	bench_die("internal: table %s has no column %s", t->name, col);
}

void table_set(struct bench_table *t, int row, const char *col, double v)
{
	t->cells[row * t->nr_cols + col_index(t, col)].num = v;
}

void table_set_text(struct bench_table *t, int row, const char *col, const char *text)
{
	struct bench_cell *cell = &t->cells[row * t->nr_cols + col_index(t, col)];

	snprintf(cell->text, sizeof(cell->text), "%s", text);
}

double table_get(const struct bench_table *t, int row, const char *col)
{
	return t->cells[row * t->nr_cols + col_index(t, col)].num;
}

void table_col_spread(struct bench_table *t, const char *name, const char *unit, int precision)
{
	char *low, *high;

	if (t->nr_sampled >= (int)(sizeof(t->sampled) / sizeof(t->sampled[0])))
		bench_die("internal: too many sampled columns in table %s", t->name);
	if (asprintf(&low, "%s_low", name) < 0 || asprintf(&high, "%s_high", name) < 0)
		bench_die("out of memory");
	struct bench_sampled *sm = &t->sampled[t->nr_sampled++];

	*sm = (struct bench_sampled){ t->nr_cols, -1, NULL, NULL };
	table_col(t, name, unit, COL_NUM, precision);
	table_col(t, low, unit, COL_NUM, precision);
	table_col(t, high, unit, COL_NUM, precision);
	/* The table's first measured column has "n"; a second one (par's
	 * best_ns beside lat_ns) may have another count: NAME_n. */
	for (int c = 0; c < t->nr_cols; c++)
		if (!strcmp(t->cols[c].name, "n") && asprintf(&sm->n_name, "%s_n", name) < 0)
			bench_die("out of memory");
	sm->n_col = t->nr_cols;
	table_col(t, sm->n_name ? sm->n_name : "n", NULL, COL_INT, 0);
}

void table_set_spread(struct bench_table *t, int row, const char *col, const struct samples *s)
{
	int c = col_index(t, col);
	struct spread sp = spread_of(s->v, s->n);

	for (int i = 0; i < t->nr_sampled; i++) {
		struct bench_sampled *sm = &t->sampled[i];
		struct samples *copy;

		if (sm->col != c)
			continue;
		copy = &sm->rows[row];
		samples_free(copy);
		for (int k = 0; k < s->n; k++)
			samples_add(copy, s->v[k]);
	}
	t->cells[row * t->nr_cols + c].num = sp.median;
	t->cells[row * t->nr_cols + c + 1].num = sp.low;
	t->cells[row * t->nr_cols + c + 2].num = sp.high;
	for (int i = 0; i < t->nr_sampled; i++)
		if (t->sampled[i].col == c)
			t->cells[row * t->nr_cols + t->sampled[i].n_col].num = sp.n;
}

void report_param(struct bench_report *r, const char *key, const char *fmt, ...)
{
	size_t len = strlen(r->params);
	va_list ap;

	snprintf(r->params + len, sizeof(r->params) - len, "%s\"%s\":", len ? "," : "", key);
	len = strlen(r->params);
	va_start(ap, fmt);
	vsnprintf(r->params + len, sizeof(r->params) - len, fmt, ap);
	va_end(ap);
}

void report_note(struct bench_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nr_notes >= (int)(sizeof(r->notes) / sizeof(r->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nr_notes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

void report_free(struct bench_report *r)
{
	for (int i = 0; i < r->nr_tables; i++) {
		struct bench_table *t = &r->tables[i];

		for (int k = 0; k < t->nr_sampled; k++) {
			for (int row = 0; row < t->nr_rows; row++)
				samples_free(&t->sampled[k].rows[row]);
			free(t->sampled[k].rows);
			free((char *)t->cols[t->sampled[k].col + 1].name);
			free((char *)t->cols[t->sampled[k].col + 2].name);
			free(t->sampled[k].n_name);
		}
		free(t->cells);
	}
	r->nr_tables = 0;
}

static void cell_text(const struct bench_col *col, const struct bench_cell *cell, bool human, char *buf, size_t n)
{
	if (col->kind == COL_TEXT)
		snprintf(buf, n, "%s", cell->text);
	else if (isnan(cell->num))
		snprintf(buf, n, human ? "-" : "");
	else if (human && !strcmp(col->unit, "B") && col->kind == COL_INT)
		format_size((size_t)cell->num, buf, n);
	else if (col->kind == COL_INT)
		snprintf(buf, n, "%.0f", cell->num);
	else
		snprintf(buf, n, "%.*f", col->precision, cell->num);
}

static void print_text(const struct bench_table *t, FILE *out)
{
	int width[32];
	char buf[64];

	fprintf(out, "%s\n", t->title);
	for (int c = 0; c < t->nr_cols; c++) {
		const struct bench_col *col = &t->cols[c];
		int w = (int)strlen(col->name) + (col->unit[0] && strcmp(col->unit, "B") ? (int)strlen(col->unit) + 3 : 0);

		for (int r = 0; r < t->nr_rows; r++) {
			cell_text(col, &t->cells[r * t->nr_cols + c], true, buf, sizeof(buf));
			if ((int)strlen(buf) > w)
				w = (int)strlen(buf);
		}
		width[c] = w;
	}
	for (int c = 0; c < t->nr_cols; c++) {
		const struct bench_col *col = &t->cols[c];

		if (col->unit[0] && strcmp(col->unit, "B"))
			snprintf(buf, sizeof(buf), "%s (%s)", col->name, col->unit);
		else
			snprintf(buf, sizeof(buf), "%s", col->name);
		fprintf(out, "%s%*s", c ? "  " : "  ", col->kind == COL_TEXT ? -width[c] : width[c], buf);
	}
	fputc('\n', out);
	for (int r = 0; r < t->nr_rows; r++) {
		for (int c = 0; c < t->nr_cols; c++) {
			cell_text(&t->cols[c], &t->cells[r * t->nr_cols + c], true, buf, sizeof(buf));
			fprintf(out, "  %*s", t->cols[c].kind == COL_TEXT ? -width[c] : width[c], buf);
		}
		fputc('\n', out);
	}
}

static void print_csv(const struct bench_table *t, FILE *out)
{
	char buf[64];

	fprintf(out, "# %s\n", t->title);
	for (int c = 0; c < t->nr_cols; c++)
		fprintf(out, "%s%s", c ? "," : "", t->cols[c].name);
	fputc('\n', out);
	for (int r = 0; r < t->nr_rows; r++) {
		for (int c = 0; c < t->nr_cols; c++) {
			cell_text(&t->cols[c], &t->cells[r * t->nr_cols + c], false, buf, sizeof(buf));
			fprintf(out, "%s%s", c ? "," : "", buf);
		}
		fputc('\n', out);
	}
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static void json_number(FILE *out, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", out);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.6g", v);
}

static void load_json(FILE *out, const struct load_figures *f)
{
	fprintf(out, "{\"seconds\":");
	json_number(out, f->seconds);
	fprintf(out, ",\"other_cpus\":");
	json_number(out, f->other_cpus);
	fprintf(out, ",\"own_cpus\":");
	json_number(out, f->own_cpus);
	fprintf(out, ",\"steal_cpus\":");
	json_number(out, f->steal_cpus);
	fprintf(out, ",\"run_queue_others\":");
	json_number(out, f->run_queue);
	fprintf(out, ",\"freq_mhz_min\":");
	json_number(out, f->freq_min_mhz);
	fprintf(out, ",\"freq_mhz_max\":");
	json_number(out, f->freq_max_mhz);
	fputc('}', out);
}

static void write_json(const struct bench_report *r, const struct bench_opts *o, FILE *out)
{
	const struct bench_topo *t = &o->topo;

	fprintf(out, "{\"benchmark\":");
	json_string(out, r->bench);
	fprintf(out, ",\"host\":{\"arch\":\"%s\",\"cpus\":[", arch_name(arch_this()));
	for (int i = 0; i < t->nr_cpus; i++)
		fprintf(out, "%s{\"cpu\":%d,\"node\":%d}", i ? "," : "", t->cpus[i], t->cpu_node[t->cpus[i]]);
	fprintf(out, "],\"nodes\":[");
	for (int i = 0; i < t->nr_nodes; i++)
		fprintf(out, "%s%d", i ? "," : "", t->nodes[i]);
	fprintf(out, "],\"caches\":[");
	for (int i = 0; i < t->nr_caches; i++) {
		fprintf(out, "%s{\"level\":%d,\"type\":\"%s\",\"size\":%zu,\"shared_cpus\":", i ? "," : "",
			t->caches[i].level, t->caches[i].type, t->caches[i].size);
		json_string(out, t->caches[i].shared_cpus);
		fputc('}', out);
	}
	fprintf(out, "]},\"timer\":{\"name\":\"%s\",\"resolution_ns\":", timer_name());
	json_number(out, timer_resolution_ns());
	fprintf(out, "},\"params\":{%s},\"tables\":{", r->params);
	for (int i = 0; i < r->nr_tables; i++) {
		const struct bench_table *tb = &r->tables[i];

		fprintf(out, "%s\"%s\":{\"title\":", i ? "," : "", tb->name);
		json_string(out, tb->title);
		fprintf(out, ",\"columns\":[");
		for (int c = 0; c < tb->nr_cols; c++) {
			fprintf(out, "%s{\"name\":\"%s\",\"unit\":", c ? "," : "", tb->cols[c].name);
			json_string(out, tb->cols[c].unit);
			fputc('}', out);
		}
		fprintf(out, "],\"rows\":[");
		for (int row = 0; row < tb->nr_rows; row++) {
			fprintf(out, "%s[", row ? "," : "");
			for (int c = 0; c < tb->nr_cols; c++) {
				const struct bench_cell *cell = &tb->cells[row * tb->nr_cols + c];

				if (c)
					fputc(',', out);
				if (tb->cols[c].kind == COL_TEXT)
					json_string(out, cell->text);
				else
					json_number(out, cell->num);
			}
			fputc(']', out);
		}
		fprintf(out, "]");
		if (tb->nr_sampled) {
			/* Every repetition of every point: the medians and intervals above
			 * can be recomputed from these. */
			fprintf(out, ",\"samples\":{");
			for (int k = 0; k < tb->nr_sampled; k++) {
				const struct bench_sampled *sm = &tb->sampled[k];

				fprintf(out, "%s\"%s\":[", k ? "," : "", tb->cols[sm->col].name);
				for (int row = 0; row < tb->nr_rows; row++) {
					fprintf(out, "%s[", row ? "," : "");
					for (int j = 0; j < sm->rows[row].n; j++) {
						if (j)
							fputc(',', out);
						json_number(out, sm->rows[row].v[j]);
					}
					fputc(']', out);
				}
				fputc(']', out);
			}
			fputc('}', out);
		}
		fputc('}', out);
	}
	fprintf(out, "},\"interval\":\"median and a distribution-free 95%% interval from order statistics\"");
	fprintf(out, ",\"load\":{\"before\":");
	load_json(out, load_before());
	fprintf(out, ",\"during\":");
	load_json(out, &r->load);
	fprintf(out, ",\"reliable\":%s,\"warning\":", r->load_warning[0] || r->freq_warning[0] ? "false" : "true");
	json_string(out, r->load_warning);
	fprintf(out, ",\"freq_warning\":");
	json_string(out, r->freq_warning);
	fprintf(out, ",\"freq_unknown\":");
	json_string(out, load_freq_unknown());
	fprintf(out, ",\"isolate\":%s}", load_isolate()[0] ? load_isolate() : "null");
	fprintf(out, ",\"notes\":[");
	for (int i = 0; i < r->nr_notes; i++) {
		if (i)
			fputc(',', out);
		json_string(out, r->notes[i]);
	}
	fprintf(out, "]}\n");
}

const char *plot_format_name(int f)
{
	static const char *names[] = { "png", "svg", "pdf" };

	return names[f];
}

/* Files of a run at prefix: PREFIX.json and one per plot format. */
static bool run_files_exist(const char *prefix)
{
	char path[1100];

	snprintf(path, sizeof(path), "%s.json", prefix);
	if (access(path, F_OK) == 0)
		return true;
	for (int f = 0; f < PLOT_NR_FORMATS; f++) {
		snprintf(path, sizeof(path), "%s.%s", prefix, plot_format_name(f));
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* The prefix this run writes to: the one asked for, or, when an earlier
 * run's files are there, the first PREFIX-N that is free (never an
 * overwrite without --force). With --force the earlier run's plots in
 * formats not asked for now are removed, so no stale plot is left beside
 * the new one. */
static int choose_prefix(const struct bench_opts *o, char *out, size_t size)
{
	char path[1100];

	snprintf(out, size, "%s", o->prefix);
	if (o->force) {
		for (int f = 0; f < PLOT_NR_FORMATS; f++) {
			if (o->plot_formats & (1u << f))
				continue;
			snprintf(path, sizeof(path), "%s.%s", o->prefix, plot_format_name(f));
			if (unlink(path) < 0 && errno != ENOENT) {
				fprintf(stderr, "memscope-bench: cannot remove the earlier %s: %s\n", path, strerror(errno));
				return -1;
			}
		}
		return 0;
	}
	for (int n = 1; run_files_exist(out); n++) {
		if (n > 9999) {
			fprintf(stderr, "memscope-bench: %s-1 to -9999 are all taken: give another -o or --force\n", o->prefix);
			return -1;
		}
		snprintf(out, size, "%s-%d", o->prefix, n);
	}
	return 0;
}

/* Runs plot.py with the first Python that has matplotlib (util/plot_launch.h, shared with memscope). */
static int draw(const char *json_path, const char *prefix, const char *formats, char *why, size_t whysize)
{
	return plot_draw(BENCH_SOURCE_DIR, BENCH_DATADIR, json_path, prefix, formats, why, whysize);
}

int report_finish(struct bench_report *r, const struct bench_opts *o)
{
	char prefix[1024], json_path[1100], why[512], formats[32] = "", shown[4200] = "";
	FILE *f;

	load_finish(&r->load);
	if (load_unreliable(&r->load)) {
		static const char *by_size[] = { "bw", "lat", "par", "c2c" };
		bool sized = false;

		for (size_t i = 0; i < sizeof(by_size) / sizeof(by_size[0]); i++)
			sized |= !strcmp(r->bench, by_size[i]);
		load_warning(o, &r->load, sized, r->load_warning, sizeof(r->load_warning));
		report_note(r, "%s", r->load_warning);
		fprintf(stderr, "memscope-bench: warning: %s\n", r->load_warning);
	}
	if (load_freq_warning(&r->load, r->freq_warning, sizeof(r->freq_warning))) {
		report_note(r, "%s", r->freq_warning);
		fprintf(stderr, "memscope-bench: warning: %s\n", r->freq_warning);
	}
	for (int i = 0; i < r->nr_tables; i++) {
		if (o->format == FMT_TABLE) {
			print_text(&r->tables[i], stdout);
			fputc('\n', stdout);
		} else if (o->format == FMT_CSV) {
			print_csv(&r->tables[i], stdout);
		}
	}
	if (o->format == FMT_JSON)
		write_json(r, o, stdout);
	for (int i = 0; i < r->nr_notes; i++)
		if (strcmp(r->notes[i], r->load_warning) && strcmp(r->notes[i], r->freq_warning)) /* said once, as a warning */
			fprintf(o->format == FMT_TABLE ? stdout : stderr, "note: %s\n", r->notes[i]);
	fflush(stdout);
	if (!o->plot)
		return 0;
	if (choose_prefix(o, prefix, sizeof(prefix)) < 0)
		return 1;
	if (strcmp(prefix, o->prefix))
		fprintf(stderr, "memscope-bench: %s.* are an earlier run's (--force replaces them): writing %s.*\n",
			o->prefix, prefix);
	snprintf(json_path, sizeof(json_path), "%s.json", prefix);
	if (!(f = fopen(json_path, "w"))) {
		fprintf(stderr, "memscope-bench: cannot write %s: %s\n", json_path, strerror(errno));
		return 1;
	}
	write_json(r, o, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "memscope-bench: cannot write %s: %s\n", json_path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < PLOT_NR_FORMATS; i++) {
		char path[1100], abs[4096];

		if (!(o->plot_formats & (1u << i)))
			continue;
		snprintf(formats + strlen(formats), sizeof(formats) - strlen(formats), "%s%s", formats[0] ? "," : "",
			 plot_format_name(i));
		snprintf(path, sizeof(path), "%s.%s", prefix, plot_format_name(i));
		/* realpath needs the file: the absolute directory, then the name. */
		{
			char dir[1100], *slash;

			snprintf(dir, sizeof(dir), "%s", path);
			slash = strrchr(dir, '/');
			if (slash)
				*slash = '\0';
			if (realpath(slash ? (dir[0] ? dir : "/") : ".", abs))
				snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s/%s", shown[0] ? " and " : "",
					 strcmp(abs, "/") ? abs : "", slash ? slash + 1 : path);
			else
				snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s", shown[0] ? " and " : "",
					 path);
		}
	}
	if (draw(json_path, prefix, formats, why, sizeof(why)) < 0) {
		fprintf(stderr, "memscope-bench: results in %s; plot not drawn: %s\n", json_path, why);
		return 0;
	}
	fprintf(stderr, "memscope-bench: results in %s, plot in %s\n", json_path, shown);
	return 0;
}
