#include "util/fd_limit.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

bool fd_limit_hit(int errnum)
{
	return errnum == EMFILE || errnum == ENFILE;
}

void fd_limit_explain(int errnum, long needed, char *buf, size_t size)
{
	struct rlimit lim = { 0, 0 };
	long cur, want;

	if (errnum == ENFILE) {
		snprintf(buf, size, "the system's table of open files is full (ENFILE, fs.file-max); close other "
			 "programs or raise it: sudo sysctl fs.file-max=N");
		return;
	}
	getrlimit(RLIMIT_NOFILE, &lim);
	cur = lim.rlim_cur == RLIM_INFINITY ? -1 : (long)lim.rlim_cur;
	want = needed + 256 > cur * 2 ? needed + 256 : cur * 2;
	if (want < 1024)
		want = 1024;
	snprintf(buf, size, "too many open files: the open-file limit is %ld (ulimit -n)%s; fix: ulimit -n %ld%s", cur,
		 needed > 0 ? ", fewer than this run needs" : "", want,
		 lim.rlim_max != RLIM_INFINITY && (unsigned long long)want > (unsigned long long)lim.rlim_max ?
		 " (above the hard limit: raise that as root first, e.g. in /etc/security/limits.conf)" : "");
}

int fd_limit_free(int upto)
{
	int fds[256], n = 0;

	if (upto > 256)
		upto = 256;
	while (n < upto && (fds[n] = fcntl(2, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n;
}
