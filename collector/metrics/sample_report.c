#include "metrics/sample_report.h"
#include "metrics/damon_hot_share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

const struct sort_key_info sort_keys[SORT_KEYS] = {
	[SORT_SYM] = { "sym", "symbol", "Symbol", false },
	[SORT_SRCLINE] = { "srcline", NULL, "Source line", false },
	[SORT_DSO] = { "dso", NULL, "Binary", false },
	[SORT_OBJ] = { "obj", "symbol_daddr", "Data object", false },
	[SORT_NODE] = { "node", NULL, "Data node", true },
	[SORT_CPU_NODE] = { "cpu_node", NULL, "CPU node", true },
	[SORT_REMOTE] = { "remote", NULL, "Access", false },
	[SORT_LEVEL] = { "level", "mem", "Level", false },
	[SORT_OP] = { "op", NULL, "Op", false },
	[SORT_PID] = { "pid", NULL, "Pid", true },
	[SORT_TID] = { "tid", NULL, "Tid", true },
	[SORT_COMM] = { "comm", NULL, "Command", false },
	[SORT_CPU] = { "cpu", NULL, "CPU", true },
	[SORT_EVENT] = { "event", NULL, "Event", false },
	[SORT_CALLER] = { "caller", "parent", "Caller", false },
};

int sort_keys_parse(const char *text, enum sort_key *keys, int *nr, struct ms_error *err)
{
	char *copy = strdup(text), *save = NULL;

	*nr = 0;
	if (!copy) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		int found = -1;

		for (int i = 0; i < SORT_KEYS; i++)
			if (!strcmp(k, sort_keys[i].name) || (sort_keys[i].alias && !strcmp(k, sort_keys[i].alias)))
				found = i;
		if (found < 0) {
			size_t len;

			ms_error_set(err, "--sort: unknown key '%s'; the keys are", k);
			len = strlen(err->text);
			for (int i = 0; i < SORT_KEYS && len < sizeof(err->text); i++)
				len += (size_t)snprintf(err->text + len, sizeof(err->text) - len, "%s %s", i ? "," : "",
							sort_keys[i].name);
			free(copy);
			return -1;
		}
		for (int i = 0; i < *nr; i++)
			if (keys[i] == (enum sort_key)found) {
				ms_error_set(err, "--sort: key '%s' is given twice", k);
				free(copy);
				return -1;
			}
		if (*nr == SORT_MAX) {
			ms_error_set(err, "--sort: at most %d keys", SORT_MAX);
			free(copy);
			return -1;
		}
		keys[(*nr)++] = (enum sort_key)found;
	}
	free(copy);
	if (!*nr) {
		ms_error_set(err, "--sort needs at least one key (for example sym,obj,node)");
		return -1;
	}
	return 0;
}

int sample_report_init(struct sample_report *r, const enum sort_key *keys, int nr_keys, struct strtab *strings)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->keys, keys, sizeof(*keys) * (size_t)nr_keys);
	r->nr_keys = nr_keys;
	r->strings = strings;
	return 0;
}

void sample_report_free(struct sample_report *r)
{
	for (int i = 0; i < r->nr_rows; i++) {
		free(r->rows[i].chains);
		free(r->rows[i].lines);
		free(r->rows[i].ranges);
	}
	free(r->rows);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}

static const char *op_text(int op)
{
	return op == 'L' ? "load" : op == 'S' ? "store" : op == 'P' ? "prefetch" : op == 'X' ? "exec" : "-";
}

static union key_value key_of(const struct attributed_sample *s, enum sort_key k)
{
	union key_value v = { .i = 0 };

	switch (k) {
	case SORT_SYM: v.s = s->code.sym; break;
	case SORT_SRCLINE: v.s = s->code.srcline; break;
	case SORT_DSO: v.s = s->code.dso; break;
	case SORT_OBJ: v.s = s->data.name; break;
	case SORT_NODE: v.i = s->node; break;
	case SORT_CPU_NODE: v.i = s->cpu_node; break;
	case SORT_REMOTE: v.s = attrib_remote_text(s->remote); break;
	case SORT_LEVEL: v.s = s->access.level ? s->access.level : "-"; break;
	case SORT_OP: v.s = op_text(s->access.op); break;
	case SORT_PID: v.i = s->sample->pid; break;
	case SORT_TID: v.i = s->sample->tid; break;
	case SORT_COMM: v.s = s->comm; break;
	case SORT_CPU: v.i = s->sample->cpu; break;
	case SORT_EVENT: v.s = s->event; break;
	case SORT_CALLER: v.s = s->nr_chain ? s->chain[0].sym : "[none]"; break;
	case SORT_KEYS: break;
	}
	return v;
}

/* Strings are compared by pointer: every one is interned or static. */
static uint64_t tuple_hash(const union key_value *v, int n)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)v[i].i) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int grow_slots(struct sample_report *r)
{
	int nr = r->nr_slots ? r->nr_slots * 2 : 1024;
	int *slots = malloc(sizeof(int) * (size_t)nr);

	if (!slots)
		return -1;
	memset(slots, -1, sizeof(int) * (size_t)nr);
	for (int i = 0; i < r->nr_rows; i++) {
		uint64_t h = tuple_hash(r->rows[i].keys, r->nr_keys);
		int at = (int)(h & (uint64_t)(nr - 1));

		while (slots[at] >= 0)
			at = (at + 1) & (nr - 1);
		slots[at] = i;
	}
	free(r->slots);
	r->slots = slots;
	r->nr_slots = nr;
	return 0;
}

static struct report_row *find_row(struct sample_report *r, const union key_value *keys)
{
	uint64_t h;
	int at;

	if ((r->nr_rows + 1) * 2 > r->nr_slots && grow_slots(r) < 0)
		return NULL;
	h = tuple_hash(keys, r->nr_keys);
	for (at = (int)(h & (uint64_t)(r->nr_slots - 1)); r->slots[at] >= 0; at = (at + 1) & (r->nr_slots - 1))
		if (!memcmp(r->rows[r->slots[at]].keys, keys, sizeof(*keys) * (size_t)r->nr_keys))
			return &r->rows[r->slots[at]];
	if (r->nr_rows == r->cap_rows) {
		int cap = r->cap_rows ? r->cap_rows * 2 : 64;
		struct report_row *grown = realloc(r->rows, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return NULL;
		r->rows = grown;
		r->cap_rows = cap;
	}
	memset(&r->rows[r->nr_rows], 0, sizeof(r->rows[0]));
	memcpy(r->rows[r->nr_rows].keys, keys, sizeof(*keys) * (size_t)r->nr_keys);
	r->slots[at] = r->nr_rows;
	return &r->rows[r->nr_rows++];
}

/* "main (app.c:40) <- __libc_start_call_main" */
static const char *chain_text(struct sample_report *r, const struct attributed_sample *s)
{
	char text[1024];
	size_t len = 0;
	int shown = s->nr_chain < 4 ? s->nr_chain : 4;

	if (!s->nr_chain)
		return NULL;
	text[0] = '\0';
	for (int i = 0; i < shown && len < sizeof(text); i++) {
		const struct code_site *c = &s->chain[i];

		if (c->srcline[0] != '[')
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s (%s)", i ? " <- " : "", c->sym,
						c->srcline);
		else
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", i ? " <- " : "", c->sym);
	}
	return strtab_intern(r->strings, text);
}

static int add_chain(struct report_row *row, const char *text)
{
	for (int i = 0; i < row->nr_chains; i++)
		if (row->chains[i].text == text) {
			row->chains[i].samples++;
			return 0;
		}
	if (row->nr_chains == row->cap_chains) {
		int cap = row->cap_chains ? row->cap_chains * 2 : 4;
		struct report_chain *grown = realloc(row->chains, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		row->chains = grown;
		row->cap_chains = cap;
	}
	row->chains[row->nr_chains++] = (struct report_chain){ text, 1 };
	return 0;
}

static int add_line(struct report_row *row, const char *srcline)
{
	for (int i = 0; i < row->nr_lines; i++)
		if (row->lines[i].srcline == srcline) {
			row->lines[i].samples++;
			return 0;
		}
	if (row->nr_lines == row->cap_lines) {
		int cap = row->cap_lines ? row->cap_lines * 2 : 4;
		struct report_line *grown = realloc(row->lines, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		row->lines = grown;
		row->cap_lines = cap;
	}
	row->lines[row->nr_lines++] = (struct report_line){ srcline, 1 };
	return 0;
}

static bool has_key(const struct sample_report *r, enum sort_key k)
{
	for (int i = 0; i < r->nr_keys; i++)
		if (r->keys[i] == k)
			return true;
	return false;
}

/* The data object's range in its process, once per row. */
static int add_range(struct report_row *row, uint32_t pid, const struct data_object *d)
{
	if (!d->known || d->end <= d->start)
		return 0;
	for (int i = 0; i < row->nr_ranges; i++)
		if (row->ranges[i].pid == pid && row->ranges[i].start == d->start && row->ranges[i].end == d->end)
			return 0;
	if (row->nr_ranges == REPORT_RANGES_MAX)
		return 0;
	if (array_grow_int(&row->ranges, &row->cap_ranges, row->nr_ranges + 1, sizeof(*row->ranges)) < 0)
		return -1;
	row->ranges[row->nr_ranges++] = (struct report_range){ pid, d->start, d->end };
	return 0;
}

void sample_report_hot_shares(struct sample_report *r, const struct damon_hot_share *h)
{
	if (!h || !damon_hot_share_any(h) || !has_key(r, SORT_OBJ))
		return;
	r->hot_shares = true;
	r->hot_pct = h->hot_pct;
	for (int i = 0; i < r->nr_rows; i++) {
		struct report_row *row = &r->rows[i];
		double hot = 0, whole = 0;

		for (int k = 0; k < row->nr_ranges; k++) {
			const struct report_range *g = &row->ranges[k];
			uint64_t covered, bytes = damon_hot_share_bytes(h, g->pid, g->start, g->end, &covered);

			hot += (double)bytes;
			whole += (double)covered;
		}
		row->hot_known = whole > 0;
		row->hot_share = whole > 0 ? hot / whole : 0;
	}
}

static int node_slot(int node)
{
	return node >= 0 && node < REPORT_NODES_MAX ? node : REPORT_NODES_MAX;
}

int sample_report_add(struct sample_report *r, const struct attributed_sample *s)
{
	union key_value keys[SORT_MAX];
	struct report_row *row;
	const char *chain;

	for (int i = 0; i < r->nr_keys; i++)
		keys[i] = key_of(s, r->keys[i]);
	if (!(row = find_row(r, keys)))
		return -1;
	row->samples++;
	r->samples++;
	if (s->remote > 0)
		row->remote++, r->remote++;
	else if (s->remote == 0)
		row->local++, r->local++;
	else
		row->unknown++, r->unknown++;
	if (s->access.hitm)
		row->hitm++, r->hitm++;
	if (s->access.peer)
		row->peer++;
	if (s->weight) {
		row->weight_sum += s->weight;
		row->weighted++;
	}
	row->data_nodes[node_slot(s->node)]++;
	row->cpu_nodes[node_slot(s->cpu_node)]++;
	if (s->sample->node_from < NODE_FROM_COUNT)
		r->node_from[s->sample->node_from]++;
	if (s->decode_error) {
		if (!r->decode_errors++)
			r->decode_error = strtab_intern(r->strings, s->decode_error);
	}
	chain = chain_text(r, s);
	if (chain && add_chain(row, chain) < 0)
		return -1;
	if (!has_key(r, SORT_SRCLINE) && s->code.srcline[0] != '[' && add_line(row, s->code.srcline) < 0)
		return -1;
	if (has_key(r, SORT_OBJ) && add_range(row, s->sample->pid, &s->data) < 0)
		return -1;
	return 0;
}

void sample_report_lost(struct sample_report *r, const struct sample_item *item)
{
	if (item->kind != SAMPLE_ITEM_LOST)
		return;
	r->lost[item->lost_kind] += item->lost_kind == LOST_THROTTLED ? 1 : item->lost;
}

static int line_samples_order(const void *a, const void *b)
{
	const struct report_line *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->srcline, y->srcline);
}

static int chain_order(const void *a, const void *b)
{
	const struct report_chain *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->text, y->text);
}

static int row_order(const void *a, const void *b, void *ctx)
{
	const struct report_row *x = a, *y = b;
	const struct sample_report *sorting = ctx;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	/* Ties in key order, so the output does not depend on hashing. */
	for (int k = 0; k < sorting->nr_keys; k++) {
		int c;

		if (sort_keys[sorting->keys[k]].numeric)
			c = x->keys[k].i < y->keys[k].i ? -1 : x->keys[k].i > y->keys[k].i;
		else
			c = strcmp(x->keys[k].s, y->keys[k].s);
		if (c)
			return c;
	}
	return 0;
}

void sample_report_sort(struct sample_report *r)
{
	if (r->nr_rows > 1)
		qsort_r(r->rows, (size_t)r->nr_rows, sizeof(*r->rows), row_order, r);
	for (int i = 0; i < r->nr_rows; i++) {
		if (r->rows[i].nr_chains > 1)
			qsort(r->rows[i].chains, (size_t)r->rows[i].nr_chains, sizeof(struct report_chain),
			      chain_order);
		if (r->rows[i].nr_lines > 1)
			qsort(r->rows[i].lines, (size_t)r->rows[i].nr_lines, sizeof(struct report_line),
			      line_samples_order);
	}
	free(r->slots);
	r->slots = NULL;
	r->nr_slots = 0;
}

const char *report_key_text(const struct sample_report *r, const struct report_row *row, int k, char *buf,
			    size_t size)
{
	if (!sort_keys[r->keys[k]].numeric)
		return row->keys[k].s;
	if (row->keys[k].i < 0)
		return "?";
	snprintf(buf, size, "%lld", row->keys[k].i);
	return buf;
}

/* ---- Cache lines ---- */

int c2c_report_init(struct c2c_report *c)
{
	memset(c, 0, sizeof(*c));
	return 0;
}

void c2c_report_free(struct c2c_report *c)
{
	for (int i = 0; i < c->nr_lines; i++)
		free(c->lines[i].offsets);
	free(c->lines);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

static uint64_t line_hash(uint64_t key, uint32_t pid)
{
	uint64_t h = (key ^ ((uint64_t)pid << 48)) * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 31);
}

static int c2c_grow(struct c2c_report *c)
{
	int nr = c->nr_slots ? c->nr_slots * 2 : 1024;
	int *slots = malloc(sizeof(int) * (size_t)nr);

	if (!slots)
		return -1;
	memset(slots, -1, sizeof(int) * (size_t)nr);
	for (int i = 0; i < c->nr_lines; i++) {
		int at = (int)(line_hash(c->lines[i].key, c->lines[i].pid) & (uint64_t)(nr - 1));

		while (slots[at] >= 0)
			at = (at + 1) & (nr - 1);
		slots[at] = i;
	}
	free(c->slots);
	c->slots = slots;
	c->nr_slots = nr;
	return 0;
}

static struct c2c_line *c2c_line(struct c2c_report *c, uint64_t key, bool physical, uint32_t pid)
{
	int at;

	if ((c->nr_lines + 1) * 2 > c->nr_slots && c2c_grow(c) < 0)
		return NULL;
	for (at = (int)(line_hash(key, pid) & (uint64_t)(c->nr_slots - 1)); c->slots[at] >= 0;
	     at = (at + 1) & (c->nr_slots - 1)) {
		struct c2c_line *l = &c->lines[c->slots[at]];

		if (l->key == key && l->pid == pid && l->physical == physical)
			return l;
	}
	if (c->nr_lines == c->cap_lines) {
		int cap = c->cap_lines ? c->cap_lines * 2 : 64;
		struct c2c_line *grown = realloc(c->lines, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return NULL;
		c->lines = grown;
		c->cap_lines = cap;
	}
	memset(&c->lines[c->nr_lines], 0, sizeof(c->lines[0]));
	c->lines[c->nr_lines].key = key;
	c->lines[c->nr_lines].physical = physical;
	c->lines[c->nr_lines].pid = pid;
	c->slots[at] = c->nr_lines;
	return &c->lines[c->nr_lines++];
}

int c2c_report_add(struct c2c_report *c, const struct attributed_sample *s)
{
	const struct event_sample *e = s->sample;
	/* Shared memory is one line for every process: key by the physical
	 * address when the hardware gave it. */
	bool physical = e->phys_addr != 0;
	uint64_t addr = physical ? e->phys_addr : e->addr;
	struct c2c_line *line;
	struct c2c_offset *off = NULL;
	uint32_t offset = (uint32_t)(addr & (C2C_LINE - 1));

	if (!e->addr || !s->access.op)
		return 0;
	if (!(line = c2c_line(c, addr & ~(uint64_t)(C2C_LINE - 1), physical, physical ? 0 : e->pid)))
		return -1;
	if (!line->obj) {
		line->obj = s->data.name;
		line->vaddr = e->addr & ~(uint64_t)(C2C_LINE - 1);
	}
	for (int i = 0; i < line->nr_offsets && !off; i++)
		if (line->offsets[i].offset == offset && line->offsets[i].sym == s->code.sym &&
		    line->offsets[i].srcline == s->code.srcline)
			off = &line->offsets[i];
	if (!off) {
		if (line->nr_offsets == line->cap_offsets) {
			int cap = line->cap_offsets ? line->cap_offsets * 2 : 4;
			struct c2c_offset *grown = realloc(line->offsets, sizeof(*grown) * (size_t)cap);

			if (!grown)
				return -1;
			line->offsets = grown;
			line->cap_offsets = cap;
		}
		off = &line->offsets[line->nr_offsets++];
		memset(off, 0, sizeof(*off));
		off->offset = offset;
		off->sym = s->code.sym;
		off->srcline = s->code.srcline;
	}
	line->samples++;
	c->samples++;
	if (s->access.op == 'S') {
		line->stores++, off->stores++, c->stores++;
	} else {
		line->loads++, off->loads++, c->loads++;
	}
	if (s->access.hitm) {
		line->hitm++, off->hitm++, c->hitm++;
		if (s->remote > 0)
			line->remote_hitm++, off->remote_hitm++;
	}
	if (s->access.peer)
		line->peer++;
	if (s->cpu_node >= 0 && s->cpu_node < 32)
		off->cpu_nodes |= 1u << s->cpu_node;
	if (off->last_pid != e->pid || !off->pids_seen) {
		off->pids_seen++;
		off->last_pid = e->pid;
	}
	return 0;
}

static int line_order(const void *a, const void *b)
{
	const struct c2c_line *x = a, *y = b;

	if (x->hitm != y->hitm)
		return x->hitm < y->hitm ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int offset_order(const void *a, const void *b)
{
	const struct c2c_offset *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->sym, y->sym);
}

void c2c_report_sort(struct c2c_report *c)
{
	if (c->nr_lines > 1)
		qsort(c->lines, (size_t)c->nr_lines, sizeof(*c->lines), line_order);
	for (int i = 0; i < c->nr_lines; i++)
		if (c->lines[i].nr_offsets > 1)
			qsort(c->lines[i].offsets, (size_t)c->lines[i].nr_offsets, sizeof(struct c2c_offset),
			      offset_order);
	free(c->slots);
	c->slots = NULL;
	c->nr_slots = 0;
}
