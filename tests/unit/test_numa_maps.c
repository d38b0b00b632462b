/* /proc/PID/numa_maps by node: counts in each mapping's page size, policy and
 * file names not taken for counts, a long file read in pieces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sources/numa_maps.h"

static void test_parse(void)
{
	uint64_t bytes[2] = { 0 }, policy[NUMA_POLICY_NR * 2] = { 0 };
	struct numa_maps_sums sums = { bytes, policy, 2, 0 };

	numa_maps_parse("7f0000000000 default anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n"
			"7f1000000000 bind:1 file=/dev/hugepages/N0=9 huge dirty=2 N1=2 kernelpagesize_kB=2048\n"
			"7f2000000000 interleave:0-1 anon=4 N0=2 N1=2 N3=1 kernelpagesize_kB=4\n"
			"7f3000000000 default file=/usr/lib/x\n"
			"7f4000000000 weighted interleave:0-1 anon=2 N0=1 N1=1 kernelpagesize_kB=4\n"
			"7f5000000000 prefer (many):0-1 anon=1 N1=1 kernelpagesize_kB=4\n"
			"7f6000000000 prefer:1 anon=1 N1=1 kernelpagesize_kB=4\n",
			&sums);
	CHECK_EQ_U64(bytes[0], 6 * 4096);
	CHECK_EQ_U64(bytes[1], 2 * 2048 * 1024 + 5 * 4096);
	/* A node beyond those asked for is counted apart, not dropped into another. */
	CHECK_EQ_U64(sums.other, 4096);
	/* By policy, as mm/mempolicy.c names them (two words for two of them). */
	CHECK_EQ_U64(policy[NUMA_POLICY_DEFAULT * 2 + 0], 3 * 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_BIND * 2 + 1], 2 * 2048 * 1024);
	CHECK_EQ_U64(policy[NUMA_POLICY_INTERLEAVE * 2 + 0], 2 * 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_INTERLEAVE * 2 + 1], 2 * 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_WEIGHTED_INTERLEAVE * 2 + 0], 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_WEIGHTED_INTERLEAVE * 2 + 1], 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_PREFERRED_MANY * 2 + 1], 4096);
	CHECK_EQ_U64(policy[NUMA_POLICY_PREFERRED * 2 + 1], 4096);
	CHECK_EQ_STR(numa_policy_name(NUMA_POLICY_WEIGHTED_INTERLEAVE), "weighted_interleave");
}

/* A file of many lines through a buffer that holds a few: the same sums. */
static void test_read_in_pieces(void)
{
	char dir[] = "/tmp/numa_maps_XXXXXX", path[128], buf[100];
	uint64_t bytes[1] = { 0 };
	struct numa_maps_sums sums = { bytes, NULL, 1, 0 };
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/42", dir);
	CHECK_EQ_INT(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/42/numa_maps", dir);
	f = fopen(path, "w");
	for (int i = 0; i < 1000; i++)
		fprintf(f, "7f%010x default anon=1 dirty=1 N0=1 kernelpagesize_kB=4\n", i);
	fclose(f);
	CHECK_EQ_INT(numa_maps_add_bytes(dir, 42, buf, sizeof(buf), &sums), 0);
	CHECK_EQ_U64(bytes[0], 1000 * 4096);
	CHECK_EQ_U64(sums.other, 0);
	CHECK_EQ_INT(numa_maps_add_bytes(dir, 43, buf, sizeof(buf), &sums), -1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/42", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	test_parse();
	test_read_in_pieces();
	return check_summary("test_numa_maps");
}
