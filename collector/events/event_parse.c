#include "events/event.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/bpf_series.h"
#include "events/event_names.h"
#include "events/plugin_series.h"
#include "host/host.h"
#include "events/pfm.h"
#include "util/name_list.h"
#include "util/suggest.h"
#include "host/tracefs.h"

static void suggest_everything(const struct host *host, struct suggestions *s)
{
	const struct generic_event *g;
	const char *const *bpf = bpf_series_names();
	char candidate[300];

	for (int i = 0; (g = generic_event_at(i)); i++)
		suggestions_offer(s, g->name);
	/* eBPF series and plugins' series are named with -e too. */
	for (int i = 0; bpf && bpf[i]; i++)
		suggestions_offer(s, bpf[i]);
	for (int i = 0; i < plugin_series_count(); i++) {
		const struct plugin_vocabulary *v = plugin_series_at(i);

		for (int k = 0; k < v->nr_series; k++)
			suggestions_offer(s, v->series[k].name);
	}
	for (int p = 0; p < host->pmus.nr; p++) {
		const struct pmu *pmu = &host->pmus.pmus[p];

		for (int a = 0; a < pmu->nr_aliases; a++) {
			snprintf(candidate, sizeof(candidate), "%s/%s/", pmu->name, pmu->aliases[a].name);
			suggestions_offer(s, candidate);
		}
	}
}

static int parse_generic(const struct host *host, const char *text, struct event *ev, struct ms_error *err)
{
	const struct generic_event *g = generic_event_find(text);
	const struct pmu *found = NULL;
	const struct pmu_alias *alias = NULL;
	int matches = 0;
	struct suggestions s;
	char hint[600];

	if (g) {
		ev->origin = EVENT_GENERIC;
		ev->attr.type = g->type;
		ev->attr.config = g->config;
		if (g->type == PERF_TYPE_SOFTWARE && (g->config == PERF_COUNT_SW_TASK_CLOCK ||
						      g->config == PERF_COUNT_SW_CPU_CLOCK)) {
			/* Counted in ns; shown in msec as perf does. */
			ev->scale = 1e-6;
			snprintf(ev->unit, sizeof(ev->unit), "msec");
		}
		ev->pmu_name = strdup(g->type == PERF_TYPE_SOFTWARE ? "software" : "cpu");
		return ev->pmu_name ? 0 : -1;
	}
	/* A bare alias ("tsc") is accepted when exactly one PMU has it. */
	for (int p = 0; p < host->pmus.nr; p++) {
		const struct pmu_alias *a = pmu_alias_find(&host->pmus.pmus[p], text);

		if (a) {
			matches++;
			found = &host->pmus.pmus[p];
			alias = a;
		}
	}
	if (matches == 1) {
		char full[512];

		snprintf(full, sizeof(full), "%s/%s/", found->name, alias->name);
		free(ev->name);
		ev->name = strdup(full);
		ev->origin = EVENT_SYSFS;
		if (!ev->name || pmu_encode_terms(found, alias->name, &ev->attr, err) < 0)
			return -1;
		ev->attr.type = (uint32_t)found->type;
		ev->scale = alias->scale;
		snprintf(ev->unit, sizeof(ev->unit), "%s", alias->unit ? alias->unit : "");
		ev->pmu_name = strdup(found->name);
		if (!ev->pmu_name) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		return event_bind_pmu(ev, found, err);
	}
	if (matches > 1) {
		ms_error_set(err, "event '%s' is ambiguous: %d PMUs have it (e.g. %s/%s/); "
			     "name the PMU as pmu/%s/", text, matches, found->name, text, text);
		return -1;
	}
	suggestions_init(&s, text);
	suggest_everything(host, &s);
	suggestions_format(&s, hint, sizeof(hint));
	ms_error_set(err, "unknown event '%s'%s; see memscope list --events", text, hint);
	return -1;
}

static int parse_tracepoint(const struct host *host, const char *text, struct event *ev, struct ms_error *err)
{
	const char *colon = strchr(text, ':');
	char subsys[256];
	long long id;
	size_t len = (size_t)(colon - text);

	if (len == 0 || len >= sizeof(subsys) || !colon[1] || strchr(colon + 1, ':')) {
		ms_error_set(err, "'%s' is not a tracepoint name: write subsystem:event, "
			     "e.g. sched:sched_switch", text);
		return -1;
	}
	memcpy(subsys, text, len);
	subsys[len] = '\0';
	id = tracepoint_id(host->roots.sys, subsys, colon + 1, err);
	if (id < 0)
		return -1;
	ev->origin = EVENT_TRACEPOINT;
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = (uint64_t)id;
	ev->pmu_name = strdup("tracepoint");
	return ev->pmu_name ? 0 : -1;
}

/* perf's event modifiers (perf list's "event modifiers"): u, k, h count user,
 * kernel or hypervisor only (any mix); p, pp, ppp the precise level; G, H
 * guest or host only; D pinned; I without idle; S (sampling's read) takes
 * nothing from a count. After a PMU's closing slash or an event name's colon. */
static int apply_modifiers(const char *mods, const char *text, const struct pmu *pmu,
			   struct event *ev, struct ms_error *err)
{
	bool user = false, kernel = false, hv = false;
	int precise = 0;

	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': user = true; break;
		case 'k': kernel = true; break;
		case 'h': hv = true; break;
		case 'p': precise++; break;
		case 'G': ev->attr.exclude_host = 1; break;
		case 'H': ev->attr.exclude_guest = 1; break;
		case 'D': ev->attr.pinned = 1; break;
		case 'I': ev->attr.exclude_idle = 1; break;
		case 'S': break;
		default:
			ms_error_set(err, "'%s': unknown modifier '%c' (perf's: u user, k kernel, h hypervisor, "
				     "p/pp/ppp precise, G guest, H host, D pinned, I no idle, S)", text, *m);
			return -1;
		}
	}
	if (precise > 3) {
		ms_error_set(err, "'%s': at most ppp (precise level 3)", text);
		return -1;
	}
	if ((user || kernel || hv) && pmu && pmu->has_cpumask) {
		ms_error_set(err, "'%s': %s is an uncore PMU, which counts for all privilege levels; "
			     "drop the :%s modifier", text, pmu->name, mods);
		return -1;
	}
	ev->attr.precise_ip = (unsigned)precise;
	if (user || kernel || hv) {
		ev->attr.exclude_user = !user;
		ev->attr.exclude_kernel = !kernel;
		ev->attr.exclude_hv = !hv;
	}
	return 0;
}

/* Are the first len characters of text a generic event's name ("page-faults")? */
static bool is_generic_prefix(const char *text, size_t len)
{
	char name[128];

	if (len >= sizeof(name))
		return false;
	memcpy(name, text, len);
	name[len] = '\0';
	return generic_event_find(name) != NULL;
}

/* "page-faults:u", "sched:sched_switch:k": is what follows the last colon
 * only modifiers (then they are, as perf reads them)? */
static const char *modifier_suffix(const char *text)
{
	const char *colon = strrchr(text, ':');

	if (!colon || !colon[1] || colon == text)
		return NULL;
	for (const char *m = colon + 1; *m; m++)
		if (!strchr("ukhpGHDIS", *m))
			return NULL;
	return colon;
}

static int parse_sysfs(const struct host *host, const char *text, struct event *ev, struct ms_error *err)
{
	const char *first = strchr(text, '/'), *last = strrchr(text, '/');
	char pmu_name[256], terms[1024], hint[600];
	const struct pmu *pmu;
	const struct pmu_alias *alias;
	size_t len = (size_t)(first - text);
	struct suggestions s;

	if (first == last || len == 0 || len >= sizeof(pmu_name) ||
	    (size_t)(last - first - 1) >= sizeof(terms)) {
		ms_error_set(err, "'%s' is not a PMU event: write pmu/alias/ or pmu/field=value,.../, "
			     "e.g. msr/tsc/ or uncore_imc_0/event=0x04,umask=0x03/", text);
		return -1;
	}
	memcpy(pmu_name, text, len);
	pmu_name[len] = '\0';
	memcpy(terms, first + 1, (size_t)(last - first - 1));
	terms[last - first - 1] = '\0';

	pmu = pmu_find(&host->pmus, pmu_name);
	if (!pmu) {
		suggestions_init(&s, pmu_name);
		for (int p = 0; p < host->pmus.nr; p++)
			suggestions_offer(&s, host->pmus.pmus[p].name);
		suggestions_format(&s, hint, sizeof(hint));
		ms_error_set(err, "'%s': no PMU named '%s' in %s/bus/event_source/devices%s; "
			     "see memscope list --pmus", text, pmu_name, host->roots.sys, hint);
		return -1;
	}
	if (!terms[0]) {
		ms_error_set(err, "'%s': no event between the slashes; see memscope list --events", text);
		return -1;
	}
	/* A single word that is neither an alias nor a format flag is most likely a
	 * mistyped alias: say which aliases exist. */
	alias = pmu_alias_find(pmu, terms);
	if (!alias && !strpbrk(terms, "=,") && !pmu_format_find(pmu, terms)) {
		char typed[600];

		snprintf(typed, sizeof(typed), "%s/%s/", pmu->name, terms);
		suggestions_init(&s, typed);
		for (int a = 0; a < pmu->nr_aliases; a++) {
			char candidate[600];

			snprintf(candidate, sizeof(candidate), "%s/%s/", pmu->name, pmu->aliases[a].name);
			suggestions_offer(&s, candidate);
		}
		suggestions_format(&s, hint, sizeof(hint));
		ms_error_set(err, "'%s': PMU %s has no event '%s'%s; see memscope list --events",
			     text, pmu->name, terms, hint);
		return -1;
	}
	ev->origin = EVENT_SYSFS;
	ev->attr.type = (uint32_t)pmu->type;
	if (pmu_encode_terms(pmu, terms, &ev->attr, err) < 0) {
		ms_error_prefix(err, "'%s'", text);
		return -1;
	}
	if (alias) {
		ev->scale = alias->scale;
		snprintf(ev->unit, sizeof(ev->unit), "%s", alias->unit ? alias->unit : "");
	}
	if (apply_modifiers(last + 1, text, pmu, ev, err) < 0)
		return -1;
	ev->pmu_name = strdup(pmu->name);
	if (!ev->pmu_name) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (event_bind_pmu(ev, pmu, err) < 0)
		return -1;
	return 0;
}

static int parse_group_member(const struct host *host, const char *text, const char *brace,
			      struct event *ev, struct ms_error *err);

int event_parse(const struct host *host, const char *text, struct event *ev, struct ms_error *err)
{
	int ret;
	size_t text_len = strlen(text);
	const char *brace = text_len && text[text_len - 1] == '}' ? strrchr(text, '{') : NULL;

	if (brace && brace > text)
		return parse_group_member(host, text, brace, ev, err);
	memset(ev, 0, sizeof(*ev));
	ev->group_hint = -1;
	ev->memory_node = -1;
	ev->scale = 1.0;
	ev->attr.size = sizeof(ev->attr);
	ev->name = strdup(text);
	if (!ev->name) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	if (!*text) {
		ms_error_set(err, "empty event name; see memscope list --events");
		ret = -1;
	} else if (strstr(text, "::")) {
		ret = pfm_event_encode(host, text, ev, err);
	} else if (strchr(text, '/')) {
		ret = parse_sysfs(host, text, ev, err);
	} else if ((strrchr(text, ':') && is_generic_prefix(text, (size_t)(strrchr(text, ':') - text))) ||
		   (modifier_suffix(text) && strchr(text, ':') != modifier_suffix(text))) {
		/* An event with perf's modifiers (a generic event's are checked, one
		 * by one): the event, then them; its name stays as given. */
		const char *colon = strrchr(text, ':');
		char *base = strndup(text, (size_t)(colon - text));

		if (!base) {
			ms_error_set(err, "out of memory");
			ret = -1;
		} else {
			ret = strchr(base, ':') ? parse_tracepoint(host, base, ev, err) : parse_generic(host, base, ev, err);
			free(base);
			if (ret == 0)
				ret = apply_modifiers(colon + 1, text, NULL, ev, err);
		}
	} else if (strchr(text, ':')) {
		ret = parse_tracepoint(host, text, ev, err);
	} else {
		ret = parse_generic(host, text, ev, err);
	}
	if (ret < 0)
		event_free(ev);
	return ret;
}

/* A member of perf's event group with the group's modifiers, "page-faults{u}"
 * (session.c writes it for -e '{page-faults,...}:u'): counted as page-faults:u
 * and named page-faults, as perf names it. A member's own modifiers add to the
 * group's (perf's: '{page-faults:u}:k' counts both and is named page-faults:u). */
static int parse_group_member(const struct host *host, const char *text, const char *brace,
			      struct event *ev, struct ms_error *err)
{
	size_t member_len = (size_t)(brace - text), mods_len = strlen(brace + 1) - 1;
	char *member = strndup(text, member_len);
	char *counted = malloc(member_len + mods_len + 2);
	int ret = -1;

	if (!member || !counted) {
		ms_error_set(err, "out of memory");
	} else {
		/* Modifiers follow a PMU event's closing slash or an existing
		 * modifier list directly, any other event after a colon. */
		bool own_modifiers = strchr(member, '/') ||
				     (modifier_suffix(member) &&
				      (strchr(member, ':') != modifier_suffix(member) ||
				       is_generic_prefix(member, (size_t)(modifier_suffix(member) - member))));

		snprintf(counted, member_len + mods_len + 2, "%s%s%.*s", member, own_modifiers ? "" : ":",
			 (int)mods_len, brace + 1);
		ret = event_parse(host, counted, ev, err);
		if (ret == 0) {
			free(ev->name);
			ev->name = member;
			member = NULL;
		}
	}
	free(member);
	free(counted);
	return ret;
}

void event_names_free(char **names, int nr)
{
	for (int i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

int event_list_parse(const struct host *host, const char *text, struct event **events, int *nr,
		     struct ms_error *err)
{
	struct name_list names = { NULL, 0 };
	struct event *list;

	*events = NULL;
	*nr = 0;
	if (name_list_add_text(&names, text, err) < 0) {
		name_list_free(&names);
		ms_error_prefix(err, "event list");
		return -1;
	}
	list = calloc((size_t)names.nr, sizeof(*list));
	if (!list) {
		name_list_free(&names);
		ms_error_set(err, "out of memory");
		return -1;
	}
	for (int i = 0; i < names.nr; i++) {
		if (event_parse(host, names.names[i], &list[i], err) < 0) {
			event_list_free(list, i);
			name_list_free(&names);
			return -1;
		}
	}
	*events = list;
	*nr = names.nr;
	name_list_free(&names);
	return 0;
}
