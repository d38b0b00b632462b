#include "ctl/ctl.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define CLIENT_TIMEOUT_S 5
/* A client that connected and said nothing for this long is let go. */
#define PENDING_TIMEOUT_NS 1000000000ull
/* Clients taken per wakeup: the rest wait for the next one. */
#define SERVE_BUDGET 16

int ctl_socket_dir(char *buf, size_t size, bool create, struct ms_error *err)
{
	const char *runtime = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (runtime && runtime[0] == '/') {
		snprintf(buf, size, "%s/memscope", runtime);
	} else if (geteuid() == 0) {
		snprintf(buf, size, "/run/memscope");
	} else {
		ms_error_set(err, "XDG_RUNTIME_DIR is not set, so there is no private place for the control "
			     "socket; set it (export XDG_RUNTIME_DIR=/run/user/$(id -u)) or run as root");
		return -1;
	}
	if (create && mkdir(buf, 0700) < 0 && errno != EEXIST) {
		ms_error_set(err, "cannot create %s: %s", buf, strerror(errno));
		return -1;
	}
	if (lstat(buf, &st) < 0) {
		ms_error_set(err, "%s: %s (no memscope has run a control socket here)", buf, strerror(errno));
		return -1;
	}
	/* Someone else's directory, or one others may write to, could hold a
	 * socket that is not ours. */
	if (create && (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))) {
		ms_error_set(err, "%s is not a private directory of uid %u (owner %u, mode %03o); remove it "
			     "and run again", buf, (unsigned)geteuid(), (unsigned)st.st_uid,
			     (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

int ctl_socket_path(pid_t pid, char *buf, size_t size, bool create_dir, struct ms_error *err)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];

	if (ctl_socket_dir(dir, sizeof(dir), create_dir, err) < 0)
		return -1;
	if ((size_t)snprintf(buf, size, "%s/%d.sock", dir, (int)pid) >= size) {
		ms_error_set(err, "%s: the directory name is too long for a Unix socket", dir);
		return -1;
	}
	return 0;
}

static int fill_address(struct sockaddr_un *addr, const char *path, struct ms_error *err)
{
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr->sun_path)) {
		ms_error_set(err, "%s: too long for a Unix socket path (at most %zu bytes)", path,
			     sizeof(addr->sun_path) - 1);
		return -1;
	}
	memcpy(addr->sun_path, path, strlen(path) + 1);
	return 0;
}

static void close_all(struct ctl_server *srv);

int ctl_server_open(struct ctl_server *srv, const char *path, struct ms_error *err)
{
	struct sockaddr_un addr;
	struct epoll_event ev = { .events = EPOLLIN };
	struct stat st;
	mode_t old_mask;
	int ret;

	memset(srv, 0, sizeof(*srv));
	srv->fd = srv->listen_fd = -1;
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	if (fill_address(&addr, path, err) < 0)
		return -1;
	/* A socket left by a memscope that was killed (same pid, reused). */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			ms_error_set(err, "%s exists and is not a socket; remove it", path);
			return -1;
		}
		unlink(path);
	}
	srv->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	srv->fd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->listen_fd < 0 || srv->fd < 0) {
		ms_error_set(err, "cannot create the control socket: %s", strerror(errno));
		close_all(srv);
		return -1;
	}
	/* Created 0600 from the start: no moment where others could connect. */
	old_mask = umask(0177);
	ret = bind(srv->listen_fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_mask);
	ev.data.fd = srv->listen_fd;
	if (ret < 0 || listen(srv->listen_fd, 16) < 0 || epoll_ctl(srv->fd, EPOLL_CTL_ADD, srv->listen_fd, &ev) < 0) {
		ms_error_set(err, "cannot listen on %s: %s", path, strerror(errno));
		if (ret == 0)
			unlink(path);
		srv->path[0] = '\0';
		close_all(srv);
		return -1;
	}
	return 0;
}

static bool peer_allowed(int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	*uid = cred.uid;
	return cred.uid == geteuid() || cred.uid == 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop_pending(struct ctl_server *srv, int i)
{
	epoll_ctl(srv->fd, EPOLL_CTL_DEL, srv->pending[i].fd, NULL);
	close(srv->pending[i].fd);
	srv->pending[i] = srv->pending[--srv->nr_pending];
}

/* Accept one client into the pending set; false when there was none. */
static bool accept_one(struct ctl_server *srv)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return false;
	/* Full: the client waiting longest makes room. */
	if (srv->nr_pending == CTL_MAX_PENDING) {
		int oldest = 0;

		for (int i = 1; i < srv->nr_pending; i++)
			if (srv->pending[i].since_ns < srv->pending[oldest].since_ns)
				oldest = i;
		drop_pending(srv, oldest);
	}
	ev.data.fd = fd;
	if (epoll_ctl(srv->fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return true;
	}
	srv->pending[srv->nr_pending++] = (struct ctl_pending){ fd, now_ns() };
	return true;
}

/* The request of a pending client arrived (or it hung up): answer it. */
static void answer(struct ctl_server *srv, int fd, ctl_handler_fn handler, void *ctx)
{
	char request[CTL_MAX_MESSAGE + 1], reply[CTL_MAX_MESSAGE];
	char *arg;
	uid_t uid = (uid_t)-1;
	ssize_t n = recv(fd, request, CTL_MAX_MESSAGE, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	for (int i = 0; i < srv->nr_pending; i++)
		if (srv->pending[i].fd == fd) {
			/* Out of the set; closed below. */
			epoll_ctl(srv->fd, EPOLL_CTL_DEL, fd, NULL);
			srv->pending[i] = srv->pending[--srv->nr_pending];
			break;
		}
	if (!peer_allowed(fd, &uid)) {
		/* The request was read (closing on unread data would reset the
		 * connection before the refusal arrives) but is not looked at. */
		srv->refused++;
		snprintf(reply, sizeof(reply), "error: refused: uid %d is neither the user running this "
			 "memscope (uid %u) nor root", (int)uid, (unsigned)geteuid());
		send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	if (n <= 0) {
		close(fd);
		return;
	}
	request[n] = '\0';
	while (n > 0 && (request[n - 1] == '\n' || request[n - 1] == '\r'))
		request[--n] = '\0';
	arg = strchr(request, ' ');
	if (arg)
		*arg++ = '\0';
	reply[0] = '\0';
	if (!request[0])
		snprintf(reply, sizeof(reply), "error: empty request");
	else if (!ctl_limit_take(&srv->limit))
		snprintf(reply, sizeof(reply), "error: too many control requests (more than %d a second): this one "
			 "was dropped (%lu so far)", CTL_RATE, srv->limit.dropped);
	else if (handler(request, arg ? arg : "", fd, reply, sizeof(reply), ctx) == CTL_ANSWER_LATER)
		return;      /* the handler answers with ctl_reply() */
	ctl_reply(fd, reply);
}

void ctl_reply(int client, const char *reply)
{
	send(client, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(client);
}

void ctl_server_serve(struct ctl_server *srv, ctl_handler_fn handler, void *ctx)
{
	struct epoll_event events[SERVE_BUDGET];
	uint64_t now = now_ns();
	int n;

	/* Clients that connected and never spoke are let go. */
	for (int i = srv->nr_pending - 1; i >= 0; i--)
		if (now - srv->pending[i].since_ns > PENDING_TIMEOUT_NS)
			drop_pending(srv, i);
	n = epoll_wait(srv->fd, events, SERVE_BUDGET, 0);
	for (int i = 0; i < n; i++) {
		if (events[i].data.fd != srv->listen_fd) {
			answer(srv, events[i].data.fd, handler, ctx);
			continue;
		}
		/* New clients, a few per wakeup. */
		for (int k = 0; k < SERVE_BUDGET && accept_one(srv); k++)
			;
	}
}

static void close_all(struct ctl_server *srv)
{
	while (srv->nr_pending > 0)
		drop_pending(srv, srv->nr_pending - 1);
	if (srv->listen_fd >= 0) {
		close(srv->listen_fd);
		if (srv->path[0])
			unlink(srv->path);
	}
	if (srv->fd >= 0)
		close(srv->fd);
	srv->fd = srv->listen_fd = -1;
}

void ctl_server_close(struct ctl_server *srv)
{
	/* Never opened (only fd is set then): nothing to close. */
	if (srv->fd < 0)
		return;
	close_all(srv);
}

int ctl_request(const char *path, const char *request, char *reply, size_t size, struct ms_error *err)
{
	struct sockaddr_un addr;
	struct timeval timeout = { CLIENT_TIMEOUT_S, 0 };
	ssize_t n;
	int fd;

	if (fill_address(&addr, path, err) < 0)
		return -1;
	if (strlen(request) > CTL_MAX_MESSAGE) {
		ms_error_set(err, "the request is longer than %d bytes", CTL_MAX_MESSAGE);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ms_error_set(err, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			ms_error_set(err, "%s: permission denied: the socket belongs to another user; only the "
				     "user running that memscope, or root, may control it", path);
		else if (e == ECONNREFUSED)
			ms_error_set(err, "%s: no memscope is listening there any more (it has ended)", path);
		else
			ms_error_set(err, "cannot connect to %s: %s", path, strerror(e));
		close(fd);
		return -1;
	}
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		ms_error_set(err, "%s: cannot send: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	n = recv(fd, reply, size - 1, 0);
	close(fd);
	if (n <= 0) {
		ms_error_set(err, "%s: no acknowledgement%s%s", path, n < 0 ? ": " : " (memscope ended?)",
			     n < 0 ? strerror(errno) : "");
		return -1;
	}
	reply[n] = '\0';
	return 0;
}

/* Sockets whose process is gone are left by a memscope that was killed. */
static bool process_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int ctl_find_socket(pid_t pid, char *buf, size_t size, struct ms_error *err)
{
	char dir[108], found[16][16];
	struct dirent *de;
	int nr = 0;
	DIR *d;

	if (getenv(CTL_SOCKET_ENV) && getenv(CTL_SOCKET_ENV)[0] && pid <= 0) {
		snprintf(buf, size, "%s", getenv(CTL_SOCKET_ENV));
		return 0;
	}
	if (pid > 0)
		return ctl_socket_path(pid, buf, size, false, err);
	if (ctl_socket_dir(dir, sizeof(dir), false, err) < 0)
		return -1;
	d = opendir(dir);
	if (!d) {
		ms_error_set(err, "cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		int p;
		char tail[8];

		if (sscanf(de->d_name, "%d.%7s", &p, tail) == 2 && !strcmp(tail, "sock") && p > 0 &&
		    process_alive(p) && nr < 16)
			snprintf(found[nr++], sizeof(found[0]), "%d", p);
	}
	closedir(d);
	if (nr == 0) {
		ms_error_set(err, "no running memscope has a control socket in %s (start one with "
			     "'memscope record')", dir);
		return -1;
	}
	if (nr > 1) {
		char list[16 * 17] = "";

		for (int i = 0; i < nr; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s", found[i]);
		ms_error_set(err, "several memscope processes are running (pids%s): choose one with --pid", list);
		return -1;
	}
	if ((size_t)snprintf(buf, size, "%s/%s.sock", dir, found[0]) >= size) {
		ms_error_set(err, "%s: path too long", dir);
		return -1;
	}
	return 0;
}
