#include "sinks/http/http_token.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int http_token_generate(struct http_token *t, struct ms_error *err)
{
	unsigned char bytes[16];
	size_t i;

	if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
		ms_error_set(err, "cannot make a token: getrandom: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(bytes); i++)
		snprintf(t->text + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._~+/=-", c);
}

int http_token_read(struct http_token *t, const char *path, const char *option, struct ms_error *err)
{
	char buf[HTTP_TOKEN_MAX + 2];
	struct stat st;
	ssize_t n;
	size_t len;
	/* Decided on the opened file, never on the name: no link followed, and
	 * O_NONBLOCK so a FIFO opens at once (then is refused) instead of
	 * waiting for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		if (errno == ELOOP)
			ms_error_set(err, "%s %s: a symbolic link; give the file itself", option, path);
		else
			ms_error_set(err, "%s %s: %s", option, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ms_error_set(err, "%s %s: not a regular file", option, path);
		goto fail;
	}
	/* Whoever owns the file knows the token: only this user or root may. */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		ms_error_set(err, "%s %s: owned by uid %u, not by the user running memscope (uid %u) or "
			     "root, so its owner knows the token: keep the token in a file of your own", option, path,
			     (unsigned)st.st_uid, (unsigned)geteuid());
		goto fail;
	}
	if (st.st_mode & 077) {
		ms_error_set(err, "%s %s: other users can read or change it (mode %04o): chmod 600 %s", option, path,
			     (unsigned)(st.st_mode & 07777), path);
		goto fail;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		ms_error_set(err, "%s %s: %s", option, path, strerror(errno));
		goto fail;
	}
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	if (len == (size_t)n && n == (ssize_t)sizeof(buf) - 1) {
		ms_error_set(err, "%s %s: the token is longer than %d characters", option, path, HTTP_TOKEN_MAX);
		goto fail;
	}
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		if (!token_char(buf[i])) {
			ms_error_set(err, "%s %s: character %zu of the token is not one of "
				     "A-Z a-z 0-9 . _ ~ + / = -", option, path, i + 1);
			goto fail;
		}
	}
	if (len < HTTP_TOKEN_MIN) {
		ms_error_set(err, "%s %s: the token has %zu characters, at least %d are needed "
			     "(make one: head -c 24 /dev/urandom | base64 > %s)", option, path, len, HTTP_TOKEN_MIN, path);
		goto fail;
	}
	memcpy(t->text, buf, len + 1);
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

bool http_token_equal(const struct http_token *t, const char *text, size_t len)
{
	size_t tlen = strlen(t->text);
	unsigned char diff = (unsigned char)(len != tlen);

	for (size_t i = 0; i < tlen; i++)
		diff |= (unsigned char)(t->text[i] ^ (i < len ? text[i] : 0));
	return diff == 0;
}
