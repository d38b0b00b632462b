/* A loaded plugin as a source kind: it claims the series names its
 * descriptor declares, says whether it can run here through the plugin's
 * available(), and reads through the plugin's read() into buffers made once
 * at open. Counters are read as running totals and become per-interval
 * differences here, the same for every plugin. */
#include "sources/plugin_loader.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events/plugin_series.h"

struct plugin_source {
	const struct loaded_plugin *plugin;
	char **names;
	int nr_names;
	int32_t *pids;
	int nr_pids;
	bool system_wide;
	struct series_table *table;   /* during open: where add_series adds */
	int first;
	bool opened;                  /* the plugin's open succeeded: close it */
	/* One entry per series added, allocated after open: nothing is
	 * allocated while sampling. */
	int nr;
	bool *gauge;
	uint64_t *values;
	uint8_t *valid;
	uint64_t *last;
	bool *have_last;
	uint64_t last_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct memscope_series_decl *find_decl(const struct memscope_plugin *d, const char *name)
{
	for (uint32_t i = 0; i < d->nr_series; i++)
		if (!strcmp(d->series[i].name, name))
			return &d->series[i];
	return NULL;
}

static int add_series(void *ctx, const char *name, const struct memscope_labels *in)
{
	struct plugin_source *ps = ctx;
	const struct memscope_series_decl *decl = name ? find_decl(ps->plugin->desc, name) : NULL;
	struct series_labels labels;
	bool asked = false;
	int at;

	for (int i = 0; decl && i < ps->nr_names; i++)
		asked |= !strcmp(ps->names[i], name);
	if (!asked || !ps->table)
		return -1;
	series_labels_init(&labels);
	if (in) {
		labels.node = in->node < 0 ? LABEL_NONE : in->node;
		labels.socket = in->socket < 0 ? LABEL_NONE : in->socket;
		labels.cpu = in->cpu < 0 ? LABEL_NONE : in->cpu;
		labels.pid = in->pid < 0 ? LABEL_NONE : in->pid;
		labels.cgroup = (char *)in->cgroup;
		if (in->instance)
			snprintf(labels.instance, sizeof(labels.instance), "%s", in->instance);
	}
	/* A plugin's series counts what it names (a resctrl group, a cgroup), not the
	 * command or PIDs memscope measures, unless it is about one of its processes. */
	labels.whole_system = labels.pid == LABEL_NONE;
	at = series_table_add(ps->table, name, decl->unit, 1.0,
			      decl->kind == MEMSCOPE_SERIES_GAUGE ? SERIES_GAUGE : SERIES_COUNTER, &labels);
	return at < 0 ? -1 : at - ps->first;
}

static int plugin_open(struct source *src, struct series_table *table, struct ms_error *err)
{
	struct plugin_source *ps = src->priv;
	const struct memscope_plugin *d = ps->plugin->desc;
	struct memscope_target target = {
		.size = sizeof(target),
		.system_wide = ps->system_wide,
		.pids = ps->pids,
		.nr_pids = (uint32_t)ps->nr_pids,
		.names = (const char *const *)ps->names,
		.nr_names = (uint32_t)ps->nr_names,
		.add_series = add_series,
		.ctx = ps,
	};
	char why[512] = "";

	src->first = ps->first = table->nr;
	ps->table = table;
	if (d->open(ps->plugin->state, &target, why, sizeof(why)) != 0) {
		ps->table = NULL;
		ms_error_set(err, "plugin %s: %s", d->name, why[0] ? why : "open failed (the plugin gave no reason)");
		return -1;
	}
	ps->table = NULL;
	ps->opened = true;
	src->count = ps->nr = table->nr - ps->first;
	ps->gauge = calloc((size_t)ps->nr + 1, sizeof(*ps->gauge));
	ps->values = calloc((size_t)ps->nr + 1, sizeof(*ps->values));
	ps->valid = calloc((size_t)ps->nr + 1, sizeof(*ps->valid));
	ps->last = calloc((size_t)ps->nr + 1, sizeof(*ps->last));
	ps->have_last = calloc((size_t)ps->nr + 1, sizeof(*ps->have_last));
	if (!ps->gauge || !ps->values || !ps->valid || !ps->last || !ps->have_last) {
		ms_error_set(err, "plugin %s: out of memory", d->name);
		return -1;
	}
	for (int i = 0; i < ps->nr; i++)
		ps->gauge[i] = table->series[ps->first + i].kind == SERIES_GAUGE;
	return 0;
}

/* One read of every series; with out, the frame's samples (counters: the
 * difference since the last read, none across a reset). */
static void read_all(struct plugin_source *ps, struct sample *out, uint64_t interval_ns)
{
	bool ok;

	memset(ps->valid, 0, (size_t)ps->nr);
	ok = ps->plugin->desc->read(ps->plugin->state, ps->values, ps->valid, (uint32_t)ps->nr) == 0;
	for (int i = 0; i < ps->nr; i++) {
		bool valid = ok && ps->valid[i];
		uint64_t v = ps->values[i];

		if (out) {
			struct sample *s = &out[i];

			s->enabled_ns = s->running_ns = interval_ns;
			if (ps->gauge[i]) {
				s->valid = valid;
				s->value = valid ? v : 0;
			} else {
				s->valid = valid && ps->have_last[i] && v >= ps->last[i];
				s->value = s->valid ? v - ps->last[i] : 0;
			}
		}
		if (!ps->gauge[i]) {
			ps->have_last[i] = valid;
			if (valid)
				ps->last[i] = v;
		}
	}
}

static int plugin_enable(struct source *src, struct ms_error *err)
{
	struct plugin_source *ps = src->priv;

	(void)err;
	read_all(ps, NULL, 0);
	ps->last_ns = now_ns();
	return 0;
}

static int plugin_disable(struct source *src)
{
	(void)src;
	return 0;
}

static int plugin_sample(struct source *src, struct frame *frame)
{
	struct plugin_source *ps = src->priv;
	uint64_t now = now_ns();

	read_all(ps, frame->samples + src->first, now - ps->last_ns);
	ps->last_ns = now;
	return 0;
}

static void plugin_close(struct source *src)
{
	struct plugin_source *ps = src->priv;

	if (!ps)
		return;
	if (ps->opened)
		ps->plugin->desc->close(ps->plugin->state);
	for (int i = 0; i < ps->nr_names; i++)
		free(ps->names[i]);
	free(ps->names);
	free(ps->pids);
	free(ps->gauge);
	free(ps->values);
	free(ps->valid);
	free(ps->last);
	free(ps->have_last);
	free(ps);
	src->priv = NULL;
}

static const struct source_ops plugin_ops = {
	.name = "plugin",
	.open = plugin_open,
	.enable = plugin_enable,
	.disable = plugin_disable,
	.sample = plugin_sample,
	.close = plugin_close,
};

/* ---- The registry kind ---- */

static bool plugin_claims(const struct source_kind *kind, const char *name)
{
	const struct loaded_plugin *p = kind->data;

	return find_decl(p->desc, name) != NULL;
}

static bool plugin_present(const struct source_kind *kind, const struct host *host, struct ms_error *why)
{
	const struct loaded_plugin *p = kind->data;
	const struct plugin_vocabulary *v = plugin_series_plugin(p->desc->name);
	char text[512] = "";

	(void)host;
	if (!p->desc->available || p->desc->available(p->state, text, sizeof(text)) == 1)
		return true;
	ms_error_set(why, "plugin %s: %s", p->desc->name, text[0] ? text : v ? v->why : "cannot run here");
	return false;
}

static int plugin_create(const struct source_kind *kind, struct source *src, const struct source_request *req,
			 struct ms_error *err)
{
	const struct loaded_plugin *p = kind->data;
	struct plugin_source *ps;

	memset(src, 0, sizeof(*src));
	if (!plugin_present(kind, req->host, err))
		return -1;
	ps = calloc(1, sizeof(*ps));
	if (!ps || !(ps->names = calloc((size_t)req->nr_names + 1, sizeof(char *)))) {
		free(ps);
		ms_error_set(err, "plugin %s: out of memory", p->desc->name);
		return -1;
	}
	src->ops = &plugin_ops;
	src->priv = ps;
	src->kind = kind;
	ps->plugin = p;
	for (; ps->nr_names < req->nr_names; ps->nr_names++)
		if (!(ps->names[ps->nr_names] = strdup(req->names[ps->nr_names]))) {
			ms_error_set(err, "plugin %s: out of memory", p->desc->name);
			return -1;
		}
	if (req->target) {
		ps->system_wide = req->target->system_wide;
		if (req->target->kind != TARGET_SYSTEM && req->target->nr_pids > 0) {
			if (!(ps->pids = calloc((size_t)req->target->nr_pids, sizeof(*ps->pids)))) {
				ms_error_set(err, "plugin %s: out of memory", p->desc->name);
				return -1;
			}
			for (int i = 0; i < req->target->nr_pids; i++)
				ps->pids[i] = (int32_t)req->target->pids[i];
			ps->nr_pids = req->target->nr_pids;
		}
	}
	return 0;
}

void plugin_kind_init(struct loaded_plugin *p)
{
	memset(&p->kind, 0, sizeof(p->kind));
	p->kind.name = p->desc->name;
	p->kind.description = p->desc->description ? p->desc->description : "a plugin";
	p->kind.mode = SOURCE_LIVE;
	p->kind.claims = plugin_claims;
	p->kind.present = plugin_present;
	p->kind.create = plugin_create;
	/* Without it the other sources still count (a note says why). */
	p->kind.optional = true;
	p->kind.data = p;
}
