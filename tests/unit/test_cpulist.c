/* Kernel CPU lists: parse, format back, read from a file, reject garbage. */
#include <errno.h>

#include "check.h"
#include "host/cpulist.h"
#include "fixture_tree.h"

static void check_list(const char *text, const char *formatted, int nr)
{
	struct cpulist list;
	char buf[256];

	CHECK_EQ_INT(cpulist_parse(text, &list), 0);
	CHECK_EQ_INT(list.nr, nr);
	cpulist_format(&list, buf, sizeof(buf));
	CHECK_EQ_STR(buf, formatted);
	cpulist_free(&list);
}

static void check_rejected(const char *text)
{
	struct cpulist list = { 0 };

	errno = 0;
	if (cpulist_parse(text, &list) != -1)
		CHECK_FAIL("\"%s\" was accepted as a CPU list", text);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK(list.cpus == NULL && list.nr == 0);
}

static void test_parse(void)
{
	struct cpulist list;

	CHECK_EQ_INT(cpulist_parse("0-3,8,10-11", &list), 0);
	CHECK_EQ_INT(list.nr, 7);
	if (list.nr == 7) {
		int want[] = { 0, 1, 2, 3, 8, 10, 11 };

		for (int i = 0; i < 7; i++)
			CHECK_EQ_INT(list.cpus[i], want[i]);
	}
	cpulist_free(&list);
	CHECK(list.cpus == NULL && list.nr == 0);

	check_list("0-3,8,10-11", "0-3,8,10-11", 7);
	check_list("0-3,8,10-11\n", "0-3,8,10-11", 7);
	check_list("", "", 0);
	check_list("\n", "", 0);
	check_list("5", "5", 1);
	check_list("0,2,4,6,8,10,12,14\n", "0,2,4,6,8,10,12,14", 8);
	check_list("0-7,16-23", "0-7,16-23", 16);
	/* Out of order and repeated CPUs come back sorted and unique. */
	check_list("3,1,2,2", "1-3", 3);
	check_list("8-9,0-1", "0-1,8-9", 4);
	check_list("1023", "1023", 1);
}

static void test_rejects_garbage(void)
{
	const char *bad[] = { "a", "1-", "-1", "3-1", "1,,2", "1,", ",1", "0-3 8", "1x", "0x1",
			      "1-2-3", "99999999999", "4000000000", "0-2000000" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_rejected(bad[i]);
}

static void test_format_truncates_whole_ranges(void)
{
	struct cpulist list;
	char buf[6];

	CHECK_EQ_INT(cpulist_parse("0-3,8,10-11", &list), 0);
	cpulist_format(&list, buf, sizeof(buf));
	/* "0-3,8" fits in 5 characters; ",10-11" does not and is left out whole. */
	CHECK_EQ_STR(buf, "0-3,8");
	cpulist_free(&list);

	struct cpulist empty = { 0 };

	cpulist_format(&empty, buf, sizeof(buf));
	CHECK_EQ_STR(buf, "");
}

static void test_read(void)
{
	char root[256], path[512];
	struct cpulist list;

	tree_new(root, sizeof(root));
	tree_write(root, "online", "0-1,4\n");
	snprintf(path, sizeof(path), "%s/online", root);
	CHECK_EQ_INT(cpulist_read(path, &list), 0);
	CHECK_EQ_INT(list.nr, 3);
	if (list.nr == 3)
		CHECK_EQ_INT(list.cpus[2], 4);
	cpulist_free(&list);

	tree_write(root, "garbage", "0-1,zz\n");
	snprintf(path, sizeof(path), "%s/garbage", root);
	errno = 0;
	CHECK_EQ_INT(cpulist_read(path, &list), -1);
	CHECK_EQ_INT(errno, EINVAL);

	snprintf(path, sizeof(path), "%s/missing", root);
	errno = 0;
	CHECK_EQ_INT(cpulist_read(path, &list), -1);
	CHECK_EQ_INT(errno, ENOENT);
	tree_remove(root);

	/* The live kernel's list parses and has CPU 0 online on any Linux. */
	CHECK_EQ_INT(cpulist_read("/sys/devices/system/cpu/online", &list), 0);
	CHECK(list.nr >= 1);
	if (list.nr >= 1)
		CHECK_EQ_INT(list.cpus[0], 0);
	cpulist_free(&list);
}

int main(void)
{
	test_parse();
	test_rejects_garbage();
	test_format_truncates_whole_ranges();
	test_read();
	return check_summary("test_cpulist");
}
