/* The per-user file of memscope validate's verdicts (validation_store.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/validation_store.h"
#include "util/trusted_path.h"

int validation_default_path(char *buf, size_t size, struct ms_error *err)
{
	const char *env = getenv("MEMSCOPE_VALIDATION"), *state = getenv("XDG_STATE_HOME"),
		   *home = getenv("HOME");

	if (env && env[0])
		snprintf(buf, size, "%s", env);
	else if (state && state[0] == '/')
		snprintf(buf, size, "%s/memscope/validation.json", state);
	else if (home && home[0])
		snprintf(buf, size, "%s/.local/state/memscope/validation.json", home);
	else {
		ms_error_set(err, "no place for the verdicts: set HOME, XDG_STATE_HOME or MEMSCOPE_VALIDATION");
		return -1;
	}
	return 0;
}

void validation_machine(char *buf, size_t size)
{
	const char *root = getenv("MEMSCOPE_SYSFS_ROOT");
	char line[512], model[256] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && (!strncmp(line, "model name", 10) || !strncmp(line, "CPU part", 8))) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	/* A fixture machine is its sysfs tree, not the CPU the file was made on. */
	if (root && root[0])
		snprintf(buf, size, "sysfs %s", root);
	else
		snprintf(buf, size, "%s", model);
}

static const char *kind_name(enum verdict_kind k)
{
	return k == VERDICT_AGREES ? "agrees" : k == VERDICT_DISAGREES ? "disagrees" : "unchecked";
}

void verdict_text(const struct verdict *v, char *buf, size_t size)
{
	if (v->kind == VERDICT_UNCHECKED)
		snprintf(buf, size, "cannot be checked: %s", v->why);
	else if (v->absolute)
		snprintf(buf, size, "%s: %.3f against %.3f expected (within %.2f: %s)", kind_name(v->kind), v->measured,
			 v->expected, v->tolerance, v->kind == VERDICT_AGREES ? "yes" : "no");
	else if (v->kind == VERDICT_AGREES)
		snprintf(buf, size, "agrees within %.0f%% (ratio %.3f)", v->tolerance * 100, v->ratio);
	else
		snprintf(buf, size, "disagrees by a factor %.2f (measured / expected; %.0f%% allowed)", v->ratio,
			 v->tolerance * 100);
}

/* The file's directory, made where missing (0700) and opened by a walk from
 * / that, as root, refuses a directory (or a link's directory) another user
 * can change: with HOME kept by sudo, the user could point a link at any
 * directory, or plant the verdicts root reads back. */
static int open_parent(const char *path, const char **base, struct ms_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd;

	*base = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (!**base) {
		ms_error_set(err, "%s names a directory: give the verdicts a file name", path);
		return -1;
	}
	fd = trusted_dir_open(dir, true, "the verdicts file's directory", err);
	if (fd == TRUSTED_REFUSED)
		ms_error_append(err, " (or set MEMSCOPE_VALIDATION to a file of root's)");
	return fd < 0 ? -1 : fd;
}

int validation_write(const char *path, const struct verdict *v, int nr, struct ms_error *err)
{
	char machine[512], date[64], text[600], tmp[4200];
	time_t now = time(NULL);
	json_t *root = json_object(), *list = json_array();
	const char *base;
	int fd, dirfd = -1, status = -1;

	validation_machine(machine, sizeof(machine));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M", localtime(&now));
	json_object_set_new(root, "format", json_string("memscope-validation"));
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "machine", json_string(machine));
	json_object_set_new(root, "date", json_string(date));
	for (int i = 0; i < nr; i++) {
		json_t *o = json_object();

		verdict_text(&v[i], text, sizeof(text));
		json_object_set_new(o, "metric", json_string(v[i].metric));
		json_object_set_new(o, "node", v[i].node < 0 ? json_null() : json_integer(v[i].node));
		json_object_set_new(o, "verdict", json_string(kind_name(v[i].kind)));
		json_object_set_new(o, "text", json_string(text));
		if (v[i].kind != VERDICT_UNCHECKED) {
			json_object_set_new(o, "expected", json_real(v[i].expected));
			json_object_set_new(o, "measured", json_real(v[i].measured));
			json_object_set_new(o, "ratio", json_real(v[i].ratio));
		}
		json_object_set_new(o, "workload", json_string(v[i].workload));
		json_array_append_new(list, o);
	}
	json_object_set_new(root, "verdicts", list);
	if ((dirfd = open_parent(path, &base, err)) < 0)
		goto out;
	/* Written beside and renamed, in the directory judged: a reader never
	 * sees half a file, and nothing is written through a link. */
	snprintf(tmp, sizeof(tmp), "%.200s.tmp", base);
	unlinkat(dirfd, tmp, 0);
	if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
	    json_dumpfd(root, fd, JSON_INDENT(1)) < 0 || close(fd) < 0 || renameat(dirfd, tmp, dirfd, base) < 0) {
		ms_error_set(err, "cannot write %s: %s", path, strerror(errno));
		unlinkat(dirfd, tmp, 0);
		goto out;
	}
	status = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	json_decref(root);
	return status;
}

void validation_explain(const char *metric, FILE *out)
{
	char path[4096], machine[512];
	struct ms_error err = { "" };
	json_error_t jerr;
	json_t *root, *list, *o;
	size_t i;
	bool here;
	int fd;

	if (validation_default_path(path, sizeof(path), &err) < 0)
		return;
	/* As root, verdicts another user could have written are not believed. */
	fd = trusted_open(path, "verdicts file", false, NULL, 0, &err);
	if (fd == TRUSTED_CANNOT_OPEN)    /* none yet (or not readable): nothing to say */
		return;
	if (fd < 0) {
		fprintf(out, "  validation: not used: %s\n", err.text);
		return;
	}
	root = json_loadfd(fd, 0, &jerr);
	close(fd);
	if (!root) {
		fprintf(out, "  validation: %s:%d: %s (memscope validate --write rewrites it)\n", path, jerr.line,
			jerr.text);
		return;
	}
	validation_machine(machine, sizeof(machine));
	here = json_is_string(json_object_get(root, "machine")) &&
	       !strcmp(json_string_value(json_object_get(root, "machine")), machine);
	list = json_object_get(root, "verdicts");
	json_array_foreach(list, i, o) {
		const char *name = json_string_value(json_object_get(o, "metric"));
		const char *text = json_string_value(json_object_get(o, "text"));
		const char *verdict = json_string_value(json_object_get(o, "verdict"));
		json_t *node = json_object_get(o, "node");
		char scope[32] = "system";

		if (!name || strcmp(name, metric) || !text || !verdict)
			continue;
		if (json_is_integer(node))
			snprintf(scope, sizeof(scope), "node %lld", (long long)json_integer_value(node));
		fprintf(out, "  %s %s (%s, %s, by %s): %s\n",
			!strcmp(verdict, "agrees") ? "validated" : !strcmp(verdict, "disagrees") ? "FAILED validation" :
											   "not validated",
			here ? "on this machine" : "on another machine", json_string_value(json_object_get(root, "date")),
			scope, json_string_value(json_object_get(o, "workload")), text);
	}
	json_decref(root);
}

int validation_measured(const char *metric, int node, double *measured, char *date, size_t date_size, char *why,
			size_t why_size)
{
	char path[4096], machine[512];
	struct ms_error err = { "" };
	json_error_t jerr;
	json_t *root, *o;
	size_t i;
	int found = 0;

	if (validation_default_path(path, sizeof(path), &err) < 0) {
		snprintf(why, why_size, "%s", err.text);
		return -1;
	}
	if (access(path, R_OK) < 0) {
		snprintf(why, why_size, "no stored validation (%s): memscope validate --write stores one", path);
		return 0;
	}
	if (!(root = json_load_file(path, 0, &jerr))) {
		snprintf(why, why_size, "%s:%d: %s (memscope validate --write rewrites it)", path, jerr.line, jerr.text);
		return -1;
	}
	validation_machine(machine, sizeof(machine));
	if (!json_is_string(json_object_get(root, "machine")) ||
	    strcmp(json_string_value(json_object_get(root, "machine")), machine) != 0) {
		snprintf(why, why_size, "the stored validation (%s) is of another machine", path);
		json_decref(root);
		return 0;
	}
	json_array_foreach(json_object_get(root, "verdicts"), i, o) {
		const char *name = json_string_value(json_object_get(o, "metric"));
		const char *verdict = json_string_value(json_object_get(o, "verdict"));
		json_t *scope = json_object_get(o, "node");
		json_t *value = json_object_get(o, "measured");

		if (!name || strcmp(name, metric) || !verdict || strcmp(verdict, "agrees") || !json_is_number(value))
			continue;
		if (node < 0 ? !json_is_null(scope) : !json_is_integer(scope) || json_integer_value(scope) != node)
			continue;
		*measured = json_number_value(value);
		snprintf(date, date_size, "%s", json_is_string(json_object_get(root, "date"))
						  ? json_string_value(json_object_get(root, "date")) : "");
		found = 1;
	}
	if (!found)
		snprintf(why, why_size, "the stored validation (%s) has no agreeing verdict for %s%s", path, metric,
			 node < 0 ? "" : " on this node");
	json_decref(root);
	return found;
}
