/* The DAMON heat map of a recording (damon_heatmap.h). Each cell is the
 * access rate of the bytes DAMON's regions cover in it - nr_accesses out of
 * the aggregation's samples, weighted by the bytes of each region inside the
 * cell - averaged over the aggregations of its time bucket. */
#include "recording/damon_heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "recording/recording.h"
#include "util/array.h"
#include "util/plot_launch.h"

/* ' ' no region in the cell, '.' 0%, then eighths of the samples. */
static const char ramp[] = ".:-=+*#%@";
#define RAMP_LEVELS 8

struct heat_region {
	uint64_t t_ns, start, end, nodes;
	double rate;
};

struct heat_label {
	uint64_t t_ns;
	char text[256 + 16];
};

struct heat_input {
	struct heat_region *regions;
	size_t nr, cap;
	struct heat_label *labels;
	size_t nr_labels, cap_labels;
	uint64_t interval_ns;
	uint64_t all_nodes;        /* the nodes of every region, those left out too */
	uint64_t virtual_regions;  /* regions of processes (vaddr): not drawn */
	/* Each node's memory from the recorded memory-block map (has_range);
	 * recordings without it: the span of the node's regions. */
	uint64_t range_low[64], range_high[64];
	uint64_t has_range;
};

/* host.memory_ranges: each node's lowest and highest address. */
static int read_ranges(const char *path, const json_t *ranges, struct heat_input *in, struct ms_error *err)
{
	size_t i;
	json_t *e;

	json_array_foreach(ranges, i, e) {
		const char *start = json_string_value(json_array_get(e, 0)), *end = json_string_value(json_array_get(e, 1));
		json_t *node = json_array_get(e, 2);
		char *stop1 = NULL, *stop2 = NULL;
		uint64_t lo = start ? strtoull(start, &stop1, 16) : 0, hi = end ? strtoull(end, &stop2, 16) : 0;
		json_int_t n = json_integer_value(node);

		if (!json_is_array(e) || json_array_size(e) != 3 || !start || !end || !*start || !*end || *stop1 ||
		    *stop2 || !json_is_integer(node) || n < 0 || hi <= lo) {
			ms_error_set(err, "%s:1: \"host\".\"memory_ranges\"[%zu]: expected [\"start\", \"end\", node] "
				     "with hexadecimal addresses, start below end, and a node number", path, i);
			return -1;
		}
		if (n >= 64)
			continue;
		if (!(in->has_range >> n & 1) || lo < in->range_low[n])
			in->range_low[n] = lo;
		if (!(in->has_range >> n & 1) || hi > in->range_high[n])
			in->range_high[n] = hi;
		in->has_range |= 1ull << n;
	}
	return 0;
}

static int read_input(const char *path, int node, struct heat_input *in, struct ms_error *err)
{
	struct recording_reader *r;
	struct recording_record rec;
	struct frame frame;
	int status = -1;

	if (recording_reader_open(&r, path, err) < 0)
		return -1;
	if (frame_init_movable(&frame, 0) < 0) {
		recording_reader_close(r);
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (;;) {
		if (recording_reader_next(r, &rec, &frame, err) < 0)
			goto out;
		if (rec.kind == RECORD_EOF)
			break;
		if (rec.kind == RECORD_SAMPLE_ITEM && rec.item.kind == SAMPLE_ITEM_DAMON_REGION) {
			const struct damon_region_event *d = rec.item.damon;

			if (d->pid) {
				/* A process's virtual region (report --sort obj reads them). */
				in->virtual_regions++;
				continue;
			}
			in->all_nodes |= d->nodes;
			if (node >= 0 && !(d->nodes >> node & 1))
				continue;
			if (array_grow(&in->regions, &in->cap, in->nr + 1, sizeof(*in->regions)) < 0)
				goto oom;
			in->regions[in->nr++] = (struct heat_region){ .t_ns = rec.item.time_ns, .start = d->start,
								     .end = d->end, .nodes = d->nodes,
								     .rate = (double)d->nr_accesses / d->samples };
		} else if (rec.kind == RECORD_LABEL) {
			struct heat_label *l;

			if (array_grow(&in->labels, &in->cap_labels, in->nr_labels + 1, sizeof(*in->labels)) < 0)
				goto oom;
			l = &in->labels[in->nr_labels++];
			l->t_ns = rec.t_ns;
			snprintf(l->text, sizeof(l->text), "%s%s%s%s", rec.text, rec.phase[0] ? " (" : "", rec.phase,
				 rec.phase[0] ? ")" : "");
		}
	}
	in->interval_ns = recording_reader_header(r)->interval_ns;
	if (read_ranges(path, recording_reader_header(r)->memory_ranges, in, err) < 0)
		goto out;
	status = 0;
	goto out;
oom:
	ms_error_set(err, "out of memory");
out:
	frame_free(&frame);
	recording_reader_close(r);
	return status;
}

/* The map: rows x HEATMAP_COLUMNS cells over [low, low + columns * column_bytes). */
struct heat_map {
	int rows;
	uint64_t *row_t_ns;        /* time of each row's first aggregation */
	int *row_aggregations;
	double *weighted, *covered; /* per cell: bytes x rate, bytes */
	uint64_t low, high, column_bytes;
	int nr_aggregations;
	uint64_t node_low[64], node_high[64];
	uint64_t nodes;
};

static void heat_map_free(struct heat_map *m)
{
	free(m->row_t_ns);
	free(m->row_aggregations);
	free(m->weighted);
	free(m->covered);
}

static int build(const struct heat_input *in, struct heat_map *m, struct ms_error *err)
{
	int per_row, agg = -1, row = 0;
	uint64_t last_t = 0;

	memset(m, 0, sizeof(*m));
	m->low = UINT64_MAX;
	for (size_t i = 0; i < in->nr; i++) {
		const struct heat_region *r = &in->regions[i];

		if (i == 0 || r->t_ns != in->regions[i - 1].t_ns)
			m->nr_aggregations++;
		m->low = r->start < m->low ? r->start : m->low;
		m->high = r->end > m->high ? r->end : m->high;
		for (int n = 0; n < 64; n++) {
			if (!(r->nodes >> n & 1))
				continue;
			if (!(m->nodes >> n & 1) || r->start < m->node_low[n])
				m->node_low[n] = r->start;
			if (!(m->nodes >> n & 1) || r->end > m->node_high[n])
				m->node_high[n] = r->end;
			m->nodes |= 1ull << n;
		}
	}
	/* A node's memory as the recorded block map says, within the map's
	 * addresses: a region across a node boundary does not widen it. */
	for (int n = 0; n < 64; n++) {
		uint64_t lo, hi;

		if (!(m->nodes >> n & 1) || !(in->has_range >> n & 1))
			continue;
		lo = in->range_low[n] > m->low ? in->range_low[n] : m->low;
		hi = in->range_high[n] < m->high ? in->range_high[n] : m->high;
		if (lo < hi) {
			m->node_low[n] = lo;
			m->node_high[n] = hi;
		}
	}
	per_row = (m->nr_aggregations + HEATMAP_MAX_ROWS - 1) / HEATMAP_MAX_ROWS;
	m->rows = (m->nr_aggregations + per_row - 1) / per_row;
	m->column_bytes = (m->high - m->low + HEATMAP_COLUMNS - 1) / HEATMAP_COLUMNS;
	m->row_t_ns = calloc((size_t)m->rows, sizeof(*m->row_t_ns));
	m->row_aggregations = calloc((size_t)m->rows, sizeof(*m->row_aggregations));
	m->weighted = calloc((size_t)m->rows * HEATMAP_COLUMNS, sizeof(double));
	m->covered = calloc((size_t)m->rows * HEATMAP_COLUMNS, sizeof(double));
	if (!m->row_t_ns || !m->row_aggregations || !m->weighted || !m->covered) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < in->nr; i++) {
		const struct heat_region *r = &in->regions[i];
		uint64_t first, last;

		if (agg < 0 || r->t_ns != last_t) {
			agg++;
			last_t = r->t_ns;
			row = agg / per_row;
			if (agg % per_row == 0)
				m->row_t_ns[row] = r->t_ns;
			m->row_aggregations[row]++;
		}
		first = (r->start - m->low) / m->column_bytes;
		last = (r->end - 1 - m->low) / m->column_bytes;
		for (uint64_t c = first; c <= last && c < HEATMAP_COLUMNS; c++) {
			uint64_t lo = m->low + c * m->column_bytes, hi = lo + m->column_bytes;
			uint64_t a = r->start > lo ? r->start : lo, b = r->end < hi ? r->end : hi;
			double bytes = (double)(b - a);

			m->weighted[(size_t)row * HEATMAP_COLUMNS + c] += bytes * r->rate;
			m->covered[(size_t)row * HEATMAP_COLUMNS + c] += bytes;
		}
	}
	return 0;
}

/* The cell's rate, or -1 where no region covers it. */
static double cell(const struct heat_map *m, int row, int col)
{
	size_t i = (size_t)row * HEATMAP_COLUMNS + (size_t)col;

	return m->covered[i] > 0 ? m->weighted[i] / m->covered[i] : -1;
}

static char cell_char(double rate)
{
	int level;

	if (rate < 0)
		return ' ';
	level = (int)(rate * RAMP_LEVELS + 0.999999);
	return ramp[level > RAMP_LEVELS ? RAMP_LEVELS : level];
}

static void human_bytes(uint64_t n, char *out, size_t size)
{
	const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(out, size, "%.1f %s", v, units[u]);
}

static void print_text(const struct heat_input *in, const struct heat_map *m, FILE *out, const char *path)
{
	char col[32];

	human_bytes(m->column_bytes, col, sizeof(col));
	fprintf(out, "DAMON heat map of %s: access rate by physical address (columns) and time (rows)\n", path);
	fprintf(out, "address 0x%" PRIx64 "-0x%" PRIx64 ": %d columns of %s (0x%" PRIx64 " bytes); %d aggregations, "
		"%d per row\n", m->low, m->high, HEATMAP_COLUMNS, col, m->column_bytes, m->nr_aggregations,
		m->rows ? (m->nr_aggregations + m->rows - 1) / m->rows : 0);
	for (int n = 0; n < 64; n++)
		if (m->nodes >> n & 1)
			fprintf(out, "node %d: 0x%" PRIx64 "-0x%" PRIx64 " (columns %" PRIu64 "-%" PRIu64 ")\n", n,
				m->node_low[n], m->node_high[n], (m->node_low[n] - m->low) / m->column_bytes,
				(m->node_high[n] - 1 - m->low) / m->column_bytes);
	fprintf(out, "ramp: ' ' no region, '.' 0%%");
	for (int l = 1; l <= RAMP_LEVELS; l++)
		fprintf(out, ", '%c' <=%.1f%%", ramp[l], 100.0 * l / RAMP_LEVELS);
	fprintf(out, " of the samples of an aggregation found the bytes accessed\n");
	fprintf(out, "%10s |%-*s|\n", "time (s)", HEATMAP_COLUMNS, "");
	for (int r = 0; r < m->rows; r++) {
		const char *sep = " ";

		fprintf(out, "%10.3f |", (double)m->row_t_ns[r] / 1e9);
		for (int c = 0; c < HEATMAP_COLUMNS; c++)
			fputc(cell_char(cell(m, r, c)), out);
		fputc('|', out);
		/* Labels from this row's time up to the next row's. */
		for (size_t i = 0; i < in->nr_labels; i++) {
			uint64_t t = in->labels[i].t_ns;
			bool here = (r == 0 || t >= m->row_t_ns[r]) && (r == m->rows - 1 || t < m->row_t_ns[r + 1]);

			if (here) {
				fprintf(out, "%s<- %s", sep, in->labels[i].text);
				sep = ", ";
			}
		}
		fputc('\n', out);
	}
}

static void json_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The map as the plot script reads it ("benchmark": "damon-heatmap"). */
static void write_json(const struct heat_input *in, const struct heat_map *m, FILE *f, const char *path)
{
	fprintf(f, "{\"benchmark\":\"damon-heatmap\",\"file\":");
	json_text(f, path);
	fprintf(f, ",\"low\":%" PRIu64 ",\"column_bytes\":%" PRIu64 ",\"columns\":%d,\"nodes\":[", m->low,
		m->column_bytes, HEATMAP_COLUMNS);
	for (int n = 0, first = 1; n < 64; n++)
		if (m->nodes >> n & 1) {
			fprintf(f, "%s{\"node\":%d,\"start\":%" PRIu64 ",\"end\":%" PRIu64 "}", first ? "" : ",", n,
				m->node_low[n], m->node_high[n]);
			first = 0;
		}
	fprintf(f, "],\"rows\":[");
	for (int r = 0; r < m->rows; r++) {
		fprintf(f, "%s{\"t\":%.6f,\"rates\":[", r ? "," : "", (double)m->row_t_ns[r] / 1e9);
		for (int c = 0; c < HEATMAP_COLUMNS; c++) {
			double v = cell(m, r, c);

			if (v < 0)
				fprintf(f, "%snull", c ? "," : "");
			else
				fprintf(f, "%s%.6f", c ? "," : "", 100 * v);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\"labels\":[");
	for (size_t i = 0; i < in->nr_labels; i++) {
		fprintf(f, "%s{\"t\":%.6f,\"text\":", i ? "," : "", (double)in->labels[i].t_ns / 1e9);
		json_text(f, in->labels[i].text);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}

static int draw(const struct heat_input *in, const struct heat_map *m, const char *path, const char *plot_path,
		struct ms_error *err)
{
	const char *dot = strrchr(plot_path, '.');
	char script_buf[4200], json_path[4200], prefix[4200], why[512];
	const char *script = plot_script_path(MEMSCOPE_SOURCE_DIR, MEMSCOPE_DATADIR, script_buf, sizeof(script_buf));
	const char *tmp = getenv("TMPDIR");
	int fd, drawn;
	FILE *f;

	if (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg"))) {
		ms_error_set(err, "--plot %s: the name ends in .png or .svg, which says the format", plot_path);
		return -1;
	}
	if (!script) {
		ms_error_set(err, "--plot: plot.py was not found (set MEMSCOPE_BENCH_PLOT to its path)");
		return -1;
	}
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(dot - plot_path), plot_path);
	snprintf(json_path, sizeof(json_path), "%s/memscope-heatmap-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if ((fd = mkstemp(json_path)) < 0 || !(f = fdopen(fd, "w"))) {
		ms_error_set(err, "--plot: cannot make a temporary file in %s: %s (set TMPDIR)",
			     tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(json_path);
		}
		return -1;
	}
	write_json(in, m, f, path);
	if (fclose(f) != 0) {
		ms_error_set(err, "--plot: cannot write %s: %s", json_path, strerror(errno));
		unlink(json_path);
		return -1;
	}
	/* As memscope bench draws (util/plot_launch.h). */
	drawn = plot_draw(MEMSCOPE_SOURCE_DIR, MEMSCOPE_DATADIR, json_path, prefix, dot + 1, why, sizeof(why));
	if (drawn < 0)
		ms_error_set(err, "--plot: %s", why);
	unlink(json_path);
	return drawn;
}

int damon_heatmap_report(const char *path, int node, FILE *out, const char *plot_path, struct ms_error *err)
{
	struct heat_input in = { 0 };
	struct heat_map m = { 0 };
	int status = 1;

	if (read_input(path, node, &in, err) < 0)
		goto out;
	if (!in.nr && node >= 0 && in.all_nodes) {
		char list[256] = "";

		for (int n = 0; n < 64; n++)
			if (in.all_nodes >> n & 1)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d", list[0] ? ", " : "", n);
		ms_error_set(err, "--node %d: no region of %s covers node %d's memory; its regions are on node(s) %s",
			     node, path, node, list);
		goto out;
	}
	if (!in.nr && in.virtual_regions) {
		ms_error_set(err, "%s holds DAMON regions of processes' virtual memory only (%llu; recorded with -p or "
			     "-- CMD): the heat map draws physical memory: record with -a (report --sort obj gives "
			     "each data object's hot share from these)", path, (unsigned long long)in.virtual_regions);
		goto out;
	}
	if (!in.nr) {
		ms_error_set(err, "%s holds no DAMON region records: record with a damon series (record -a -e "
			     "damon.accessed_bytes, or -m 'damon.*') while a kdamond runs (memscope doctor)", path);
		goto out;
	}
	if (build(&in, &m, err) < 0)
		goto out;
	print_text(&in, &m, out, path);
	if (plot_path && draw(&in, &m, path, plot_path, err) < 0)
		goto out;
	status = 0;
out:
	heat_map_free(&m);
	free(in.regions);
	free(in.labels);
	return status;
}
