#include "sources/damon/damon_follow.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/sysfs.h"

static void *worker_main(void *arg)
{
	struct damon_follow *f = arg;
	pid_t pids[DAMON_FOLLOW_MAX_TARGETS];

	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct ms_error err = { "" };
		int nr, rc;

		while (!f->pending && !f->quit)
			pthread_cond_wait(&f->wake, &f->lock);
		if (f->quit)
			break;
		nr = f->nr_asked;
		memcpy(pids, f->asked, sizeof(pids[0]) * (size_t)nr);
		f->pending = false;
		f->busy = true;
		pthread_mutex_unlock(&f->lock);
		rc = damon_admin_set_targets(f->admin, pids, nr, &err);
		pthread_mutex_lock(&f->lock);
		f->busy = false;
		f->answered = true;
		f->answer = rc;
		f->answer_err = err;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int damon_follow_start(struct damon_follow *f, struct damon_admin *admin, struct ms_error *err)
{
	memset(f, 0, sizeof(*f));
	f->admin = admin;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	if ((errno = pthread_create(&f->thread, NULL, worker_main, f)) != 0) {
		ms_error_set(err, "damon: cannot start the thread that gives the command's children to the kdamond: %s",
			     strerror(errno));
		pthread_cond_destroy(&f->wake);
		pthread_mutex_destroy(&f->lock);
		return -1;
	}
	f->started = true;
	return 0;
}

bool damon_follow_ask(struct damon_follow *f, const pid_t *pids, int nr)
{
	bool taken = false;

	if (!f->started || nr <= 0 || nr > DAMON_FOLLOW_MAX_TARGETS)
		return false;
	pthread_mutex_lock(&f->lock);
	/* One list at a time: its answer says which pids the kernel has. */
	if (!f->pending && !f->busy && !f->answered) {
		memcpy(f->asked, pids, sizeof(pids[0]) * (size_t)nr);
		f->nr_asked = nr;
		f->pending = true;
		taken = true;
		pthread_cond_signal(&f->wake);
	}
	pthread_mutex_unlock(&f->lock);
	return taken;
}

int damon_follow_answer(struct damon_follow *f, pid_t *pids, int *nr, struct ms_error *err)
{
	int rc = 0;

	if (!f->started)
		return 0;
	pthread_mutex_lock(&f->lock);
	if (f->answered) {
		f->answered = false;
		if (f->answer == 0) {
			memcpy(pids, f->asked, sizeof(pids[0]) * (size_t)f->nr_asked);
			*nr = f->nr_asked;
			rc = 1;
		} else {
			*err = f->answer_err;
			rc = -1;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void damon_follow_stop(struct damon_follow *f)
{
	if (!f->started)
		return;
	pthread_mutex_lock(&f->lock);
	f->quit = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->lock);
	f->started = false;
}

static bool listed(const pid_t *pids, int nr, pid_t pid)
{
	for (int i = 0; i < nr; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int damon_children(const char *proc, pid_t pid, pid_t *out, int *nr, int cap)
{
	char path[4200], text[4096];
	struct dirent *e;
	int added = 0;
	DIR *tasks;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	if (!(tasks = opendir(path)))
		return 0;
	while ((e = readdir(tasks))) {
		char *at, *end;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		/* A thread's children (CONFIG_PROC_CHILDREN): "PID PID ... " */
		snprintf(path, sizeof(path), "%s/%d/task/%s/children", proc, (int)pid, e->d_name);
		if (sysfs_read_str(path, text, sizeof(text)) < 0)
			continue;
		for (at = text;; at = end) {
			long child = strtol(at, &end, 10);

			if (end == at)
				break;
			if (child > 0 && !listed(out, *nr, (pid_t)child) && *nr < cap) {
				out[(*nr)++] = (pid_t)child;
				added++;
			}
		}
	}
	closedir(tasks);
	return added;
}

bool damon_process_alive(const char *proc, pid_t pid)
{
	char path[4200], text[512];
	const char *paren;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, (int)pid);
	if (sysfs_read_str(path, text, sizeof(text)) < 0)
		return false;
	/* "PID (comm) S ...": the state after the last ')' (comm may hold one). */
	paren = strrchr(text, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X' && paren[2] != '\0';
}
