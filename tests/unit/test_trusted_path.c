/* trusted_open and friends on a real tree: links (relative, absolute, to a
 * directory, a loop), "..", relative paths, what is not a regular file (never
 * blocking on a FIFO), and as root the judging of owners and modes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/trusted_path.h"

static char top[PATH_MAX];

static const char *at(const char *rel)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, PATH_MAX, "%s/%s", top, rel);
	return p;
}

/* Opens, reads "hello" and was reached at want (links resolved). */
static void check_opens(const char *path, const char *want)
{
	struct ms_error err = { "" };
	char real[PATH_MAX] = "", text[16] = "";
	int fd = trusted_open(path, "test file", true, real, sizeof(real), &err);

	if (fd < 0) {
		CHECK_FAIL("%s: %s", path, err.text);
		return;
	}
	CHECK_EQ_INT(read(fd, text, sizeof(text) - 1), 5);
	CHECK_EQ_STR(text, "hello");
	CHECK_EQ_STR(real, want);
	CHECK_EQ_INT(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
}

static void check_fails(const char *path, int want, const char *message)
{
	struct ms_error err = { "" };
	int fd = trusted_open(path, "test file", true, NULL, 0, &err);

	CHECK_EQ_INT(fd, want);
	if (fd >= 0)
		close(fd);
	CHECK_CONTAINS(err.text, message);
}

static void test_paths_and_links(void)
{
	char cwd[PATH_MAX], f[PATH_MAX];

	snprintf(f, sizeof(f), "%s", at("a/f"));
	check_opens(f, f);
	check_opens(at("a/../a/./f"), f);
	check_opens(at("rel"), f);          /* rel -> a/f */
	check_opens(at("abs"), f);          /* abs -> TOP/rel */
	check_opens(at("dir/f"), f);        /* dir -> a */
	check_opens(at("up/f"), f);         /* a/b/up -> ../../a, reached as up -> a/b/up */
	if (getcwd(cwd, sizeof(cwd)) && chdir(at("a")) == 0) {
		check_opens("f", f);
		check_opens("../dir/f", f);
		CHECK_EQ_INT(chdir(cwd), 0);
	}
	check_fails(at("loop"), TRUSTED_CANNOT_OPEN, "Too many levels of symbolic links");
	check_fails(at("none"), TRUSTED_CANNOT_OPEN, "No such file or directory");
	check_fails(at("a/f/x"), TRUSTED_CANNOT_OPEN, "Not a directory");
	check_fails(at("a"), TRUSTED_NOT_REGULAR, "is a directory");
	check_fails(at("a/"), TRUSTED_NOT_REGULAR, "is a directory");
	check_fails(at("fifo"), TRUSTED_NOT_REGULAR, "is a FIFO");
	check_fails(at("to-fifo"), TRUSTED_NOT_REGULAR, "is a FIFO");
	check_fails("/dev/null", TRUSTED_NOT_REGULAR, "/dev/null is a character device");
}

static void test_regular_file_open(void)
{
	struct ms_error err = { "" };
	struct stat st;
	int fd = regular_file_open(at("rel"), &st, &err);

	CHECK(fd >= 0 && S_ISREG(st.st_mode) && st.st_size == 5);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_INT(regular_file_open(at("to-fifo"), &st, &err), TRUSTED_NOT_REGULAR);
	CHECK_CONTAINS(err.text, "is a FIFO");
	CHECK_EQ_INT(regular_file_open("/dev/null", &st, &err), TRUSTED_NOT_REGULAR);
	CHECK_CONTAINS(err.text, "/dev/null is a character device");
	CHECK_EQ_INT(regular_file_open(at("none"), &st, &err), TRUSTED_CANNOT_OPEN);
}

static void test_dir_open_creates(void)
{
	struct ms_error err = { "" };
	struct stat st;
	int fd = trusted_dir_open(at("new/x/y"), true, "test dir", &err);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(stat(at("new/x/y"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
	/* Through a link to a directory: made where it leads. */
	fd = trusted_dir_open(at("dir/made"), true, "test dir", &err);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(stat(at("a/made"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_EQ_INT(trusted_dir_open(at("nothere"), false, "test dir", &err), TRUSTED_CANNOT_OPEN);
}

/* As root: owners and modes of the directories on the way and of the file. */
static void test_judging(void)
{
	if (geteuid() != 0)
		return;
	CHECK_EQ_INT(chmod(at("a"), 0777), 0);
	check_fails(at("a/f"), TRUSTED_REFUSED, "the directory ");
	check_fails(at("a/f"), TRUSTED_REFUSED, "/a can be changed by every user (uid 0, mode 0777)");
	/* Links are judged where they are: dir -> a passes its own directory, then a is judged. */
	check_fails(at("dir/f"), TRUSTED_REFUSED, "/a can be changed by every user");
	CHECK_EQ_INT(chmod(at("a"), 01777), 0);   /* sticky, like /tmp */
	check_opens(at("a/f"), at("a/f"));
	CHECK_EQ_INT(chmod(at("a"), 0755), 0);
	CHECK_EQ_INT(chmod(at("a/f"), 0646), 0);
	check_fails(at("a/f"), TRUSTED_REFUSED, "the file ");
	check_fails(at("a/f"), TRUSTED_REFUSED, "can be changed by every user (uid 0, mode 0646), who could make "
		    "root run their code");
	CHECK_EQ_INT(chmod(at("a/f"), 0644), 0);
	CHECK_EQ_INT(chown(at("a/f"), 4242, 4242), 0);
	check_fails(at("a/f"), TRUSTED_REFUSED, "can be changed by its owner (uid 4242, mode 0644)");
	CHECK_EQ_INT(chown(at("a/f"), 0, 0), 0);
	/* A link in another user's directory is not read at all. */
	CHECK_EQ_INT(chown(at("theirs"), 4242, 4242), 0);
	check_fails(at("theirs/to-f"), TRUSTED_REFUSED, "/theirs can be changed by its owner (uid 4242, mode 0755)");
	{
		struct ms_error err = { "" };

		CHECK_EQ_INT(trusted_dir_open(at("theirs/made"), true, "test dir", &err), TRUSTED_REFUSED);
		CHECK_CONTAINS(err.text, "is not written as root");
		CHECK(access(at("theirs/made"), F_OK) < 0);
	}
	check_opens(at("a/f"), at("a/f"));
}

int main(void)
{
	FILE *f;

	snprintf(top, sizeof(top), "/tmp/memscope-trusted-XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	chmod(top, 0755);
	if (mkdir(at("a"), 0755) < 0 || mkdir(at("a/b"), 0755) < 0 || mkdir(at("theirs"), 0755) < 0 ||
	    !(f = fopen(at("a/f"), "w"))) {
		perror(top);
		return 1;
	}
	fputs("hello", f);
	fclose(f);
	chmod(at("a/f"), 0644);
	if (symlink("a/f", at("rel")) < 0 || symlink(at("rel"), at("abs")) < 0 || symlink("a", at("dir")) < 0 ||
	    symlink("../../a", at("a/b/up")) < 0 || symlink("a/b/up", at("up")) < 0 || symlink("loop", at("loop")) < 0 ||
	    mkfifo(at("fifo"), 0644) < 0 || symlink("fifo", at("to-fifo")) < 0 || symlink(at("a/f"), at("theirs/to-f")) < 0) {
		perror(top);
		return 1;
	}
	test_paths_and_links();
	test_regular_file_open();
	test_dir_open_creates();
	test_judging();
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", top);
	}
	return check_summary("trusted_path");
}
