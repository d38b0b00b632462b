/* memscope live's web server core: who may read, who may control, which
 * files are served, and the Prometheus names and numbers. A real server on
 * a loopback port, real TCP clients - one of them another user. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "sinks/http/http_server.h"
#include "sinks/http/prom_processes.h"
#include "sinks/http/prom_text.h"

static int port;

static enum MHD_Result ping(void *ctx, const struct http_request *req)
{
	int *calls = ctx;

	(*calls)++;
	return http_respond(req->conn, 200, "text/plain", "pong\n", 5);
}

static enum MHD_Result control(void *ctx, const struct http_request *req)
{
	char reply[HTTP_MAX_BODY + 16];
	int *calls = ctx;

	(*calls)++;
	snprintf(reply, sizeof(reply), "ok: %s", req->body ? req->body : "");
	return http_respond(req->conn, 200, "text/plain", reply, strlen(reply));
}

/* Send a raw request, return the status code; body into out. */
static int request(const char *raw, char *out, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char buf[8192];
	size_t len = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	if (write(fd, raw, strlen(raw)) != (ssize_t)strlen(raw)) {
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	sscanf(buf, "HTTP/1.%*d %d", &status);
	if (out) {
		const char *body = strstr(buf, "\r\n\r\n");

		snprintf(out, size, "%s", body ? body + 4 : "");
	}
	return status;
}

static int get(const char *path, const char *headers, char *out, size_t size)
{
	char raw[2048];

	snprintf(raw, sizeof(raw), "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s\r\n", path,
		 port, headers ? headers : "");
	return request(raw, out, size);
}

static int post(const char *path, const char *headers, const char *body, char *out, size_t size)
{
	char raw[4096];

	snprintf(raw, sizeof(raw),
		 "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Length: %zu\r\n%s\r\n%s",
		 path, port, strlen(body), headers ? headers : "", body);
	return request(raw, out, size);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		CHECK_FAIL("cannot write %s", path);
	if (fd >= 0) {
		fchmod(fd, mode);
		close(fd);
	}
}

static void test_paths(void)
{
	CHECK(http_static_path_ok("/"));
	CHECK(http_static_path_ok("/index.html"));
	CHECK(http_static_path_ok("/lib/uPlot.min.css"));
	CHECK(!http_static_path_ok("/../etc/passwd"));
	CHECK(!http_static_path_ok("/lib/../../x"));
	CHECK(!http_static_path_ok("/lib/.."));
	CHECK(!http_static_path_ok("/.git/config"));
	CHECK(!http_static_path_ok("//etc/passwd"));
	CHECK(!http_static_path_ok("/lib/"));
	CHECK(!http_static_path_ok("/a\\..\\b"));
	CHECK(!http_static_path_ok("index.html"));
	CHECK(!http_static_path_ok("/a\nb"));
}

static void test_loopback_hosts(void)
{
	static const char *const good[] = { "localhost", "localhost:8720", "127.0.0.1", "127.0.0.1:1", "127.9.8.7:65535",
					     "[::1]", "[::1]:8720", "LocalHost:8720" };
	/* Names a site can rebind to 127.0.0.1, shorthand, junk after a port. */
	static const char *const bad[] = { "127.evil.example", "127.evil.example:8720", "127.0.0.1.nip.io",
					   "127.0.0.1.nip.io:80", "localhost.evil", "127.1", "0x7f.0.0.1", "127.0.0.1:",
					   "127.0.0.1:123456", "127.0.0.1:80x", "[::1]x", "[::2]", "[::1", "10.0.0.1",
					   "", "127.0.0.01" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(http_host_is_loopback(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!http_host_is_loopback(bad[i]));
}

/* 25 processes, pid p with p faults: the 20 busiest get places (6-25);
 * an ended one's place goes to the busiest without one; an idle one keeps
 * its place for PROM_PROCESS_IDLE_NS, then loses it; one that counts
 * nothing never gets one. */
static void test_process_places(void)
{
	struct prom_processes p = { 0 };
	struct prom_activity acts[25];
	int n;

	for (int i = 0; i < 25; i++)
		acts[i] = (struct prom_activity){ i + 1, i + 1, 0 };
	prom_processes_update(&p, acts, 25, 1000, 0);
	for (int pid = 1; pid <= 25; pid++)
		CHECK(prom_processes_has(&p, pid) == (pid >= 6));
	/* 25 ends; 5 is the busiest left. */
	for (int i = 0; i < 24; i++)
		acts[i] = (struct prom_activity){ i + 1, i + 1, 0 };
	prom_processes_update(&p, acts, 24, 2000, 0);
	CHECK(!prom_processes_has(&p, 25) && prom_processes_has(&p, 5) && !prom_processes_has(&p, 4));
	/* 24 idles: kept until the idle time has passed, then 4 takes its place. */
	for (int i = 0; i < 24; i++)
		acts[i] = (struct prom_activity){ i + 1, i == 23 ? 0 : i + 1, 0 };
	prom_processes_update(&p, acts, 24, 2000 + PROM_PROCESS_IDLE_NS, 0);
	CHECK(prom_processes_has(&p, 24) && !prom_processes_has(&p, 4));
	for (int i = 0; i < 24; i++)
		acts[i] = (struct prom_activity){ i + 1, i == 23 ? 0 : i + 1, 0 };
	prom_processes_update(&p, acts, 24, 2001 + PROM_PROCESS_IDLE_NS, 0);
	CHECK(!prom_processes_has(&p, 24) && prom_processes_has(&p, 4));
	/* Nothing counted: no place, however many are free. */
	memset(&p, 0, sizeof(p));
	acts[0] = (struct prom_activity){ 7, 0, 0 };
	prom_processes_update(&p, acts, 1, 1, 0);
	n = 0;
	for (int i = 0; i < PROM_PROCESSES; i++)
		n += p.place[i].pid != 0;
	CHECK(n == 0 && !prom_processes_has(&p, 0));
	/* Measuring the machine: a process younger than the minimum age waits. */
	acts[0] = (struct prom_activity){ 7, 100, 1000 };
	acts[1] = (struct prom_activity){ 8, 1, 0 };
	prom_processes_update(&p, acts, 2, 1000 + PROM_PROCESS_MIN_AGE_NS - 1, PROM_PROCESS_MIN_AGE_NS);
	CHECK(!prom_processes_has(&p, 7) && prom_processes_has(&p, 8));
	acts[0] = (struct prom_activity){ 7, 100, 1000 };
	prom_processes_update(&p, acts, 1, 1000 + PROM_PROCESS_MIN_AGE_NS, PROM_PROCESS_MIN_AGE_NS);
	CHECK(prom_processes_has(&p, 7));
}

static void test_prom_names(void)
{
	struct prom_name n;
	char num[40];

	prom_name_of("mem.read_bytes", "B", 1, PROM_COUNTER, &n);
	CHECK_EQ_STR(n.sample, "memscope_mem_read_bytes_total");
	CHECK_EQ_STR(n.family, "memscope_mem_read_bytes");
	CHECK_EQ_STR(n.unit, "bytes");
	prom_name_of("mem.read_bw", "B/s", 1, PROM_GAUGE, &n);
	CHECK_EQ_STR(n.sample, "memscope_mem_read_bw_bytes_per_second");
	prom_name_of("task-clock", "msec", 1e-6, PROM_COUNTER, &n);
	CHECK_EQ_STR(n.sample, "memscope_task_clock_seconds_total");
	CHECK_NEAR(n.factor, 1e-9, 1e-20);
	prom_name_of("sched.offcpu_ns", "ns", 1, PROM_COUNTER, &n);
	CHECK_EQ_STR(n.sample, "memscope_sched_offcpu_seconds_total");
	prom_name_of("exceptions:page_fault_user", "", 1, PROM_COUNTER, &n);
	CHECK_EQ_STR(n.sample, "memscope_exceptions_page_fault_user_total");
	prom_name_of("page-faults", "", 1, PROM_COUNTER, &n);
	CHECK_EQ_STR(n.sample, "memscope_page_faults_total");
	CHECK_EQ_STR(n.unit, "");
	prom_name_of("mem.remote_ratio", "", 1, PROM_GAUGE, &n);
	CHECK_EQ_STR(n.sample, "memscope_mem_remote_ratio");
	prom_name_of("proc.threads", "", 1, PROM_GAUGE, &n);
	CHECK_EQ_STR(n.sample, "memscope_proc_threads");

	prom_format_double(131072, num, sizeof(num));
	CHECK_EQ_STR(num, "131072");
	prom_format_double(0.1, num, sizeof(num));
	CHECK_EQ_STR(num, "0.1");
	prom_format_double(1.0 / 3, num, sizeof(num));
	CHECK(strtod(num, NULL) == 1.0 / 3);
	prom_format_double(12345678.901234567, num, sizeof(num));
	CHECK(strtod(num, NULL) == 12345678.901234567);
}

static void test_prom_text(void)
{
	struct text_buf b = { 0 };
	struct prom_name n;
	struct prom_label labels[] = { { "node", "1" }, { "comm", "a \"b\"\\c\n" }, { "cpu", NULL } };

	prom_name_of("mem.read_bytes", "B", 1, PROM_COUNTER, &n);
	prom_family(&b, PROM_TEXT, &n, PROM_COUNTER, "Bytes read\nfrom DRAM");
	prom_sample(&b, PROM_TEXT, &n, PROM_COUNTER, labels, 3, 4096);
	prom_end(&b, PROM_TEXT);
	CHECK_EQ_STR(b.text, "# HELP memscope_mem_read_bytes_total Bytes read\\nfrom DRAM\n"
			     "# TYPE memscope_mem_read_bytes_total counter\n"
			     "memscope_mem_read_bytes_total{node=\"1\",comm=\"a \\\"b\\\"\\\\c\\n\"} 4096\n");
	text_buf_clear(&b);
	prom_family(&b, PROM_OPENMETRICS, &n, PROM_COUNTER, "Bytes read");
	prom_sample(&b, PROM_OPENMETRICS, &n, PROM_COUNTER, labels, 1, 0.5);
	prom_end(&b, PROM_OPENMETRICS);
	CHECK_EQ_STR(b.text, "# HELP memscope_mem_read_bytes Bytes read\n"
			     "# TYPE memscope_mem_read_bytes counter\n"
			     "# UNIT memscope_mem_read_bytes bytes\n"
			     "memscope_mem_read_bytes_total{node=\"1\"} 0.5\n# EOF\n");
	CHECK(prom_format_from_accept("application/openmetrics-text; version=1.0.0,text/plain;q=0.5") ==
	      PROM_OPENMETRICS);
	CHECK(prom_format_from_accept("text/plain") == PROM_TEXT);
	CHECK(prom_format_from_accept(NULL) == PROM_TEXT);
	text_buf_free(&b);
}

static void test_refusals(const char *dir)
{
	struct http_server_options opt = { .listen = "0.0.0.0:0" };
	struct http_server *s;
	struct ms_error err = { "" };
	char path[512];
	bool usage;

	CHECK(http_server_start(&s, &opt, NULL, 0, &usage, &err) < 0);
	CHECK(usage);
	CHECK_CONTAINS(err.text, "not a loopback address");
	CHECK_CONTAINS(err.text, "--remote");

	opt.listen = "127.0.0.1";
	CHECK(http_server_start(&s, &opt, NULL, 0, &usage, &err) < 0);
	CHECK(usage);
	CHECK_CONTAINS(err.text, "ADDRESS:PORT");

	snprintf(path, sizeof(path), "%s/token-open", dir);
	write_file(path, "0123456789abcdef0123\n", 0644);
	opt.listen = "127.0.0.1:0";
	opt.token_file = path;
	CHECK(http_server_start(&s, &opt, NULL, 0, &usage, &err) < 0);
	CHECK_CONTAINS(err.text, "chmod 600");

	snprintf(path, sizeof(path), "%s/token-short", dir);
	write_file(path, "abc\n", 0600);
	CHECK(http_server_start(&s, &opt, NULL, 0, &usage, &err) < 0);
	CHECK_CONTAINS(err.text, "at least 16");
}

/* Another user on this machine: neither reads nor controls. */
static void test_other_user(const char *token_header)
{
	pid_t pid;
	int status = -1; /* not an exit status if waitpid fails */

	if (geteuid() != 0) {
		fprintf(stderr, "test_http_server: not root, the other-user check is left out\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(99);
		bad += get("/api/ping", NULL, NULL, 0) != 403;
		bad += get("/", NULL, NULL, 0) != 403;
		bad += post("/api/control", NULL, "pause", NULL, 0) != 403;
		/* With the token they get in, as anyone would. */
		bad += get("/api/ping", token_header, NULL, 0) != 200;
		_exit(bad);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ_INT(WEXITSTATUS(status), 0);
}

static void test_server(const char *dir)
{
	char web[512], outside[600], link[600], body[4096], auth[300], cookie[300], query[300];
	int pings = 0, controls = 0;
	struct http_route routes[] = {
		{ "GET", "/api/ping", HTTP_READ, ping, &pings },
		{ "POST", "/api/control", HTTP_CONTROL, control, &controls },
	};
	struct http_server_options opt = { .listen = "127.0.0.1:0", .web_root = web };
	struct http_server *s;
	struct ms_error err = { "" };
	const char *token;
	bool usage;

	snprintf(web, sizeof(web), "%s/web", dir);
	mkdir(web, 0755);
	snprintf(body, sizeof(body), "%s/index.html", web);
	write_file(body, "<html>memscope</html>\n", 0644);
	snprintf(body, sizeof(body), "%s/lib", web);
	mkdir(body, 0755);
	snprintf(body, sizeof(body), "%s/lib/app.js", web);
	write_file(body, "let x = 1;\n", 0644);
	snprintf(outside, sizeof(outside), "%s/secret", dir);
	write_file(outside, "secret\n", 0644);
	snprintf(link, sizeof(link), "%s/leak", web);
	CHECK(symlink(outside, link) == 0);

	if (http_server_start(&s, &opt, routes, 2, &usage, &err) < 0) {
		CHECK_FAIL("server: %s", err.text);
		return;
	}
	port = http_server_listen(s)->port;
	CHECK(port > 0);
	token = http_server_token(s)->text;
	CHECK_EQ_INT((long long)strlen(token), 32);
	CHECK_CONTAINS(http_server_url(s), token);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
	snprintf(cookie, sizeof(cookie), "Cookie: memscope_token=%s\r\n", token);
	snprintf(query, sizeof(query), "/api/ping?token=%s", token);

	/* The page and reads, for the same user on loopback. */
	CHECK_EQ_INT(get("/", NULL, body, sizeof(body)), 200);
	CHECK_EQ_STR(body, "<html>memscope</html>\n");
	CHECK_EQ_INT(get("/lib/app.js", NULL, body, sizeof(body)), 200);
	CHECK_EQ_INT(get("/api/ping", NULL, body, sizeof(body)), 200);
	CHECK_EQ_INT(pings, 1);
	CHECK_EQ_INT(get("/missing.js", NULL, NULL, 0), 404);

	/* Nothing outside the web root, however it is spelled. */
	CHECK_EQ_INT(get("/../secret", NULL, body, sizeof(body)), 403);
	CHECK_EQ_INT(get("/%2e%2e/secret", NULL, NULL, 0), 403);
	CHECK_EQ_INT(get("/lib/../../secret", NULL, NULL, 0), 403);
	CHECK_EQ_INT(get("/lib/%2E%2E/%2E%2E/secret", NULL, NULL, 0), 403);
	CHECK_EQ_INT(get("/leak", NULL, body, sizeof(body)), 403);
	CHECK(!strstr(body, "secret\n") || strstr(body, "error"));
	CHECK_EQ_INT(get("//etc/passwd", NULL, NULL, 0), 403);

	/* Control needs the token in a header; a cookie (which a browser sends
	 * along with another site's request) is not enough. */
	CHECK_EQ_INT(post("/api/control", NULL, "pause", body, sizeof(body)), 403);
	CHECK_CONTAINS(body, "token");
	CHECK_EQ_INT(post("/api/control", cookie, "pause", NULL, 0), 403);
	CHECK_EQ_INT(post("/api/control", "Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n", "pause",
			  NULL, 0), 403);
	CHECK_EQ_INT(controls, 0);
	CHECK_EQ_INT(post("/api/control", auth, "pause", body, sizeof(body)), 200);
	CHECK_EQ_STR(body, "ok: pause");
	CHECK_EQ_INT(controls, 1);
	CHECK_EQ_INT(get("/api/control", auth, NULL, 0), 405);

	/* A name rebound to 127.0.0.1 by another site is refused. */
	{
		char raw[256];

		snprintf(raw, sizeof(raw), "GET /api/ping HTTP/1.1\r\nHost: evil.example:%d\r\nConnection: close\r\n\r\n",
			 port);
		CHECK_EQ_INT(request(raw, NULL, 0), 403);
	}
	/* ?token= opens the page and sets the cookie for what the page loads. */
	{
		char raw[512], resp[4096];
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		ssize_t n;

		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		snprintf(raw, sizeof(raw), "GET /?token=%s HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n",
			 token, port);
		CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
		CHECK(write(fd, raw, strlen(raw)) == (ssize_t)strlen(raw));
		n = read(fd, resp, sizeof(resp) - 1);
		resp[n > 0 ? n : 0] = '\0';
		close(fd);
		CHECK_CONTAINS(resp, "Set-Cookie: memscope_token=");
		CHECK_CONTAINS(resp, "HttpOnly; SameSite=Strict");
	}
	CHECK_EQ_INT(get(query, NULL, NULL, 0), 200);
	test_other_user(auth);
	http_server_stop(s);
	unlink(link);
}

int main(void)
{
	char dir[] = "/tmp/memscope-http-XXXXXX";

	if (!mkdtemp(dir))
		return 1;
	chmod(dir, 0755);
	test_paths();
	test_loopback_hosts();
	test_process_places();
	test_prom_names();
	test_prom_text();
	test_refusals(dir);
	test_server(dir);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	return check_summary("http_server");
}
