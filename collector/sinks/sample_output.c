#include "sinks/sample_output.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- Helpers ---- */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "0:99% 1:1% ?:0%": where a row's samples were, by node. */
static void nodes_text(const uint64_t *nodes, uint64_t total, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int n = 0; n <= REPORT_NODES_MAX && len < size; n++) {
		if (!nodes[n])
			continue;
		if (n == REPORT_NODES_MAX)
			len += (size_t)snprintf(buf + len, size - len, "%s?:%.0f%%", len ? " " : "",
						pct(nodes[n], total));
		else
			len += (size_t)snprintf(buf + len, size - len, "%s%d:%.0f%%", len ? " " : "", n,
						pct(nodes[n], total));
	}
}

static void remote_text(const struct report_row *row, char *buf, size_t size)
{
	if (row->remote + row->local == 0)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%.1f%%", pct(row->remote, row->remote + row->local));
}

/* CSV field: quoted when it holds a comma, a quote or a newline. */
static void csv_field(FILE *out, const char *s, bool last)
{
	if (strpbrk(s, ",\"\n")) {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	} else {
		fputs(s, out);
	}
	fputc(last ? '\n' : ',', out);
}

static bool key_is(const struct sample_report *r, enum sort_key k)
{
	for (int i = 0; i < r->nr_keys; i++)
		if (r->keys[i] == k)
			return true;
	return false;
}

static json_t *nodes_json(const uint64_t *nodes)
{
	json_t *o = json_object();

	for (int n = 0; n <= REPORT_NODES_MAX; n++) {
		char name[16];

		if (!nodes[n])
			continue;
		snprintf(name, sizeof(name), n == REPORT_NODES_MAX ? "?" : "%d", n);
		json_object_set_new(o, name, json_integer((json_int_t)nodes[n]));
	}
	return o;
}

static void dump_json(FILE *out, json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (text) {
		fputs(text, out);
		fputc('\n', out);
	}
	free(text);
	json_decref(j);
}

/* ---- The sort-key table ---- */

static void report_notes(const struct sample_output *o, const struct sample_report *r, const char *prefix)
{
	FILE *out = o->out;
	uint64_t known = r->remote + r->local;

	fprintf(out, "%s%" PRIu64 " samples of %s from %s (%s)\n", prefix, r->samples, o->events, o->title, o->file);
	fprintf(out, "%sremote: %" PRIu64 " of the %" PRIu64 " samples whose locality is known (%.1f%%)%s\n", prefix,
		r->remote, known, pct(r->remote, known),
		r->unknown ? "" : "");
	if (r->unknown)
		fprintf(out, "%slocality unknown for %" PRIu64 " samples:", prefix, r->unknown);
	for (int f = 0; r->unknown && f < NODE_FROM_COUNT; f++)
		if (f != NODE_FROM_PAGE && f != NODE_FROM_PHYS && f != NODE_FROM_NUMA_MAPS && r->node_from[f])
			fprintf(out, " %" PRIu64 " because %s;", r->node_from[f], sample_node_from_text(f));
	if (r->unknown)
		fprintf(out, "\n");
	if (r->lost[LOST_RING_FULL])
		fprintf(out, "%sLOST: %" PRIu64 " samples: the ring buffer was full (record with more --mmap-pages, or "
			"sample less often with -c or -F)\n", prefix, r->lost[LOST_RING_FULL]);
	if (r->lost[LOST_BY_KERNEL])
		fprintf(out, "%sLOST: %" PRIu64 " samples dropped by the kernel or the hardware before the ring buffer\n",
			prefix, r->lost[LOST_BY_KERNEL]);
	if (r->lost[LOST_UNDELIVERED])
		fprintf(out, "%sLOST: %" PRIu64 " samples the kernel counted were never delivered (the ring buffer was "
			"still full when sampling stopped: record with more --mmap-pages)\n", prefix,
			r->lost[LOST_UNDELIVERED]);
	if (r->lost[LOST_BEHIND])
		fprintf(out, "%sLOST: %" PRIu64 " samples were read but not written: the recording fell behind "
			"(a slow disk, or too many samples: sample less often with -c or -F)\n", prefix,
			r->lost[LOST_BEHIND]);
	if (r->lost[LOST_THROTTLED])
		fprintf(out, "%sTHROTTLED: the kernel stopped sampling %" PRIu64 " times (perf_event_max_sample_rate): "
			"some events were not sampled\n", prefix, r->lost[LOST_THROTTLED]);
	if (r->decode_errors)
		fprintf(out, "%s%" PRIu64 " samples could not be decoded: %s\n", prefix, r->decode_errors,
			r->decode_error);
	if (r->hot_shares)
		fprintf(out, "%sHot: the share of each data object's bytes in DAMON regions accessed in at least %u%% "
			"of an aggregation's samples, over the aggregations whose regions cover it ('-': none did, "
			"DAMON did not monitor the process)\n", prefix, r->hot_pct);
}

static void report_text(const struct sample_output *o, const struct sample_report *r)
{
	FILE *out = o->out;
	int widths[SORT_MAX], shown = o->top > 0 && o->top < r->nr_rows ? o->top : r->nr_rows;
	bool show_nodes = !key_is(r, SORT_NODE), show_cpu_nodes = !key_is(r, SORT_CPU_NODE), weights = false;
	char buf[64];

	report_notes(o, r, "# ");
	fprintf(out, "#\n");
	for (int k = 0; k < r->nr_keys; k++) {
		widths[k] = (int)strlen(sort_keys[r->keys[k]].title);
		for (int i = 0; i < shown; i++) {
			int w = (int)strlen(report_key_text(r, &r->rows[i], k, buf, sizeof(buf)));

			if (w > widths[k])
				widths[k] = w > 72 ? 72 : w;
		}
	}
	for (int i = 0; i < shown; i++)
		weights |= r->rows[i].weighted > 0;
	fprintf(out, "%9s %7s %7s", "Samples", "%", "Remote");
	for (int k = 0; k < r->nr_keys; k++)
		fprintf(out, "  %-*s", widths[k], sort_keys[r->keys[k]].title);
	if (show_nodes)
		fprintf(out, "  %-14s", "Data nodes");
	if (show_cpu_nodes)
		fprintf(out, "  %-14s", "CPU nodes");
	if (r->hot_shares)
		fprintf(out, "  %4s", "Hot");
	if (weights)
		fprintf(out, "  %s", "Latency");
	fprintf(out, "\n");
	for (int i = 0; i < shown; i++) {
		const struct report_row *row = &r->rows[i];
		char remote[16], nodes[128];

		remote_text(row, remote, sizeof(remote));
		fprintf(out, "%9" PRIu64 " %6.1f%% %7s", row->samples, pct(row->samples, r->samples), remote);
		for (int k = 0; k < r->nr_keys; k++)
			fprintf(out, "  %-*.*s", widths[k], widths[k], report_key_text(r, row, k, buf, sizeof(buf)));
		if (show_nodes) {
			nodes_text(row->data_nodes, row->samples, nodes, sizeof(nodes));
			fprintf(out, "  %-14s", nodes);
		}
		if (show_cpu_nodes) {
			nodes_text(row->cpu_nodes, row->samples, nodes, sizeof(nodes));
			fprintf(out, "  %-14s", nodes);
		}
		if (r->hot_shares && row->hot_known)
			fprintf(out, "  %3.0f%%", 100 * row->hot_share);
		else if (r->hot_shares)
			fprintf(out, "  %4s", "-");
		if (weights && row->weighted)
			fprintf(out, "  %.0f", (double)row->weight_sum / (double)row->weighted);
		fprintf(out, "\n");
		for (int l = 0; l < row->nr_lines && l < REPORT_CHAINS; l++)
			fprintf(out, "%26sat %s (%.0f%%)\n", "", row->lines[l].srcline,
				pct(row->lines[l].samples, row->samples));
		for (int c = 0; c < row->nr_chains && c < REPORT_CHAINS; c++)
			fprintf(out, "%26s<- %s (%.0f%%)\n", "", row->chains[c].text,
				pct(row->chains[c].samples, row->samples));
	}
	if (shown < r->nr_rows)
		fprintf(out, "... %d more rows (--top 0 shows every row)\n", r->nr_rows - shown);
}

static void report_csv(const struct sample_output *o, const struct sample_report *r)
{
	FILE *out = o->out;
	char buf[64], nodes[128];

	fprintf(out, "samples,percent,remote,local,unknown,remote_percent");
	for (int k = 0; k < r->nr_keys; k++)
		fprintf(out, ",%s", sort_keys[r->keys[k]].name);
	fprintf(out, ",hitm,data_nodes,cpu_nodes,mean_weight,%scall_chain\n", r->hot_shares ? "hot_share," : "");
	for (int i = 0; i < r->nr_rows; i++) {
		const struct report_row *row = &r->rows[i];

		fprintf(out, "%" PRIu64 ",%.2f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", row->samples,
			pct(row->samples, r->samples), row->remote, row->local, row->unknown);
		if (row->remote + row->local)
			fprintf(out, "%.2f,", pct(row->remote, row->remote + row->local));
		else
			fprintf(out, ",");
		for (int k = 0; k < r->nr_keys; k++)
			csv_field(out, report_key_text(r, row, k, buf, sizeof(buf)), false);
		fprintf(out, "%" PRIu64 ",", row->hitm);
		nodes_text(row->data_nodes, row->samples, nodes, sizeof(nodes));
		csv_field(out, nodes, false);
		nodes_text(row->cpu_nodes, row->samples, nodes, sizeof(nodes));
		csv_field(out, nodes, false);
		if (row->weighted)
			fprintf(out, "%.1f,", (double)row->weight_sum / (double)row->weighted);
		else
			fprintf(out, ",");
		if (r->hot_shares && row->hot_known)
			fprintf(out, "%.4f,", row->hot_share);
		else if (r->hot_shares)
			fprintf(out, ",");
		csv_field(out, row->nr_chains ? row->chains[0].text : "", true);
	}
}

static void report_json(const struct sample_output *o, const struct sample_report *r)
{
	json_t *j = json_object(), *rows = json_array(), *sort = json_array(), *lost = json_object();
	char buf[64];

	for (int k = 0; k < r->nr_keys; k++)
		json_array_append_new(sort, json_string(sort_keys[r->keys[k]].name));
	json_object_set_new(j, "recording", json_string(o->file));
	json_object_set_new(j, "target", json_string(o->title));
	json_object_set_new(j, "events", json_string(o->events));
	json_object_set_new(j, "sort", sort);
	json_object_set_new(j, "samples", json_integer((json_int_t)r->samples));
	json_object_set_new(j, "remote", json_integer((json_int_t)r->remote));
	json_object_set_new(j, "local", json_integer((json_int_t)r->local));
	json_object_set_new(j, "unknown", json_integer((json_int_t)r->unknown));
	json_object_set_new(j, "hitm", json_integer((json_int_t)r->hitm));
	json_object_set_new(lost, "ring_full", json_integer((json_int_t)r->lost[LOST_RING_FULL]));
	json_object_set_new(lost, "kernel", json_integer((json_int_t)r->lost[LOST_BY_KERNEL]));
	json_object_set_new(lost, "throttled", json_integer((json_int_t)r->lost[LOST_THROTTLED]));
	json_object_set_new(lost, "undelivered", json_integer((json_int_t)r->lost[LOST_UNDELIVERED]));
	json_object_set_new(lost, "behind", json_integer((json_int_t)r->lost[LOST_BEHIND]));
	json_object_set_new(j, "lost", lost);
	{
		json_t *why = json_object();

		for (int f = 0; f < NODE_FROM_COUNT; f++)
			if (r->node_from[f])
				json_object_set_new(why, sample_node_from_name(f), json_integer((json_int_t)r->node_from[f]));
		json_object_set_new(j, "node_from", why);
	}
	for (int i = 0; i < r->nr_rows; i++) {
		const struct report_row *row = &r->rows[i];
		json_t *o_row = json_object(), *keys = json_object(), *chains = json_array();

		for (int k = 0; k < r->nr_keys; k++) {
			if (sort_keys[r->keys[k]].numeric)
				json_object_set_new(keys, sort_keys[r->keys[k]].name,
						    row->keys[k].i < 0 ? json_null() : json_integer(row->keys[k].i));
			else
				json_object_set_new(keys, sort_keys[r->keys[k]].name,
						    json_string(report_key_text(r, row, k, buf, sizeof(buf))));
		}
		json_object_set_new(o_row, "keys", keys);
		json_object_set_new(o_row, "samples", json_integer((json_int_t)row->samples));
		json_object_set_new(o_row, "remote", json_integer((json_int_t)row->remote));
		json_object_set_new(o_row, "local", json_integer((json_int_t)row->local));
		json_object_set_new(o_row, "unknown", json_integer((json_int_t)row->unknown));
		json_object_set_new(o_row, "hitm", json_integer((json_int_t)row->hitm));
		json_object_set_new(o_row, "data_nodes", nodes_json(row->data_nodes));
		json_object_set_new(o_row, "cpu_nodes", nodes_json(row->cpu_nodes));
		if (r->hot_shares)
			json_object_set_new(o_row, "hot_share", row->hot_known ? json_real(row->hot_share) : json_null());
		if (row->weighted)
			json_object_set_new(o_row, "mean_weight",
					    json_real((double)row->weight_sum / (double)row->weighted));
		if (row->nr_lines) {
			json_t *lines = json_array();

			for (int l = 0; l < row->nr_lines; l++)
				json_array_append_new(lines, json_pack("{s:s, s:I}", "srcline", row->lines[l].srcline,
								       "samples", (json_int_t)row->lines[l].samples));
			json_object_set_new(o_row, "srclines", lines);
		}
		for (int c = 0; c < row->nr_chains; c++)
			json_array_append_new(chains, json_pack("{s:s, s:I}", "chain", row->chains[c].text, "samples",
								(json_int_t)row->chains[c].samples));
		json_object_set_new(o_row, "call_chains", chains);
		json_array_append_new(rows, o_row);
	}
	json_object_set_new(j, "rows", rows);
	dump_json(o->out, j);
}

void sample_output_report(const struct sample_output *o, const struct sample_report *r)
{
	if (o->format == SAMPLE_CSV)
		report_csv(o, r);
	else if (o->format == SAMPLE_JSON)
		report_json(o, r);
	else
		report_text(o, r);
}

/* ---- Cache lines ---- */

static void nodes_bits_text(uint32_t bits, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int n = 0; n < 32 && len < size; n++)
		if (bits & (1u << n))
			len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "", n);
	if (!len)
		snprintf(buf, size, "?");
}

static void c2c_text(const struct sample_output *o, const struct c2c_report *c)
{
	FILE *out = o->out;
	int shown = 0, limit = o->top > 0 ? o->top : c->nr_lines;

	fprintf(out, "# cache lines of %s from %s (%s): %" PRIu64 " loads, %" PRIu64 " stores, %" PRIu64
		" loads hit a modified line (HITM)\n", o->events, o->title, o->file, c->loads, c->stores, c->hitm);
	if (!c->hitm) {
		fprintf(out, "# no sample says HITM: contended lines are found with a hardware data source (Intel "
			"PEBS load latency, AMD IBS op); memscope list --explain sample.mem says what this host has\n");
		return;
	}
	fprintf(out, "#\n%4s  %-18s  %-30s %8s %6s %7s %7s %7s\n", "#", "Line", "Data object", "Samples", "HITM",
		"Remote", "Loads", "Stores");
	for (int i = 0; i < c->nr_lines && shown < limit; i++) {
		const struct c2c_line *l = &c->lines[i];

		if (!l->hitm)
			break;
		shown++;
		fprintf(out, "%4d  0x%016" PRIx64 "  %-30.30s %8" PRIu64 " %6" PRIu64 " %7" PRIu64 " %7" PRIu64
			" %7" PRIu64 "\n", shown, l->physical ? l->key : l->vaddr, l->obj ? l->obj : "?", l->samples,
			l->hitm, l->remote_hitm, l->loads, l->stores);
		fprintf(out, "        %-7s %6s %6s %6s  %-9s  %s\n", "offset", "loads", "stores", "HITM", "CPU nodes",
			"code");
		for (int k = 0; k < l->nr_offsets; k++) {
			const struct c2c_offset *off = &l->offsets[k];
			char nodes[64];

			nodes_bits_text(off->cpu_nodes, nodes, sizeof(nodes));
			fprintf(out, "        +0x%02x   %6" PRIu64 " %6" PRIu64 " %6" PRIu64 "  %-9s  %s (%s)\n", off->offset,
				off->loads, off->stores, off->hitm, nodes, off->sym, off->srcline);
		}
	}
}

static void c2c_json(const struct sample_output *o, const struct c2c_report *c, bool csv)
{
	json_t *j = json_object(), *lines = json_array();

	if (csv)
		fprintf(o->out, "line,physical,data_object,line_samples,line_hitm,line_remote_hitm,offset,loads,stores,"
			"hitm,remote_hitm,cpu_nodes,sym,srcline\n");
	for (int i = 0; i < c->nr_lines; i++) {
		const struct c2c_line *l = &c->lines[i];
		json_t *lo, *offs;
		char addr[32];

		if (!l->hitm && !l->peer)
			continue;
		lo = json_object();
		offs = json_array();
		snprintf(addr, sizeof(addr), "0x%" PRIx64, l->physical ? l->key : l->vaddr);
		for (int k = 0; k < l->nr_offsets; k++) {
			const struct c2c_offset *off = &l->offsets[k];
			char nodes[64];

			nodes_bits_text(off->cpu_nodes, nodes, sizeof(nodes));
			if (csv) {
				fprintf(o->out, "%s,%d,", addr, l->physical);
				csv_field(o->out, l->obj ? l->obj : "?", false);
				fprintf(o->out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%" PRIu64 ",", l->samples, l->hitm, l->remote_hitm, off->offset, off->loads,
					off->stores, off->hitm, off->remote_hitm);
				csv_field(o->out, nodes, false);
				csv_field(o->out, off->sym, false);
				csv_field(o->out, off->srcline, true);
			}
			json_array_append_new(offs, json_pack("{s:i, s:I, s:I, s:I, s:I, s:s, s:s, s:s}", "offset",
							      (int)off->offset, "loads", (json_int_t)off->loads, "stores",
							      (json_int_t)off->stores, "hitm", (json_int_t)off->hitm,
							      "remote_hitm", (json_int_t)off->remote_hitm, "cpu_nodes",
							      nodes, "sym", off->sym, "srcline", off->srcline));
		}
		json_object_set_new(lo, "line", json_string(addr));
		json_object_set_new(lo, "physical", json_boolean(l->physical));
		json_object_set_new(lo, "data_object", json_string(l->obj ? l->obj : "?"));
		json_object_set_new(lo, "samples", json_integer((json_int_t)l->samples));
		json_object_set_new(lo, "hitm", json_integer((json_int_t)l->hitm));
		json_object_set_new(lo, "remote_hitm", json_integer((json_int_t)l->remote_hitm));
		json_object_set_new(lo, "loads", json_integer((json_int_t)l->loads));
		json_object_set_new(lo, "stores", json_integer((json_int_t)l->stores));
		json_object_set_new(lo, "offsets", offs);
		json_array_append_new(lines, lo);
	}
	if (csv) {
		json_decref(lines);
		json_decref(j);
		return;
	}
	/* csv wrote its rows above; json: the whole view at once */
	json_object_set_new(j, "recording", json_string(o->file));
	json_object_set_new(j, "loads", json_integer((json_int_t)c->loads));
	json_object_set_new(j, "stores", json_integer((json_int_t)c->stores));
	json_object_set_new(j, "hitm", json_integer((json_int_t)c->hitm));
	json_object_set_new(j, "lines", lines);
	dump_json(o->out, j);
}

void sample_output_c2c(const struct sample_output *o, const struct c2c_report *c)
{
	if (o->format == SAMPLE_TEXT)
		c2c_text(o, c);
	else
		c2c_json(o, c, o->format == SAMPLE_CSV);
}

/* ---- Every sample ---- */

void sample_output_list_begin(const struct sample_output *o)
{
	if (o->format == SAMPLE_CSV)
		fprintf(o->out, "time_ns,pid,tid,cpu,event,ip,sym,srcline,dso,addr,data_object,node,cpu_node,remote,"
			"level,op,hitm,peer,weight,data_src\n");
	else if (o->format == SAMPLE_JSON)
		fprintf(o->out, "[");
}

void sample_output_list_sample(const struct sample_output *o, const struct attributed_sample *s, bool *first)
{
	const struct event_sample *e = s->sample;
	char ds[512] = "";

	if (o->decoders && s->data_src)
		sample_decode_describe(o->decoders, s->data_src, ds, sizeof(ds));
	if (o->format == SAMPLE_CSV) {
		fprintf(o->out, "%" PRIu64 ",%u,%u,%d,", e->time_ns, e->pid, e->tid, e->cpu);
		csv_field(o->out, s->event, false);
		fprintf(o->out, "0x%" PRIx64 ",", e->ip);
		csv_field(o->out, s->code.sym, false);
		csv_field(o->out, s->code.srcline, false);
		csv_field(o->out, s->code.dso, false);
		fprintf(o->out, "0x%" PRIx64 ",", e->addr);
		csv_field(o->out, s->data.name, false);
		fprintf(o->out, "%d,%d,%s,%s,%c,%d,%d,%" PRIu64 ",", s->node, s->cpu_node, attrib_remote_text(s->remote),
			s->access.level ? s->access.level : "-", s->access.op ? s->access.op : '-', s->access.hitm,
			s->access.peer, s->weight);
		csv_field(o->out, ds, true);
	} else if (o->format == SAMPLE_JSON) {
		json_t *j = json_pack("{s:I, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:I, s:s}",
				      "time_ns", (json_int_t)e->time_ns, "pid", (int)e->pid, "tid", (int)e->tid, "cpu",
				      e->cpu, "event", s->event, "sym", s->code.sym, "srcline", s->code.srcline, "dso",
				      s->code.dso, "data_object", s->data.name, "remote", attrib_remote_text(s->remote),
				      "level", s->access.level ? s->access.level : "-", "op",
				      s->access.op == 'L' ? "load" : s->access.op == 'S' ? "store" : "-", "hitm",
				      s->access.hitm, "peer", s->access.peer, "weight", (json_int_t)s->weight,
				      "data_src", ds);
		char text[32], *dumped;

		snprintf(text, sizeof(text), "0x%" PRIx64, e->ip);
		json_object_set_new(j, "ip", json_string(text));
		snprintf(text, sizeof(text), "0x%" PRIx64, e->addr);
		json_object_set_new(j, "addr", json_string(text));
		json_object_set_new(j, "node", s->node >= 0 ? json_integer(s->node) : json_null());
		json_object_set_new(j, "cpu_node", s->cpu_node >= 0 ? json_integer(s->cpu_node) : json_null());
		dumped = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fprintf(o->out, "%s\n%s", *first ? "" : ",", dumped ? dumped : "{}");
		free(dumped);
		json_decref(j);
	} else {
		char node[16], cpu_node[16];

		snprintf(node, sizeof(node), s->node >= 0 ? "%d" : "?", s->node);
		snprintf(cpu_node, sizeof(cpu_node), s->cpu_node >= 0 ? "%d" : "?", s->cpu_node);
		fprintf(o->out, "%12.6f %6u/%-6u cpu%-3d %-12s %-24s %-22s %-30s node %-2s cpu node %-2s %-6s%s%s%s\n",
			(double)e->time_ns / 1e9, e->pid, e->tid, e->cpu, s->event, s->code.sym, s->code.srcline,
			s->data.name, node, cpu_node, attrib_remote_text(s->remote), ds[0] ? " " : "", ds,
			s->access.hitm ? " HITM" : "");
	}
	*first = false;
}

void sample_output_list_end(const struct sample_output *o)
{
	if (o->format == SAMPLE_JSON)
		fprintf(o->out, "]\n");
}
