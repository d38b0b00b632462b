/* memscope live's HTTP server as a client reaches it: the input, with
 * "TOKEN" replaced by the server's token, is sent as the raw bytes of a
 * request to a server started once on loopback (a page directory with a
 * file inside, a link out of it, and a GET and a POST route), and the
 * answer read to its end. libmicrohttpd parses the request line and
 * headers; memscope's code takes the Host header, the token from the
 * Authorization header, the cookie and the query, the route, the body and
 * the static path. The input is also given, as text, to the path check of
 * static files and to the --listen parser. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sinks/http/http_listen.h"
#include "sinks/http/http_server.h"
#include "fuzz_common.h"

static struct http_server *server;
static int port;
static char token[HTTP_TOKEN_MAX + 1];

static enum MHD_Result answer_get(void *ctx, const struct http_request *req)
{
	(void)ctx;
	return http_respond(req->conn, 200, "text/plain", req->path, strlen(req->path));
}

static enum MHD_Result answer_post(void *ctx, const struct http_request *req)
{
	(void)ctx;
	return http_respond(req->conn, 200, "text/plain", req->body ? req->body : "", req->body ? req->body_len : 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char web[600];
	static const struct http_route routes[] = {
		{ "GET", "/api/ping", HTTP_READ, answer_get, NULL },
		{ "POST", "/api/control", HTTP_CONTROL, answer_post, NULL },
	};
	struct http_server_options opt = { .listen = "127.0.0.1:0", .web_root = web, .idle_timeout_s = 1 };
	struct ms_error err = { "" };
	char path[700], link[700];
	bool usage;

	(void)argc;
	(void)argv;
	snprintf(web, sizeof(web), "%s/web", fuzz_dir());
	mkdir(web, 0755);
	snprintf(path, sizeof(path), "%s/index.html", web);
	write_text(path, "<html>memscope</html>\n");
	snprintf(path, sizeof(path), "%s/lib", web);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/lib/app.js", web);
	write_text(path, "let x = 1;\n");
	snprintf(path, sizeof(path), "%s/secret", fuzz_dir());
	write_text(path, "secret\n");
	snprintf(link, sizeof(link), "%s/leak", web);
	if (symlink(path, link) != 0)
		abort();
	if (http_server_start(&server, &opt, routes, 2, &usage, &err) < 0) {
		fprintf(stderr, "fuzz_http: %s\n", err.text);
		abort();
	}
	port = http_server_listen(server)->port;
	snprintf(token, sizeof(token), "%s", http_server_token(server)->text);
	return 0;
}

/* The input with each "TOKEN" replaced by the token (so requests get past
 * the checks to the routes and files). */
static char *with_token(const uint8_t *data, size_t size, size_t *len)
{
	size_t tlen = strlen(token);
	char *out = malloc(size / 5 * tlen + size + 1);
	size_t n = 0;

	if (!out)
		abort();
	for (size_t i = 0; i < size;) {
		if (i + 5 <= size && !memcmp(data + i, "TOKEN", 5)) {
			memcpy(out + n, token, tlen);
			n += tlen;
			i += 5;
		} else {
			out[n++] = (char)data[i++];
		}
	}
	out[n] = '\0';
	*len = n;
	return out;
}

/* Send the request, read the answer to its end (the server's side is what
 * is checked: its sanitizers, its leaks, its hangs). */
static void exchange(const char *request, size_t len)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval wait = { 0, 100000 };     /* an answer that does not end: the client hangs up */
	char reply[8192];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		abort();
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		abort();
	if (len)
		(void)send(fd, request, len, MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	do
		n = recv(fd, reply, sizeof(reply), 0);
	while (n > 0);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_listen listen;
	struct ms_error err = { "" };
	size_t len;
	char *request = with_token(data, size, &len);

	http_static_path_ok(request);
	if (http_listen_parse(request, &listen, &err) < 0 && !err.text[0])
		abort();          /* a refusal always says why */
	exchange(request, len);
	free(request);
	return 0;
}
