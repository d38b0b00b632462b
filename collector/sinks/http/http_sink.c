/* The HTTP sink (http_sink.h). What is where:
 * - What the page charts (struct column), /metrics' running totals (struct
 *   series_live, ended_series, metric_state) and struct http_sink.
 * - Series state: naming a series for Prometheus, growing with the table.
 * - Columns: the page's columns, built from the plan and the first frame.
 * - The sink (on the sink thread): http_open; rows and batches for the
 *   stream (column_value, flush); the process table (write_processes,
 *   place_processes); totals and ended series (update_totals, keep_ended,
 *   fold_oldest); the sink_ops (http_frame, http_series, http_event, http_end).
 * - Answers (on the server's threads): /metrics (copied under the lock by
 *   copy_series, rendered by render_self/render_metrics/render_series),
 *   /api/session and /api/totals (answer_json), /api/stream, control;
 *   http_sink_init registers the routes. */
#include "sinks/http/http_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "sinks/http/http_stream.h"
#include "sinks/http/mhd_api.h"
#include "sinks/http/prom_processes.h"
#include "sinks/http/prom_text.h"
#include "util/text_buf.h"
#include "util/array.h"

/* ---- What the page charts: columns ---- */

enum column_kind { COLUMN_METRIC, COLUMN_EVENT };

struct column {
	enum column_kind kind;
	int plan_metric;              /* COLUMN_METRIC */
	enum metric_scope scope;
	int scope_index;
	int *members;                 /* COLUMN_EVENT: series summed */
	int nr_members;
	const char *group;            /* metric or event name */
	char label[96];               /* "node 0", "socket 1", "uncore_imc_0 (cpu 0)", "all" */
	const char *unit;
	const char *kind_name;        /* counter, gauge, ratio */
	double scale;
	bool whole_system;            /* counts the whole machine though the target is a command or PIDs */
};

/* ---- /metrics: running totals ---- */

struct series_live {
	double total;                 /* counters: scaled values added up since the series started */
	double last;                  /* gauges: the latest value */
	bool seen;                    /* a valid value came */
	bool alive;
	bool retiring;                /* its last values are in the next frame */
	struct prom_name pn;
	bool pmu_event;               /* exported as memscope_pmu_events{event=...} */
	bool own_series;              /* a process series with a place of its own in /metrics */
	double baseline;              /* counters: its total when it got the place */
	uint64_t since_ns;            /* frame time of its first value (process series) */
	/* This batch (process table). */
	double batch;
	bool batch_seen;
	double first_s;               /* run time of its first value */
};

/* A per-process series that ended (its process exited): what it counted,
 * kept after its index goes to another series, for the process table of
 * its last period and the run's totals (/api/totals). */
struct ended_series {
	int pid;
	char comm[16];
	char key[80];                 /* name, "@nodeN" per node */
	enum series_kind kind;
	double scale;
	double total, last;           /* counters: sum; gauges: last value */
	double batch;
	bool batch_seen, seen;
	double first_s, end_s;
};

struct metric_state {
	double total, last;
	bool seen;
};

struct http_sink {
	struct http_sink_options opt;
	struct http_server *server;
	struct http_stream *stream;
	const struct sink_setup *setup;
	char **na, **na_why;        /* metrics not counted here, and why */
	int nr_na;

	/* Guarded by lock: what the server reads. */
	pthread_mutex_t lock;
	bool opened, ended, paused;
	bool columns_ready;           /* the page's columns are known (after the first frame) */
	char end_reason[128];
	struct series_live *series;
	int nr_series, cap_series;
	struct metric_state *metrics; /* plan metric x every scope, in metric_slot() order */
	int nr_metric_slots;
	int scope_base[4];            /* first slot of each scope kind, per metric */
	int scopes_per_metric;
	uint64_t frames, frames_merged;
	uint64_t last_seq, last_time_ns, interval_ns;
	uint64_t batches;
	double start_unix;            /* wall clock of the run's start (a recording's own), 0: unknown */
	bool procs_seen;              /* per-process series have had values */
	struct prom_processes places; /* the processes with series of their own in /metrics */
	struct prom_activity *acts;   /* scratch: this frame's processes */
	struct proc_ref *refs;        /* scratch: their series, by pid */
	int cap_acts;

	/* The sink thread's own. */
	struct column *columns;
	int nr_columns;
	struct text_buf batch;
	int batch_frames;
	uint64_t batch_start_ns;
	struct text_buf events;
	uint64_t proc_since_ns;       /* start of the process table's period */
	bool proc_started;
	int *retiring;
	int nr_retiring, cap_retiring;
	/* Guarded by lock. */
	struct ended_series *ended_series;
	int nr_ended, cap_ended;
	int ended_shown;              /* ended_series[0 .. ended_shown) are in a process table already */
	/* Ended series beyond opt.ended_max, added up per key (name@node). */
	struct folded {
		char key[80];
		double total;
	} *folded;
	int nr_folded;
	uint64_t folded_series;
	int faults_series;            /* proc.faults of the whole target, or -1 */
	/* live --input: the recording, reopened from the reader's descriptor. The
	 * page reads it with the same code as a file dropped on it (recording.js);
	 * the stream then carries the catalog metrics alone, which take this
	 * host's catalog and the recorded host. -1: not a replayed recording. */
	int recording_fd;
};

/* The stream has the page's whole rows (events and process tables), not
 * only the metrics the page adds to what it reads from the recording. */
static bool streams_events(const struct http_sink *h)
{
	return h->recording_fd < 0;
}

static int metric_slot(const struct http_sink *h, int plan_metric, enum metric_scope scope, int index)
{
	return plan_metric * h->scopes_per_metric + h->scope_base[scope] + index;
}

/* ---- Series state ---- */

static void name_series(struct http_sink *h, int i)
{
	const struct series *s = &h->setup->table->series[i];
	struct series_live *st = &h->series[i];
	enum prom_type type = s->kind == SERIES_COUNTER ? PROM_COUNTER : PROM_GAUGE;

	st->pmu_event = strchr(s->name, '/') != NULL;
	prom_name_of(st->pmu_event ? "pmu_events" : s->name, s->unit, s->scale, type, &st->pn);
}

static int fit_series(struct http_sink *h, int nr)
{
	if (nr <= h->cap_series) {
		if (nr > h->nr_series)
			h->nr_series = nr;
		return 0;
	}
	int cap = h->cap_series ? h->cap_series : 64;
	struct series_live *n;

	while (cap < nr)
		cap *= 2;
	n = realloc(h->series, (size_t)cap * sizeof(*n));
	if (!n)
		return -1;
	memset(n + h->cap_series, 0, (size_t)(cap - h->cap_series) * sizeof(*n));
	h->series = n;
	h->cap_series = cap;
	h->nr_series = nr;
	return 0;
}

static void start_series(struct http_sink *h, int i)
{
	struct series_live *st = &h->series[i];

	memset(st, 0, sizeof(*st));
	st->alive = h->setup->table->series[i].state != SERIES_RETIRED;
	name_series(h, i);
}

/* ---- Columns ---- */

static const char *scope_word(enum metric_scope scope)
{
	static const char *const words[] = { "system", "node", "socket", "channel" };

	return words[scope];
}

static int add_column(struct http_sink *h, const struct column *c)
{
	struct column *n = realloc(h->columns, (size_t)(h->nr_columns + 1) * sizeof(*n));

	if (!n)
		return -1;
	h->columns = n;
	h->columns[h->nr_columns++] = *c;
	return 0;
}

static bool is_plan_event(const struct metric_plan *plan, const char *name)
{
	for (int e = 0; plan && e < plan->nr_events; e++)
		if (!strcmp(plan->events[e].text, name))
			return true;
	return false;
}

static int build_columns(struct http_sink *h)
{
	const struct sink_setup *su = h->setup;
	const struct series_table *t = su->table;

	/* Catalog metrics asked for, in every scope this host has. */
	for (int m = 0; su->plan && m < su->plan->nr_metrics; m++) {
		const struct plan_metric *pm = &su->plan->metrics[m];
		const struct catalog_metric *cm = &su->plan->cat->metrics[pm->metric];

		if (!pm->requested)
			continue;
		for (int sc = SCOPE_SYSTEM; sc <= SCOPE_CHANNEL; sc++) {
			int n = metric_engine_nr_scopes(su->engine, (enum metric_scope)sc);

			for (int i = 0; i < n; i++) {
				struct column c = {
					.kind = COLUMN_METRIC, .plan_metric = m, .scope = (enum metric_scope)sc,
					.scope_index = i, .group = cm->name, .unit = cm->unit,
					.kind_name = metric_kind_name(cm->kind), .scale = 1,
					.whole_system = su->task_target && metric_plan_whole_system(su->plan, m, t),
				};

				if (sc == SCOPE_SYSTEM)
					snprintf(c.label, sizeof(c.label), "all");
				else if (sc == SCOPE_CHANNEL) {
					const struct metric_channel *ch = metric_engine_channel(su->engine, i);

					snprintf(c.label, sizeof(c.label), "%s (cpu %d)", ch->instance, ch->cpu);
				} else
					snprintf(c.label, sizeof(c.label), "%s %d", scope_word((enum metric_scope)sc),
						 metric_engine_scope_id(su->engine, (enum metric_scope)sc, i));
				if (add_column(h, &c) < 0)
					return -1;
			}
		}
	}
	/* Events (not a metric's raw inputs, not per process), summed per node. */
	for (int i = 0; streams_events(h) && i < t->nr; i++) {
		const struct series *s = &t->series[i];
		int found = -1;

		if (series_is_per_task(s) || s->unavailable || s->state == SERIES_RETIRED ||
		    is_plan_event(su->plan, s->name))
			continue;
		for (int c = 0; c < h->nr_columns; c++) {
			const struct column *col = &h->columns[c];

			if (col->kind == COLUMN_EVENT && !strcmp(col->group, s->name) &&
			    t->series[col->members[0]].labels.node == s->labels.node) {
				found = c;
				break;
			}
		}
		if (found < 0) {
			struct column c = {
				.kind = COLUMN_EVENT, .group = s->name, .unit = s->unit,
				.kind_name = s->kind == SERIES_COUNTER ? "counter" : "gauge", .scale = s->scale,
				.whole_system = su->task_target && s->labels.whole_system,
			};

			if (s->labels.node != LABEL_NONE)
				snprintf(c.label, sizeof(c.label), "node %d", s->labels.node);
			else
				snprintf(c.label, sizeof(c.label), "all");
			if (add_column(h, &c) < 0)
				return -1;
			found = h->nr_columns - 1;
		}
		struct column *col = &h->columns[found];
		int *m = realloc(col->members, (size_t)(col->nr_members + 1) * sizeof(int));

		if (!m)
			return -1;
		col->members = m;
		col->members[col->nr_members++] = i;
	}
	return 0;
}

/* ---- The sink ---- */

static int http_open(struct sink *sink, const struct sink_setup *setup, struct ms_error *err)
{
	struct http_sink *h = sink->priv;
	const struct series_table *t = setup->table;
	struct timespec now;
	int nr_slots = 0;

	pthread_mutex_lock(&h->lock);
	h->setup = setup;
	h->interval_ns = setup->interval_ns;
	/* Frame times count from the run's start: a recording's is in its
	 * header (0 without one: the page shows seconds from the start), a
	 * live run's or a replay's is now. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (setup->origin && !strcmp(setup->origin, "recording"))
		h->start_unix = (double)setup->start_unix_ns / 1e9;
	else
		h->start_unix = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	if (fit_series(h, t->nr) < 0)
		goto oom;
	for (int i = 0; i < t->nr; i++)
		start_series(h, i);
	if (setup->engine) {
		for (int sc = SCOPE_SYSTEM; sc <= SCOPE_CHANNEL; sc++) {
			h->scope_base[sc] = nr_slots;
			nr_slots += metric_engine_nr_scopes(setup->engine, (enum metric_scope)sc);
		}
		h->scopes_per_metric = nr_slots;
		h->nr_metric_slots = nr_slots * setup->plan->nr_metrics;
		h->metrics = calloc((size_t)h->nr_metric_slots + 1, sizeof(*h->metrics));
		if (!h->metrics)
			goto oom;
	}
	if (build_columns(h) < 0)
		goto oom;
	h->opened = true;
	pthread_mutex_unlock(&h->lock);
	return 0;
oom:
	pthread_mutex_unlock(&h->lock);
	ms_error_set(err, "out of memory");
	return -1;
}

static void number(struct text_buf *b, double v)
{
	char num[40];

	prom_format_double(v, num, sizeof(num));
	text_buf_add(b, num, strlen(num));
}

static void json_text(struct text_buf *b, const char *s)
{
	json_t *str = json_string(s);
	char *text = str ? json_dumps(str, JSON_ENCODE_ANY) : NULL;

	text_buf_add(b, text ? text : "\"\"", text ? strlen(text) : 2);
	free(text);
	json_decref(str);
}

/* The column's value in this frame; false when it has none. */
static bool column_value(const struct http_sink *h, const struct column *c, const struct sink_frame *f, double *v)
{
	if (c->kind == COLUMN_METRIC) {
		const struct metric_value *mv;

		if (!f->metrics)
			return false;
		mv = metric_engine_value(h->setup->engine, f->metrics, c->plan_metric, c->scope, c->scope_index);
		*v = mv->value;
		return mv->valid;
	}
	bool any = false;

	*v = 0;
	for (int i = 0; i < c->nr_members; i++) {
		const struct sample *s;
		const struct series *se = &h->setup->table->series[c->members[i]];

		if (c->members[i] >= f->frame->nr)
			continue;
		s = &f->frame->samples[c->members[i]];
		if (!s->valid)
			continue;
		*v += (se->kind == SERIES_COUNTER ? sample_scaled(s) : (double)s->value) * se->scale;
		any = true;
	}
	return any;
}

/* A live process series, for choosing which processes /metrics shows. */
struct proc_ref {
	int pid;
	int index;
};

static int by_ref_pid(const void *a, const void *b)
{
	const struct proc_ref *x = a, *y = b;

	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : (x->index < y->index ? -1 : x->index > y->index);
}

/* One value of the process table: a live or an ended series of a process. */
struct proc_item {
	int pid;
	const char *comm;
	char key[80];                 /* name, "@nodeN" per node */
	bool counter;
	double value;                 /* shown units */
};

static int by_pid(const void *a, const void *b)
{
	const struct proc_item *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

struct proc_row {
	int pid;
	const char *comm;
	int first;                    /* in items */
	int count;
	double key;
};

static int by_key(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	return x->key != y->key ? (x->key > y->key ? -1 : 1) : (x->pid > y->pid) - (x->pid < y->pid);
}

static void series_key(const struct series *s, char *key, size_t size)
{
	if (s->labels.node != LABEL_NONE)
		snprintf(key, size, "%s@node%d", s->name, s->labels.node);
	else
		snprintf(key, size, "%s", s->name);
}

static bool per_process(const struct series *s)
{
	return s->labels.pid != LABEL_NONE && s->labels.tid == LABEL_NONE;
}

/* The process table of the period: per process (pid series, not threads),
 * each series' value - counters added up over the period, gauges the
 * latest - under the series' name ("proc.pages_alloc@node1" per node).
 * Processes that exited during the period are in it with what they did. */
static void write_processes(struct http_sink *h, struct text_buf *b, uint64_t now_ns)
{
	const struct series_table *t = h->setup->table;
	int new_ended = h->nr_ended - h->ended_shown;
	struct proc_item *items = malloc((size_t)(h->nr_series + new_ended + 1) * sizeof(*items));
	struct proc_row *rows = malloc((size_t)(h->nr_series + new_ended + 1) * sizeof(*rows));
	char (*names)[80] = malloc(64 * sizeof(*names));
	int nr_items = 0, nr_rows = 0, nr_names = 0;

	if (!items || !rows || !names)
		goto out;
	pthread_mutex_lock(&h->lock);
	/* Only those that ended in this period have values in it. */
	for (int k = h->ended_shown; k < h->nr_ended; k++) {
		struct ended_series *e = &h->ended_series[k];

		if (!e->batch_seen)
			continue;
		items[nr_items] = (struct proc_item){ e->pid, e->comm, "", e->kind == SERIES_COUNTER, e->batch * e->scale };
		snprintf(items[nr_items++].key, sizeof(items[0].key), "%s", e->key);
		e->batch_seen = false;
	}
	h->ended_shown = h->nr_ended;
	pthread_mutex_unlock(&h->lock);
	for (int i = 0; i < h->nr_series; i++) {
		const struct series *s = &t->series[i];

		if (!h->series[i].batch_seen || !per_process(s))
			continue;
		items[nr_items] = (struct proc_item){ s->labels.pid, s->labels.comm, "", s->kind == SERIES_COUNTER,
						      h->series[i].batch * s->scale };
		series_key(s, items[nr_items++].key, sizeof(items[0].key));
	}
	/* Stable: a process's ended series (its earlier comm) before its live ones. */
	for (int i = 1; i < nr_items; i++)
		for (int j = i; j > 0 && by_pid(&items[j - 1], &items[j]) > 0; j--) {
			struct proc_item swap = items[j];

			items[j] = items[j - 1];
			items[j - 1] = swap;
		}
	for (int r = 0; r < nr_items; r++) {
		int n;

		if (!nr_rows || rows[nr_rows - 1].pid != items[r].pid)
			rows[nr_rows++] = (struct proc_row){ items[r].pid, items[r].comm, r, 0, 0 };
		rows[nr_rows - 1].count++;
		rows[nr_rows - 1].comm = items[r].comm;   /* the latest name */
		for (n = 0; n < nr_names && strcmp(names[n], items[r].key); n++)
			;
		if (n == nr_names && nr_names < 64)
			snprintf(names[nr_names++], sizeof(names[0]), "%s", items[r].key);
		/* The busiest first: by the first counter named (proc.faults). */
		if (n == 0 && items[r].counter)
			rows[nr_rows - 1].key += items[r].value;
	}
	qsort(rows, (size_t)nr_rows, sizeof(*rows), by_key);
	if (!nr_rows)
		goto out;
	text_buf_printf(b, ",\"p\":{\"d\":%" PRIu64 ",\"all\":%d,\"n\":[", (now_ns - h->proc_since_ns + 500000) / 1000000,
			nr_rows);
	for (int n = 0; n < nr_names; n++) {
		if (n)
			text_buf_addc(b, ',');
		json_text(b, names[n]);
	}
	text_buf_add(b, "],\"r\":[", 7);
	for (int r = 0; r < nr_rows && r < HTTP_PROC_ROWS; r++) {
		text_buf_printf(b, "%s[%d,", r ? "," : "", rows[r].pid);
		json_text(b, rows[r].comm);
		for (int n = 0; n < nr_names; n++) {
			double sum = 0;
			bool found = false;

			text_buf_addc(b, ',');
			/* A pid whose comm changed (exec) has a series of each name: counters add up. */
			for (int k = rows[r].first; k < rows[r].first + rows[r].count; k++)
				if (!strcmp(items[k].key, names[n])) {
					sum = items[k].counter ? sum + items[k].value : items[k].value;
					found = true;
				}
			if (found)
				number(b, sum);
			else
				text_buf_add(b, "null", 4);
		}
		text_buf_addc(b, ']');
	}
	text_buf_add(b, "]}", 2);
out:
	for (int i = 0; i < h->nr_series; i++) {
		h->series[i].batch = 0;
		h->series[i].batch_seen = false;
	}
	free(items);
	free(rows);
	free(names);
}

/* Close the batch: frames, events, (once a second) processes, into the ring. */
static void flush(struct http_sink *h, uint64_t now_ns, bool force_procs, const char *end)
{
	struct text_buf b = { 0 };
	bool procs = streams_events(h) && h->proc_started &&
		     (force_procs || now_ns - h->proc_since_ns >= HTTP_PROC_PERIOD_NS);

	if (!h->batch_frames && !h->events.len && !end)
		return;
	text_buf_add(&b, "{\"f\":[", 6);
	if (h->batch.len)
		text_buf_add(&b, h->batch.text, h->batch.len);
	text_buf_addc(&b, ']');
	if (h->events.len) {
		text_buf_add(&b, ",\"e\":[", 6);
		text_buf_add(&b, h->events.text, h->events.len);
		text_buf_addc(&b, ']');
	}
	if (procs) {
		write_processes(h, &b, now_ns);
		h->proc_since_ns = now_ns;
	}
	if (end) {
		text_buf_add(&b, ",\"end\":", 7);
		json_text(&b, end);
	}
	text_buf_addc(&b, '}');
	if (!b.failed)
		http_stream_put(h->stream, b.text, b.len);
	text_buf_free(&b);
	text_buf_clear(&h->batch);
	text_buf_clear(&h->events);
	h->batch_frames = 0;
	pthread_mutex_lock(&h->lock);
	h->batches++;
	pthread_mutex_unlock(&h->lock);
}

/* A process's series (not a thread's). */
static bool process_series(const struct series *s)
{
	return per_process(s);
}

/* The series of a per-process event that counts every process together
 * ("proc.faults" without a pid): /metrics shows it as pid="other", what
 * the processes with series of their own leave. */
static bool process_total(const struct series *s)
{
	return s->labels.pid == LABEL_NONE && !strncmp(s->name, "proc.", 5);
}

/* After the frame's values are added: which processes have series of their
 * own (prom_processes.h), and where their counts start. */
static void place_processes(struct http_sink *h, const struct frame *fr)
{
	const struct series_table *t = h->setup->table;
	int nr = 0;
	bool faults = false;

	if (!h->procs_seen)
		return;
	if (h->cap_acts < h->nr_series) {
		struct prom_activity *n = realloc(h->acts, (size_t)h->nr_series * sizeof(*n));
		struct proc_ref *r = n ? realloc(h->refs, (size_t)h->nr_series * sizeof(*r)) : NULL;

		if (n)
			h->acts = n;
		if (!r)
			return;
		h->refs = r;
		h->cap_acts = h->nr_series;
	}
	for (int i = 0; i < h->nr_series; i++)
		if (process_series(&t->series[i]) && !strcmp(t->series[i].name, "proc.faults"))
			faults = true;
	int nr_refs = 0;

	for (int i = 0; i < h->nr_series; i++)
		if (process_series(&t->series[i]) && h->series[i].alive)
			h->refs[nr_refs++] = (struct proc_ref){ t->series[i].labels.pid, i };
	qsort(h->refs, (size_t)nr_refs, sizeof(*h->refs), by_ref_pid);
	for (int r = 0; r < nr_refs; r++) {
		int i = h->refs[r].index;
		const struct series *s = &t->series[i];
		const struct sample *v = i < fr->nr ? &fr->samples[i] : NULL;

		if (!h->series[i].since_ns)
			h->series[i].since_ns = fr->time_ns;
		if (!nr || h->acts[nr - 1].pid != s->labels.pid)
			h->acts[nr++] = (struct prom_activity){ s->labels.pid, 0, h->series[i].since_ns };
		if (h->series[i].since_ns < h->acts[nr - 1].since_ns)
			h->acts[nr - 1].since_ns = h->series[i].since_ns;
		if (v && v->valid && s->kind == SERIES_COUNTER && (!faults || !strcmp(s->name, "proc.faults")))
			h->acts[nr - 1].busy += sample_scaled(v);
	}
	prom_processes_update(&h->places, h->acts, nr, fr->time_ns,
			      h->setup->system_wide ? PROM_PROCESS_MIN_AGE_NS : 0);
	for (int i = 0; i < h->nr_series; i++) {
		struct series_live *st = &h->series[i];
		bool own = process_series(&t->series[i]) && prom_processes_has(&h->places, t->series[i].labels.pid);

		/* Counted from this frame on: what came before stays in "other",
		 * which so never goes down (this frame's counts were not in it). */
		if (own && !st->own_series) {
			const struct sample *v = i < fr->nr ? &fr->samples[i] : NULL;

			st->baseline = st->total - (v && v->valid && t->series[i].kind == SERIES_COUNTER ? sample_scaled(v) : 0);
		}
		st->own_series = own;
	}
}

/* The older half of the ended series, those already in a process table,
 * are added up per key: a long-running exporter keeps bounded memory and
 * its totals still add up. */
static void fold_oldest(struct http_sink *h)
{
	int kept = 0;

	for (int k = 0; k < h->nr_ended; k++) {
		struct ended_series *e = &h->ended_series[k];
		int f;

		if (k >= h->nr_ended / 2 || e->batch_seen) {
			h->ended_series[kept++] = *e;
			continue;
		}
		for (f = 0; f < h->nr_folded && strcmp(h->folded[f].key, e->key); f++)
			;
		if (f == h->nr_folded) {
			struct folded *grown = realloc(h->folded, (size_t)(h->nr_folded + 1) * sizeof(*grown));

			if (!grown) {
				h->ended_series[kept++] = *e;
				continue;
			}
			h->folded = grown;
			snprintf(h->folded[h->nr_folded++].key, sizeof(h->folded[0].key), "%s", e->key);
			h->folded[f].total = 0;
		}
		if (e->kind == SERIES_COUNTER && e->seen)
			h->folded[f].total += e->total * e->scale;
		h->folded_series++;
	}
	h->nr_ended = kept;
	/* Those not yet shown were kept, last: they are the last ones. */
	h->ended_shown = kept;
	for (int k = 0; k < kept; k++)
		if (h->ended_series[k].batch_seen) {
			h->ended_shown = k;
			break;
		}
}

/* A process's series ends (this frame holds its last values): what it
 * counted stays for the process table and the run's totals, after its index
 * goes to another series. Without memory it is left out of them. */
static void keep_ended(struct http_sink *h, int i, double end_s)
{
	const struct series *s = &h->setup->table->series[i];
	const struct series_live *st = &h->series[i];
	struct ended_series *e;

	if (!per_process(s) || !st->alive)
		return;
	if (h->nr_ended >= (h->opt.ended_max > 0 ? h->opt.ended_max : HTTP_ENDED_MAX))
		fold_oldest(h);
	if (h->nr_ended == h->cap_ended) {
		int cap = h->cap_ended ? 2 * h->cap_ended : 64;
		struct ended_series *grown = realloc(h->ended_series, (size_t)cap * sizeof(*grown));

		if (!grown)
			return;
		h->ended_series = grown;
		h->cap_ended = cap;
	}
	e = &h->ended_series[h->nr_ended++];
	memset(e, 0, sizeof(*e));
	e->pid = s->labels.pid;
	snprintf(e->comm, sizeof(e->comm), "%s", s->labels.comm);
	series_key(s, e->key, sizeof(e->key));
	e->kind = s->kind;
	e->scale = s->scale > 0 ? s->scale : 1.0;
	e->total = st->total;
	e->last = st->last;
	e->batch = st->batch;
	e->batch_seen = st->batch_seen;
	e->seen = st->seen;
	e->first_s = st->first_s;
	e->end_s = end_s;
	/* The period's value is the ended entry's now: the index shows it no more. */
	h->series[i].batch = 0;
	h->series[i].batch_seen = false;
}

static void update_totals(struct http_sink *h, const struct sink_frame *f)
{
	const struct frame *fr = f->frame;
	const struct series_table *t = h->setup->table;

	for (int i = 0; i < fr->nr && i < h->nr_series; i++) {
		const struct sample *s = &fr->samples[i];
		struct series_live *st = &h->series[i];

		if (!st->alive || !s->valid)
			continue;
		if (t->series[i].kind == SERIES_COUNTER) {
			double v = sample_scaled(s);

			st->total += v;
			st->batch += v;
		} else {
			st->last = (double)s->value;
			st->batch = st->last;
		}
		if (!st->seen)
			st->first_s = (double)fr->time_ns / 1e9;
		st->seen = st->batch_seen = true;
		if (t->series[i].labels.pid != LABEL_NONE)
			h->procs_seen = true;
	}
	for (int m = 0; f->metrics && m < h->setup->plan->nr_metrics; m++) {
		const struct catalog_metric *cm = &h->setup->plan->cat->metrics[h->setup->plan->metrics[m].metric];

		for (int sc = SCOPE_SYSTEM; sc <= SCOPE_CHANNEL; sc++) {
			int n = metric_engine_nr_scopes(h->setup->engine, (enum metric_scope)sc);

			for (int i = 0; i < n; i++) {
				const struct metric_value *mv = metric_engine_value(h->setup->engine, f->metrics, m,
										    (enum metric_scope)sc, i);
				struct metric_state *ms = &h->metrics[metric_slot(h, m, (enum metric_scope)sc, i)];

				if (!mv->valid)
					continue;
				if (cm->kind == METRIC_COUNTER)
					ms->total += mv->value;
				ms->last = mv->value;
				ms->seen = true;
			}
		}
	}
	for (int r = 0; r < h->nr_retiring; r++)
		if (h->retiring[r] < h->nr_series) {
			keep_ended(h, h->retiring[r], (double)fr->time_ns / 1e9);
			h->series[h->retiring[r]].alive = false;
		}
	place_processes(h, fr);
	h->nr_retiring = 0;
	h->frames++;
	h->frames_merged += f->merged > 1 ? f->merged : 0;
	h->last_seq = fr->seq;
	h->last_time_ns = fr->time_ns;
}

/* A metric that has no counter in a scope (a system-wide kernel statistic
 * per node) has no column there: the first frame's values say which. */
static void prune_columns(struct http_sink *h, const struct sink_frame *f)
{
	int kept = 0;

	for (int c = 0; c < h->nr_columns; c++) {
		struct column *col = &h->columns[c];

		if (col->kind == COLUMN_METRIC && col->scope != SCOPE_SYSTEM && f->metrics) {
			const struct metric_value *mv = metric_engine_value(h->setup->engine, f->metrics, col->plan_metric,
									    col->scope, col->scope_index);

			if (!mv->valid && mv->why_code == METRIC_WHY_NOT_IN_SCOPE) {
				free(col->members);
				continue;
			}
		}
		h->columns[kept++] = *col;
	}
	h->nr_columns = kept;
}

static int http_frame(struct sink *sink, const struct sink_frame *f)
{
	struct http_sink *h = sink->priv;
	const struct frame *fr = f->frame;

	pthread_mutex_lock(&h->lock);
	if (fit_series(h, fr->nr) == 0)
		update_totals(h, f);
	if (!h->columns_ready) {
		prune_columns(h, f);
		h->columns_ready = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (!h->proc_started) {
		h->proc_started = true;
		h->proc_since_ns = fr->time_ns - fr->interval_ns;
	}
	if (!h->batch_frames)
		h->batch_start_ns = fr->time_ns - fr->interval_ns;
	/* [seq, t ms, d us, columns...] */
	text_buf_printf(&h->batch, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64, h->batch_frames ? "," : "", fr->seq,
			(fr->time_ns + 500000) / 1000000, (fr->interval_ns + 500) / 1000);
	for (int c = 0; c < h->nr_columns; c++) {
		double v;

		text_buf_addc(&h->batch, ',');
		if (column_value(h, &h->columns[c], f, &v))
			number(&h->batch, v);
		else
			text_buf_add(&h->batch, "null", 4);
	}
	text_buf_addc(&h->batch, ']');
	h->batch_frames++;
	/* A file goes out in large batches, but never more than a second of
	 * its time when it has processes: their table comes every second of
	 * the replay, as a live run's has. (A recording's own rows and tables
	 * are the page's reader's: its stream holds the metrics alone.) */
	if (h->setup->from_file ? h->batch.len >= HTTP_BATCH_BYTES ||
				  (h->procs_seen && fr->time_ns - h->proc_since_ns >= HTTP_PROC_PERIOD_NS)
				: fr->time_ns - h->batch_start_ns >= HTTP_BATCH_NS)
		flush(h, fr->time_ns, false, NULL);
	else if (f->last)
		flush(h, fr->time_ns, true, NULL);
	return 0;
}

static void http_series(struct sink *sink, const struct series_table *table, const struct series_changes *changes)
{
	struct http_sink *h = sink->priv;
	int top = 0;

	for (int a = 0; a < changes->nr_added; a++)
		if (changes->added[a] + 1 > top)
			top = changes->added[a] + 1;
	pthread_mutex_lock(&h->lock);
	if (fit_series(h, top) == 0)
		for (int a = 0; a < changes->nr_added; a++)
			start_series(h, changes->added[a]);
	pthread_mutex_unlock(&h->lock);
	/* Retired series hold their last values in the coming frame. */
	if (h->nr_retiring + changes->nr_retired > h->cap_retiring) {
		int cap = h->nr_retiring + changes->nr_retired + 64;
		int *n = realloc(h->retiring, (size_t)cap * sizeof(int));

		if (!n)
			return;
		h->retiring = n;
		h->cap_retiring = cap;
	}
	for (int r = 0; r < changes->nr_retired; r++)
		h->retiring[h->nr_retiring++] = changes->retired[r];
	(void)table;
}

static int http_event(struct sink *sink, const struct sink_event *ev)
{
	struct http_sink *h = sink->priv;
	static const char *const kinds[] = {
		[SINK_EVENT_LABEL] = "label", [SINK_EVENT_PHASE_BEGIN] = "begin", [SINK_EVENT_PHASE_END] = "end",
		[SINK_EVENT_PAUSE] = "pause", [SINK_EVENT_RESUME] = "resume", [SINK_EVENT_INTERVAL] = "interval",
	};

	if (ev->kind > SINK_EVENT_INTERVAL)
		return 0;
	pthread_mutex_lock(&h->lock);
	if (ev->kind == SINK_EVENT_PAUSE || ev->kind == SINK_EVENT_RESUME)
		h->paused = ev->kind == SINK_EVENT_PAUSE;
	if (ev->kind == SINK_EVENT_INTERVAL)
		h->interval_ns = ev->interval_ns;
	pthread_mutex_unlock(&h->lock);
	text_buf_printf(&h->events, "%s{\"t\":%" PRIu64 ",\"k\":\"%s\"", h->events.len ? "," : "",
			(ev->time_ns + 500000) / 1000000, kinds[ev->kind]);
	if (ev->kind == SINK_EVENT_INTERVAL)
		text_buf_printf(&h->events, ",\"x\":%" PRIu64, ev->interval_ns / 1000000);
	else if (ev->kind != SINK_EVENT_PAUSE && ev->kind != SINK_EVENT_RESUME) {
		text_buf_add(&h->events, ",\"x\":", 5);
		json_text(&h->events, ev->text);
	}
	text_buf_addc(&h->events, '}');
	/* Events reach the page at once, not with the next batch. */
	flush(h, ev->time_ns, false, NULL);
	return 0;
}

static void http_end(struct sink *sink, const struct sink_end *end)
{
	struct http_sink *h = sink->priv;

	pthread_mutex_lock(&h->lock);
	h->ended = true;
	snprintf(h->end_reason, sizeof(h->end_reason), "%s", end->reason_text ? end->reason_text : "ended");
	pthread_mutex_unlock(&h->lock);
	flush(h, h->last_time_ns, true, h->end_reason);
}

/* The not-counted lists (either may be NULL; unset entries are NULL). */
static void free_na(char **names, char **whys, int nr)
{
	for (int i = 0; i < nr; i++) {
		if (names)
			free(names[i]);
		if (whys)
			free(whys[i]);
	}
	free(names);
	free(whys);
}

static void free_sink(struct http_sink *h)
{
	for (int c = 0; c < h->nr_columns; c++)
		free(h->columns[c].members);
	free(h->columns);
	free_na(h->na, h->na_why, h->nr_na);
	free(h->series);
	free(h->metrics);
	free(h->retiring);
	free(h->acts);
	free(h->refs);
	free(h->ended_series);
	free(h->folded);
	text_buf_free(&h->batch);
	text_buf_free(&h->events);
	if (h->recording_fd >= 0)
		close(h->recording_fd);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static void http_close(struct sink *sink)
{
	struct http_sink *h = sink->priv;

	if (!h)
		return;
	if (h->stream)
		http_stream_close(h->stream);
	http_server_stop(h->server);
	http_stream_free(h->stream);
	free_sink(h);
	sink->priv = NULL;
}

static const struct sink_ops http_sink_ops = {
	.name = "http",
	.open = http_open,
	.frame = http_frame,
	.event = http_event,
	.series = http_series,
	.end = http_end,
	.close = http_close,
};

/* ---- Answers ---- */

static enum MHD_Result not_ready(struct MHD_Connection *conn)
{
	return http_respond_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "memscope live is still starting");
}

struct series_order {
	const char *family;
	int index;
};

static int by_family(const void *a, const void *b)
{
	const struct series_order *x = a, *y = b;
	int c = strcmp(x->family, y->family);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static void int_label(char *buf, size_t size, int v)
{
	if (v == LABEL_NONE)
		buf[0] = '\0';
	else
		snprintf(buf, size, "%d", v);
}

/* What the processes without series of their own (and every process that
 * ended) counted: the total of series `total` less what the processes with
 * their own series, with the same name and labels, show. */
static double others(const struct http_sink *h, int total, enum prom_type type)
{
	const struct series_table *t = h->setup->table;
	const struct series *ts = &t->series[total];
	double v = type == PROM_COUNTER ? h->series[total].total : h->series[total].last;

	for (int i = 0; i < h->nr_series; i++) {
		const struct series *s = &t->series[i];
		const struct series_live *st = &h->series[i];

		if (!st->own_series || !st->alive || strcmp(s->name, ts->name) || s->labels.node != ts->labels.node ||
		    s->labels.socket != ts->labels.socket || s->labels.cpu != ts->labels.cpu ||
		    strcmp(s->labels.instance, ts->labels.instance))
			continue;
		v -= type == PROM_COUNTER ? st->total - st->baseline : st->last;
	}
	return v;
}

/* One sample of a series family in /metrics, as copied under the lock. */
struct prom_row {
	struct prom_name pn;
	enum prom_type type;
	double value;
	char *help;                   /* the family's help on its first row, else NULL */
	char *event;                  /* the event label (PMU events), else NULL */
	char cpu[16], node[16], socket[16], pid[16], tid[16];
	char instance[64], comm[16];
};

/* What /metrics shows, copied under the lock so that the page is rendered
 * after it is let go (the sink never waits for a scrape's formatting). */
struct prom_snapshot {
	bool ended;
	uint64_t frames, last_seq, last_time_ns, interval_ns;
	struct metric_state *metrics; /* nr_metric_slots, in metric_slot() order */
	struct prom_row *rows;
	int nr_rows;
	bool failed;
};

static void prom_snapshot_free(struct prom_snapshot *snap)
{
	for (int i = 0; i < snap->nr_rows; i++) {
		free(snap->rows[i].help);
		free(snap->rows[i].event);
	}
	free(snap->rows);
	free(snap->metrics);
}

/* The series rows, under the lock: which series show, in family order, each
 * with its labels and value. */
static void copy_series(struct http_sink *h, struct prom_snapshot *snap)
{
	const struct series_table *t = h->setup->table;
	struct series_order *order = malloc((size_t)(h->nr_series + 1) * sizeof(*order));
	int n = 0;
	const char *family = NULL;

	snap->rows = calloc((size_t)h->nr_series + 1, sizeof(*snap->rows));
	if (!order || !snap->rows) {
		free(order);
		snap->failed = true;
		return;
	}
	/* One aggregation level per family: threads have none; a process has
	 * its series only with a place of its own (prom_processes.h), and the
	 * family's total is shown as what the others leave (pid="other"). */
	for (int i = 0; i < h->nr_series; i++) {
		const struct series *s = &t->series[i];

		if (!h->series[i].alive || !h->series[i].seen || s->unavailable || s->labels.tid != LABEL_NONE ||
		    (s->labels.pid != LABEL_NONE && !h->series[i].own_series))
			continue;
		order[n++] = (struct series_order){ h->series[i].pn.family, i };
	}
	qsort(order, (size_t)n, sizeof(*order), by_family);
	for (int k = 0; k < n; k++) {
		const struct series *s = &t->series[order[k].index];
		const struct series_live *st = &h->series[order[k].index];
		struct prom_row *row = &snap->rows[snap->nr_rows++];
		char help[300];

		row->pn = st->pn;
		row->type = s->kind == SERIES_COUNTER ? PROM_COUNTER : PROM_GAUGE;
		if (!family || strcmp(family, st->pn.family)) {
			family = st->pn.family;
			if (st->pmu_event)
				snprintf(help, sizeof(help), "PMU events as memscope opened them (event label), counted "
					 "on the cpu label's CPU");
			else
				snprintf(help, sizeof(help), "The %s '%s'%s%s%s", s->kind == SERIES_COUNTER ? "event" :
					 "gauge", s->name, s->unit[0] ? " (in " : "", s->unit,
					 s->unit[0] ? ", shown in base units)" : "");
			if (!(row->help = strdup(help)))
				snap->failed = true;
		}
		int_label(row->cpu, sizeof(row->cpu), s->labels.cpu);
		int_label(row->node, sizeof(row->node), s->labels.node);
		int_label(row->socket, sizeof(row->socket), s->labels.socket);
		int_label(row->pid, sizeof(row->pid), s->labels.pid);
		int_label(row->tid, sizeof(row->tid), s->labels.tid);
		snprintf(row->instance, sizeof(row->instance), "%s", s->labels.instance);
		snprintf(row->comm, sizeof(row->comm), "%s", s->labels.comm);
		row->value = row->type == PROM_COUNTER ? st->total : st->last;
		if (st->own_series && row->type == PROM_COUNTER)
			row->value -= st->baseline;
		if (process_total(s)) {
			row->value = others(h, order[k].index, row->type);
			snprintf(row->pid, sizeof(row->pid), "other");
			snprintf(row->comm, sizeof(row->comm), "other");
		}
		if (st->pmu_event && !(row->event = strdup(s->name)))
			snap->failed = true;
	}
	free(order);
}

static void render_series(const struct prom_snapshot *snap, struct text_buf *b, enum prom_format fmt)
{
	for (int k = 0; k < snap->nr_rows; k++) {
		const struct prom_row *row = &snap->rows[k];
		struct prom_label labels[9];
		int nl = 0;

		if (row->help)
			prom_family(b, fmt, &row->pn, row->type, row->help);
		if (row->event)
			labels[nl++] = (struct prom_label){ "event", row->event };
		labels[nl++] = (struct prom_label){ "node", row->node[0] ? row->node : NULL };
		labels[nl++] = (struct prom_label){ "socket", row->socket[0] ? row->socket : NULL };
		labels[nl++] = (struct prom_label){ "cpu", row->cpu[0] ? row->cpu : NULL };
		labels[nl++] = (struct prom_label){ "pmu", row->instance[0] ? row->instance : NULL };
		labels[nl++] = (struct prom_label){ "pid", row->pid[0] ? row->pid : NULL };
		labels[nl++] = (struct prom_label){ "tid", row->tid[0] ? row->tid : NULL };
		labels[nl++] = (struct prom_label){ "comm", row->comm[0] ? row->comm : NULL };
		prom_sample(b, fmt, &row->pn, row->type, labels, nl, prom_value(&row->pn, row->value));
	}
}

static void render_metrics(const struct http_sink *h, const struct prom_snapshot *snap, struct text_buf *b,
			   enum prom_format fmt)
{
	const struct metric_plan *plan = h->setup->plan;

	/* A family per scope: memscope_X for the system, memscope_node_X,
	 * memscope_socket_X and memscope_channel_X for its parts, so that a sum
	 * over a family never adds the machine to its own nodes. */
	for (int m = 0; plan && m < plan->nr_metrics; m++) {
		const struct catalog_metric *cm = &plan->cat->metrics[plan->metrics[m].metric];
		enum prom_type type = cm->kind == METRIC_COUNTER ? PROM_COUNTER : PROM_GAUGE;
		struct prom_name pn;

		for (int sc = SCOPE_SYSTEM; sc <= SCOPE_CHANNEL; sc++) {
			int n = metric_engine_nr_scopes(h->setup->engine, (enum metric_scope)sc);
			char name[160], help[600];
			bool any = false;

			if (sc == SCOPE_SYSTEM)
				snprintf(name, sizeof(name), "%s", cm->name);
			else
				snprintf(name, sizeof(name), "%s_%s", scope_word((enum metric_scope)sc), cm->name);
			prom_name_of(name, cm->unit, 1, type, &pn);
			if (sc == SCOPE_SYSTEM)
				snprintf(help, sizeof(help), "%s", cm->description);
			else
				snprintf(help, sizeof(help), "%s (per %s)", cm->description, scope_word((enum metric_scope)sc));
			for (int i = 0; i < n; i++) {
				const struct metric_state *ms = &snap->metrics[metric_slot(h, m, (enum metric_scope)sc, i)];
				char id[16], cpu[16], socket[16], node[16];
				struct prom_label labels[6];
				int nl = 0;

				if (!ms->seen)
					continue;
				if (!any) {
					prom_family(b, fmt, &pn, type, help);
					any = true;
				}
				if (sc == SCOPE_NODE || sc == SCOPE_SOCKET) {
					snprintf(id, sizeof(id), "%d",
						 metric_engine_scope_id(h->setup->engine, (enum metric_scope)sc, i));
					labels[nl++] = (struct prom_label){ scope_word((enum metric_scope)sc), id };
				} else if (sc == SCOPE_CHANNEL) {
					const struct metric_channel *ch = metric_engine_channel(h->setup->engine, i);

					int_label(cpu, sizeof(cpu), ch->cpu);
					int_label(node, sizeof(node), ch->node);
					int_label(socket, sizeof(socket), ch->socket);
					labels[nl++] = (struct prom_label){ "channel", ch->instance };
					labels[nl++] = (struct prom_label){ "node", node[0] ? node : NULL };
					labels[nl++] = (struct prom_label){ "socket", socket[0] ? socket : NULL };
					labels[nl++] = (struct prom_label){ "cpu", cpu[0] ? cpu : NULL };
				}
				prom_sample(b, fmt, &pn, type, labels, nl, prom_value(&pn, type == PROM_COUNTER ? ms->total : ms->last));
			}
		}
	}
}

static void render_self(const struct http_sink *h, const struct prom_snapshot *snap, struct text_buf *b,
			enum prom_format fmt)
{
	const struct resolution *res = h->setup->res;
	struct http_stream_stats ss;
	struct prom_name pn;
	struct utsname u;
	bool any = false;
	struct prom_label info[5];

	uname(&u);
	prom_name_of("up", "", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "1 while memscope counts (0 once its run has ended: the values stay)");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, snap->ended ? 0 : 1);
	prom_name_of("", "", 1, PROM_INFO, &pn);
	snprintf(pn.family, sizeof(pn.family), "memscope");
	snprintf(pn.sample, sizeof(pn.sample), "memscope_info");
	prom_family(b, fmt, &pn, PROM_INFO, "The host memscope measures: one sample per PMU family of the catalog "
					    "active here");
	info[0] = (struct prom_label){ "version", MEMSCOPE_VERSION };
	info[1] = (struct prom_label){ "origin", h->setup->origin };
	info[2] = (struct prom_label){ "cpu", h->setup->host ? h->setup->host->cpu.text : NULL };
	info[3] = (struct prom_label){ "kernel", u.release };
	for (int f = 0; res && f < res->nr_families; f++) {
		if (!res->families[f].active)
			continue;
		info[4] = (struct prom_label){ "family", res->families[f].family->name };
		prom_sample(b, fmt, &pn, PROM_INFO, info, 5, 1);
		any = true;
	}
	if (!any) {
		info[4] = (struct prom_label){ "family", "none" };
		prom_sample(b, fmt, &pn, PROM_INFO, info, 5, 1);
	}
	prom_name_of("frames", "", 1, PROM_COUNTER, &pn);
	prom_family(b, fmt, &pn, PROM_COUNTER, "Frames this exporter took from the sampler");
	prom_sample(b, fmt, &pn, PROM_COUNTER, NULL, 0, (double)snap->frames);
	prom_name_of("frame_seq", "", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "Sequence number of the latest frame in these values");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, (double)snap->last_seq);
	prom_name_of("frame_time", "ns", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "Time of the latest frame since the run started");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, prom_value(&pn, (double)snap->last_time_ns));
	prom_name_of("interval", "ns", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "The sampling interval");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, prom_value(&pn, (double)snap->interval_ns));
	http_stream_get_stats(h->stream, &ss);
	prom_name_of("stream_clients", "", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "Pages streaming from this memscope now");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, ss.clients);
	prom_name_of("stream_sent", "B", 1, PROM_COUNTER, &pn);
	prom_family(b, fmt, &pn, PROM_COUNTER, "Bytes of stream sent to pages");
	prom_sample(b, fmt, &pn, PROM_COUNTER, NULL, 0, (double)ss.sent_bytes);
	prom_name_of("history", "B", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "Bytes of stream history held for pages that (re)connect");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, (double)ss.bytes);
	prom_name_of("history_limit", "B", 1, PROM_GAUGE, &pn);
	prom_family(b, fmt, &pn, PROM_GAUGE, "Bytes the stream history may hold (--history)");
	prom_sample(b, fmt, &pn, PROM_GAUGE, NULL, 0, (double)ss.limit);
}

static enum MHD_Result answer_metrics(void *ctx, const struct http_request *req)
{
	struct http_sink *h = ctx;
	enum prom_format fmt = prom_format_from_accept(
		mhd.MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	struct text_buf b = { 0 };
	struct prom_snapshot snap = { 0 };
	enum MHD_Result ret;

	/* Copied under the lock, rendered after it (http_sink.h). */
	pthread_mutex_lock(&h->lock);
	if (!h->opened) {
		pthread_mutex_unlock(&h->lock);
		return not_ready(req->conn);
	}
	snap.ended = h->ended;
	snap.frames = h->frames;
	snap.last_seq = h->last_seq;
	snap.last_time_ns = h->last_time_ns;
	snap.interval_ns = h->interval_ns;
	snap.metrics = malloc(sizeof(*snap.metrics) * (size_t)(h->nr_metric_slots + 1));
	if (snap.metrics && h->nr_metric_slots > 0)
		memcpy(snap.metrics, h->metrics, sizeof(*snap.metrics) * (size_t)h->nr_metric_slots);
	else if (!snap.metrics)
		snap.failed = true;
	copy_series(h, &snap);
	pthread_mutex_unlock(&h->lock);
	if (!snap.failed) {
		render_self(h, &snap, &b, fmt);
		render_metrics(h, &snap, &b, fmt);
		render_series(&snap, &b, fmt);
		prom_end(&b, fmt);
	}
	prom_snapshot_free(&snap);
	if (snap.failed || b.failed) {
		text_buf_free(&b);
		return http_respond_error(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	ret = http_respond(req->conn, MHD_HTTP_OK,
			   fmt == PROM_OPENMETRICS ? PROM_OPENMETRICS_CONTENT_TYPE : PROM_TEXT_CONTENT_TYPE,
			   b.text, b.len);
	text_buf_free(&b);
	return ret;
}

static json_t *session_json(struct http_sink *h, bool token)
{
	const struct sink_setup *su = h->setup;
	json_t *o = json_object(), *cols = json_array(), *na = json_array(), *host = json_object();
	struct http_stream_stats ss;
	struct utsname u;

	uname(&u);
	http_stream_get_stats(h->stream, &ss);
	json_object_set_new(o, "memscope", json_string(MEMSCOPE_VERSION));
	json_object_set_new(o, "title", json_string(su->title ? su->title : ""));
	json_object_set_new(o, "origin", json_string(su->origin ? su->origin : "live"));
	json_object_set_new(o, "origin_name", json_string(su->origin_name ? su->origin_name : ""));
	json_object_set_new(o, "from_file", json_boolean(su->from_file));
	/* The page reads the recording itself (api/recording); columns are the metrics. */
	json_object_set_new(o, "recording", json_boolean(h->recording_fd >= 0));
	json_object_set_new(o, "start_unix_ms", json_real(h->start_unix * 1000));
	json_object_set_new(o, "interval_ms", json_integer((json_int_t)(h->interval_ns / 1000000)));
	json_object_set_new(o, "paused", json_boolean(h->paused));
	json_object_set_new(o, "ended", json_boolean(h->ended));
	json_object_set_new(o, "end_reason", json_string(h->end_reason));
	json_object_set_new(o, "frames", json_integer((json_int_t)h->frames));
	json_object_set_new(o, "frame_seq", json_integer((json_int_t)h->last_seq));
	json_object_set_new(o, "control", json_boolean(h->opt.control != NULL));
	json_object_set_new(o, "token", json_boolean(token));
	if (!strcmp(su->origin, "live")) {
		json_object_set_new(host, "hostname", json_string(u.nodename));
		json_object_set_new(host, "kernel", json_string(u.release));
	}
	if (su->host)
		json_object_set_new(host, "cpu", json_string(su->host->cpu.text));
	if (su->topo) {
		json_object_set_new(host, "cpus", json_integer(su->topo->nr_cpus));
		json_object_set_new(host, "nodes", json_integer(su->topo->nr_nodes));
		json_object_set_new(host, "sockets", json_integer(su->topo->nr_sockets));
	}
	if (su->res) {
		json_t *fam = json_array();

		for (int f = 0; f < su->res->nr_families; f++)
			if (su->res->families[f].active)
				json_array_append_new(fam, json_string(su->res->families[f].family->name));
		json_object_set_new(host, "families", fam);
	}
	json_object_set_new(o, "host", host);
	for (int c = 0; c < h->nr_columns; c++) {
		const struct column *col = &h->columns[c];

		json_t *cj = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "group", col->group, "label", col->label, "unit",
				       col->unit ? col->unit : "", "kind", col->kind_name, "source",
				       col->kind == COLUMN_METRIC ? "metric" : "event", "scope",
				       col->kind == COLUMN_METRIC ? scope_word(col->scope)
								  : strcmp(col->label, "all") ? "node" : "system");

		/* Measured for a command or PIDs, a column of the whole machine says so. */
		if (col->whole_system)
			json_object_set_new(cj, "whole_system", json_true());
		json_array_append_new(cols, cj);
	}
	json_object_set_new(o, "columns", cols);
	for (int i = 0; i < h->nr_na; i++)
		json_array_append_new(na, json_pack("{s:s, s:s}", "name", h->na[i], "why", h->na_why[i]));
	for (int i = 0; i < su->table->nr && i < h->nr_series; i++) {
		const struct series *s = &su->table->series[i];

		if (s->unavailable)
			json_array_append_new(na, json_pack("{s:s, s:s}", "name", s->name, "why", s->unavailable));
	}
	json_object_set_new(o, "na", na);
	json_object_set_new(o, "history", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "bytes", (json_int_t)ss.bytes,
						    "limit", (json_int_t)ss.limit, "batches", (json_int_t)ss.batches,
						    "oldest", (json_int_t)ss.oldest, "newest", (json_int_t)ss.newest,
						    "evicted", (json_int_t)ss.evicted));
	return o;
}

/* The JSON answers' steps: under the lock, "still starting" until ready, else
 * the document make builds; dumped and sent once the lock is let go. */
static enum MHD_Result answer_json(struct http_sink *h, const struct http_request *req,
				   bool (*ready)(const struct http_sink *h),
				   json_t *(*make)(struct http_sink *h, const struct http_request *req), size_t dump_flags)
{
	json_t *o;
	char *text;
	enum MHD_Result ret;

	pthread_mutex_lock(&h->lock);
	if (!ready(h)) {
		pthread_mutex_unlock(&h->lock);
		return not_ready(req->conn);
	}
	o = make(h, req);
	pthread_mutex_unlock(&h->lock);
	text = json_dumps(o, dump_flags);
	json_decref(o);
	if (!text)
		return http_respond_error(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	ret = http_respond(req->conn, MHD_HTTP_OK, "application/json", text, strlen(text));
	free(text);
	return ret;
}

/* The columns are known once the first frame came (or the run ended without one). */
static bool session_ready(const struct http_sink *h)
{
	return h->opened && (h->columns_ready || h->ended);
}

static json_t *make_session(struct http_sink *h, const struct http_request *req)
{
	return session_json(h, req->token);
}

static enum MHD_Result answer_session(void *ctx, const struct http_request *req)
{
	return answer_json(ctx, req, session_ready, make_session, JSON_COMPACT);
}

/* {"time_s", "ended", "processes": [{"pid", "comm", "first_s", "ended_s" (null: running),
 *   "totals": {KEY: total}}], "all": {KEY: total}, "unattributed": {KEY: total}}: every
 * process of the run so far, those that exited included, with its counters'
 * totals; "all" the same counters of the whole target (the series without a
 * pid), "unattributed" what no process holds (all less the processes' sum). */
static json_t *totals_json(struct http_sink *h)
{
	const struct series_table *t = h->setup->table;
	json_t *o = json_object(), *procs = json_array(), *all = json_object(), *rest = json_object();
	json_t *by_pid = json_object();
	char key[80], pid[16];

	for (int k = 0; k < h->nr_ended + h->nr_series; k++) {
		const struct ended_series *e = k < h->nr_ended ? &h->ended_series[k] : NULL;
		const struct series *s = e ? NULL : &t->series[k - h->nr_ended];
		const struct series_live *st = e ? NULL : &h->series[k - h->nr_ended];
		json_t *p, *totals;
		double total;

		if (e ? !e->seen : !st->seen || !st->alive || !per_process(s))
			continue;
		snprintf(pid, sizeof(pid), "%d", e ? e->pid : s->labels.pid);
		if (!(p = json_object_get(by_pid, pid))) {
			p = json_pack("{s:i, s:s, s:f, s:n, s:{}}", "pid", e ? e->pid : s->labels.pid, "comm",
				      e ? e->comm : s->labels.comm, "first_s", e ? e->first_s : st->first_s, "ended_s",
				      "totals");
			json_object_set_new(by_pid, pid, p);
			json_array_append(procs, p);
		}
		/* Its latest name and end: a live series says it runs. */
		json_object_set_new(p, "comm", json_string(e ? e->comm : s->labels.comm));
		json_object_set_new(p, "ended_s", e ? json_real(e->end_s) : json_null());
		if ((e ? e->kind : s->kind) != SERIES_COUNTER)
			continue;
		if (e)
			snprintf(key, sizeof(key), "%s", e->key);
		else
			series_key(s, key, sizeof(key));
		total = e ? e->total * e->scale : st->total * (s->scale > 0 ? s->scale : 1.0);
		totals = json_object_get(p, "totals");
		json_object_set_new(totals, key, json_real(json_number_value(json_object_get(totals, key)) + total));
		json_object_set_new(rest, key, json_real(json_number_value(json_object_get(rest, key)) - total));
	}
	for (int i = 0; i < h->nr_series; i++) {
		const struct series *s = &t->series[i];

		if (series_is_per_task(s) || s->kind != SERIES_COUNTER || !h->series[i].seen)
			continue;
		series_key(s, key, sizeof(key));
		if (!json_object_get(rest, key))
			continue;
		json_object_set_new(all, key, json_real(json_number_value(json_object_get(all, key)) +
							h->series[i].total * (s->scale > 0 ? s->scale : 1.0)));
	}
	{
		const char *k;
		json_t *v, *unattributed = json_object();

		/* What the whole target counted and no process holds: all less the processes' sum (rest holds minus it). */
		json_object_foreach(rest, k, v)
			if (json_object_get(all, k))
				json_object_set_new(unattributed, k, json_real(json_number_value(json_object_get(all, k)) +
									     json_number_value(v)));
		json_decref(rest);
		rest = unattributed;
	}
	if (h->folded_series) {
		json_t *others = json_object();

		for (int f = 0; f < h->nr_folded; f++) {
			json_object_set_new(others, h->folded[f].key, json_real(h->folded[f].total));
			if (json_object_get(rest, h->folded[f].key))
				json_real_set(json_object_get(rest, h->folded[f].key),
					      json_number_value(json_object_get(rest, h->folded[f].key)) - h->folded[f].total);
		}
		json_object_set_new(o, "others", json_pack("{s:I, s:o}", "series", (json_int_t)h->folded_series,
							    "totals", others));
	}
	json_decref(by_pid);
	json_object_set_new(o, "time_s", json_real((double)h->last_time_ns / 1e9));
	json_object_set_new(o, "ended", json_boolean(h->ended));
	json_object_set_new(o, "processes", procs);
	json_object_set_new(o, "all", all);
	json_object_set_new(o, "unattributed", rest);
	return o;
}

static bool totals_ready(const struct http_sink *h)
{
	return h->opened;
}

static json_t *make_totals(struct http_sink *h, const struct http_request *req)
{
	return totals_json(h);
}

static enum MHD_Result answer_totals(void *ctx, const struct http_request *req)
{
	return answer_json(ctx, req, totals_ready, make_totals, JSON_COMPACT | JSON_REAL_PRECISION(17));
}

static enum MHD_Result answer_stream(void *ctx, const struct http_request *req)
{
	struct http_sink *h = ctx;

	return http_stream_respond(h->stream, req->conn);
}

/* POST /api/control: one line, as memscope ctl takes it. */
static enum MHD_Result answer_control(void *ctx, const struct http_request *req)
{
	static const char *const allowed[] = { "label", "phase", "pause", "resume", "interval", "record", "status" };
	struct http_sink *h = ctx;
	char line[HTTP_CONTROL_MAX], reply[HTTP_CONTROL_MAX];
	size_t word;
	bool ok = false;

	if (!h->opt.control)
		return http_respond_error(req->conn, MHD_HTTP_CONFLICT, "this run takes no control (%s)",
					  h->setup && h->setup->from_file ? "it replays a file" : "started with --no-ctl");
	snprintf(line, sizeof(line), "%s", req->body ? req->body : "");
	line[strcspn(line, "\r\n")] = '\0';
	word = strcspn(line, " ");
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (strlen(allowed[i]) == word && !strncmp(line, allowed[i], word))
			ok = true;
	if (!ok)
		return http_respond_error(req->conn, MHD_HTTP_BAD_REQUEST,
					  "'%.*s': the commands are label TEXT, phase begin|end NAME, pause, resume, "
					  "interval MS, record FILE, status", (int)word, line);
	/* Whoever holds the token names a file in the directory live started
	 * in, never a path (memscope ctl, the owner's, may give one there). */
	if (word == 6 && !strncmp(line, "record", 6) && strchr(line + word, '/'))
		return http_respond_error(req->conn, MHD_HTTP_CONFLICT,
					  "memscope live records into the directory it was started in: give a plain "
					  "file name, without '/' (record NAME.rec)");
	/* Waits for the answer of the sink that does it (the recording): only
	 * this request waits, never the sampler. */
	reply[0] = '\0';
	if (h->opt.control(line, reply, sizeof(reply), h->opt.control_ctx) < 0)
		return http_respond_error(req->conn, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", reply);
	return http_respond(req->conn, strncmp(reply, "ok", 2) ? MHD_HTTP_CONFLICT : MHD_HTTP_OK,
			    "text/plain; charset=utf-8", reply, strlen(reply));
}

/* The replayed recording's bytes as written (zstd or not): the page parses
 * them as it parses a file dropped on it. */
static enum MHD_Result answer_recording(void *ctx, const struct http_request *req)
{
	struct http_sink *h = ctx;
	struct MHD_Response *r;
	struct stat st;
	enum MHD_Result ret;
	int fd;

	pthread_mutex_lock(&h->lock);
	fd = h->recording_fd >= 0 ? dup(h->recording_fd) : -2;
	pthread_mutex_unlock(&h->lock);
	if (fd == -2)
		return http_respond_error(req->conn, MHD_HTTP_NOT_FOUND,
					  "this run replays no recording (memscope live --input FILE serves one)");
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return http_respond_error(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the recording: %s",
					  strerror(errno));
	}
	/* MHD reads at offsets (pread/sendfile) and closes fd with the response. */
	r = mhd.MHD_create_response_from_fd((size_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return http_respond_error(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	mhd.MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = mhd.MHD_queue_response(req->conn, MHD_HTTP_OK, r);
	mhd.MHD_destroy_response(r);
	return ret;
}

int http_sink_init(struct sink *sink, const struct http_sink_options *opt, bool *usage, struct ms_error *err)
{
	struct http_sink *h = calloc(1, sizeof(*h));
	struct http_route routes[] = {
		{ "GET", "/metrics", HTTP_READ, answer_metrics, h },
		{ "GET", "/api/session", HTTP_READ, answer_session, h },
		{ "GET", "/api/stream", HTTP_READ, answer_stream, h },
		{ "GET", "/api/totals", HTTP_READ, answer_totals, h },
		{ "GET", "/api/recording", HTTP_READ, answer_recording, h },
		{ "POST", "/api/control", HTTP_CONTROL, answer_control, h },
	};

	memset(sink, 0, sizeof(*sink));
	*usage = false;
	if (!h) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->opt = *opt;
	h->recording_fd = -1;
	if (http_stream_new(&h->stream, opt->history_bytes, err) < 0)
		goto fail;
	if (http_server_start(&h->server, &opt->server, routes, (int)(ARRAY_SIZE(routes)), usage,
			      err) < 0)
		goto fail;
	sink->ops = &http_sink_ops;
	sink->priv = h;
	/* Turning a frame into a row is quick; a deep queue rides out a burst. */
	sink->queue_length = 32;
	return 0;
fail:
	http_stream_free(h->stream);
	free_sink(h);
	return -1;
}

int http_sink_serve_recording(struct sink *sink, int fd, struct ms_error *err)
{
	struct http_sink *h = sink->priv;
	char path[64];
	struct stat st;
	int own;

	/* A description of its own (its offset is not the reader's), of the very
	 * file the reader opened: never the name looked up again. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	own = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (own < 0 || fstat(own, &st) < 0 || !S_ISREG(st.st_mode)) {
		ms_error_set(err, "cannot serve the recording to the page: %s",
			     own < 0 ? strerror(errno) : "it is not a regular file");
		if (own >= 0)
			close(own);
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	h->recording_fd = own;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

int http_sink_set_na(struct sink *sink, const char *const *names, const char *const *whys, int nr)
{
	struct http_sink *h = sink->priv;
	char **copy = calloc((size_t)nr + 1, sizeof(char *)), **why = calloc((size_t)nr + 1, sizeof(char *));
	int i = 0;

	while (copy && why && i < nr && (copy[i] = strdup(names[i])) && (why[i] = strdup(whys[i])))
		i++;
	if (i < nr || !copy || !why) {
		free_na(copy, why, nr);
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	free_na(h->na, h->na_why, h->nr_na);
	h->na = copy;
	h->na_why = why;
	h->nr_na = nr;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

const char *http_sink_url(const struct sink *sink)
{
	const struct http_sink *h = sink->priv;

	return http_server_url(h->server);
}

const struct http_server *http_sink_server(const struct sink *sink)
{
	const struct http_sink *h = sink->priv;

	return h->server;
}
