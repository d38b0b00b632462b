#include "sampler/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int target_parse_pids(struct target *target, const char *text, struct ms_error *err)
{
	const char *p = text;

	target->kind = TARGET_PIDS;
	while (*p) {
		char *end;
		long pid;
		pid_t *grown;

		errno = 0;
		pid = strtol(p, &end, 10);
		if (errno || end == p || pid <= 0 || pid > 0x3fffffff || (*end && *end != ',')) {
			ms_error_set(err, "-p %s: '%.*s' is not a process id; write -p PID[,PID...]",
				     text, (int)strcspn(p, ","), p);
			return -1;
		}
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			ms_error_set(err, "-p %s: no process %ld (it may have exited); "
				     "check with: ps -p %ld", text, pid, pid);
			return -1;
		}
		grown = realloc(target->pids, sizeof(pid_t) * (size_t)(target->nr_pids + 1));
		if (!grown) {
			ms_error_set(err, "out of memory");
			return -1;
		}
		target->pids = grown;
		target->pids[target->nr_pids++] = (pid_t)pid;
		p = *end ? end + 1 : end;
	}
	if (target->nr_pids == 0) {
		ms_error_set(err, "-p needs a process id, e.g. -p 1234");
		return -1;
	}
	return 0;
}

int target_prepare_command(struct target *target, char **argv, struct ms_error *err)
{
	int gate[2], report[2];
	pid_t pid;
	ssize_t n;
	int child_errno = 0;

	/* gate: the child blocks reading it until the counters are attached.
	 * report: close-on-exec, so the parent learns whether exec failed. */
	if (pipe2(gate, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
		ms_error_set(err, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		ms_error_set(err, "cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char go;

		close(gate[1]);
		close(report[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* EOF on the gate (parent closed it) means go; data is never sent. */
		while (read(gate[0], &go, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		child_errno = errno;
		n = write(report[1], &child_errno, sizeof(child_errno));
		(void)n;
		/* As shells and perf: 127 not found, 126 found but not runnable. */
		_exit(child_errno == ENOENT || child_errno == ENOTDIR ? 127 : 126);
	}
	close(gate[0]);
	close(report[1]);
	target->kind = TARGET_COMMAND;
	target->argv = argv;
	target->exec_gate_fd = gate[1];
	target->pids = malloc(sizeof(pid_t));
	if (!target->pids) {
		ms_error_set(err, "out of memory");
		return -1;
	}
	target->pids[0] = pid;
	target->nr_pids = 1;
	target->exec_report_fd = report[0];
	return 0;
}

int target_start_command(struct target *target, struct ms_error *err)
{
	int report = target->exec_report_fd, child_errno = 0;
	ssize_t n;

	target->exec_report_fd = -1;
	close(target->exec_gate_fd);
	target->exec_gate_fd = -1;
	do {
		n = read(report, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(report);
	if (n == (ssize_t)sizeof(child_errno)) {
		int status;

		waitpid(target->pids[0], &status, 0);
		target->child_exited = true;
		target->child_status = status;
		target->exec_failed = true;
		ms_error_set(err, "cannot run '%s': %s%s", target->argv[0], strerror(child_errno),
			     child_errno == ENOENT ? " (not found in PATH; give a path)" : "");
		return -1;
	}
	return 0;
}

int target_list_threads(pid_t pid, pid_t **tids, int *nr, struct ms_error *err)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	pid_t *list = NULL;
	int count = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir) {
		ms_error_set(err, "process %d: cannot list its threads in %s: %s%s", (int)pid, path,
			     strerror(errno), errno == ENOENT ? " (it has exited)" : "");
		return -1;
	}
	while ((de = readdir(dir))) {
		pid_t *grown;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		grown = realloc(list, sizeof(pid_t) * (size_t)(count + 1));
		if (!grown) {
			free(list);
			closedir(dir);
			ms_error_set(err, "out of memory");
			return -1;
		}
		list = grown;
		list[count++] = (pid_t)atoi(de->d_name);
	}
	closedir(dir);
	*tids = list;
	*nr = count;
	return 0;
}

int target_exit_code(const struct target *target)
{
	if (!target->child_exited)
		return 0;
	if (WIFEXITED(target->child_status))
		return WEXITSTATUS(target->child_status);
	if (WIFSIGNALED(target->child_status))
		return 128 + WTERMSIG(target->child_status);
	return 1;
}

void target_free(struct target *target)
{
	free(target->attach);
	target->attach = NULL;
	if (target->kind == TARGET_COMMAND) {
		/* A child still held at the gate must not run: closing the gate would let it exec. */
		if (target->exec_gate_fd > 0 && target->nr_pids && !target->child_exited) {
			kill(target->pids[0], SIGKILL);
			waitpid(target->pids[0], NULL, 0);
		}
		if (target->exec_gate_fd > 0)
			close(target->exec_gate_fd);
		if (target->exec_report_fd > 0)
			close(target->exec_report_fd);
	}
	free(target->pids);
	target->pids = NULL;
	target->nr_pids = 0;
}
