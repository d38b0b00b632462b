#include "sources/numa_maps.h"
#include "util/array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const policy_names[NUMA_POLICY_NR] = {
	"default", "preferred", "preferred_many", "bind", "interleave", "weighted_interleave", "local",
};

const char *numa_policy_name(enum numa_policy policy)
{
	return policy >= 0 && policy < NUMA_POLICY_NR ? policy_names[policy] : "?";
}

/* The policy text after the address: "bind:1", "prefer (many):0-1",
 * "weighted interleave:0-1", "default", "interleave=static:0"; -1 when unknown. */
static int policy_of(const char *text, const char *end)
{
	static const struct {
		const char *text;
		enum numa_policy policy;
	} modes[] = {
		/* longer names first: "prefer (many)" before "prefer" */
		{ "prefer (many)", NUMA_POLICY_PREFERRED_MANY }, { "prefer", NUMA_POLICY_PREFERRED },
		{ "weighted interleave", NUMA_POLICY_WEIGHTED_INTERLEAVE }, { "interleave", NUMA_POLICY_INTERLEAVE },
		{ "default", NUMA_POLICY_DEFAULT }, { "bind", NUMA_POLICY_BIND }, { "local", NUMA_POLICY_LOCAL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		size_t len = strlen(modes[i].text);

		if ((size_t)(end - text) >= len && !strncmp(text, modes[i].text, len) &&
		    (text + len == end || strchr(" :=", text[len])))
			return (int)modes[i].policy;
	}
	return -1;
}

/* One line: "ADDR POLICY [file=...] [anon=..] N0=3 N1=5 kernelpagesize_kB=4". */
static void parse_line(const char *line, const char *end, struct numa_maps_sums *sums)
{
	uint64_t pages[64] = { 0 };
	uint64_t page_kb = 4;
	int seen = 0;
	const char *after_address = memchr(line, ' ', (size_t)(end - line));
	int policy = after_address ? policy_of(after_address + 1, end) : -1;

	for (const char *p = line; p < end;) {
		const char *tok = p;
		char *stop;

		while (p < end && *p != ' ')
			p++;
		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9') {
			unsigned long node = strtoul(tok + 1, &stop, 10);

			if (*stop == '=' && seen < 64) {
				uint64_t n = strtoull(stop + 1, NULL, 10);

				pages[seen++] = ((uint64_t)node << 48) | (n & ((1ull << 48) - 1));
			}
		} else if (!strncmp(tok, "kernelpagesize_kB=", 18)) {
			page_kb = strtoull(tok + 18, NULL, 10);
		}
		while (p < end && *p == ' ')
			p++;
	}
	/* The page size ends the line: apply it to the counts before it. */
	for (int i = 0; i < seen; i++) {
		int node = (int)(pages[i] >> 48);
		uint64_t b = (pages[i] & ((1ull << 48) - 1)) * page_kb * 1024;

		if (node < sums->nr_nodes) {
			sums->bytes[node] += b;
			if (sums->policy_bytes && policy >= 0)
				sums->policy_bytes[policy * sums->nr_nodes + node] += b;
		} else {
			sums->other += b;
		}
	}
}

void numa_maps_parse(const char *text, struct numa_maps_sums *sums)
{
	while (*text) {
		const char *end = strchr(text, '\n');

		if (!end)
			end = text + strlen(text);
		parse_line(text, end, sums);
		text = *end ? end + 1 : end;
	}
}

int numa_maps_add_bytes(const char *proc_root, pid_t pid, char *buf, size_t size, struct numa_maps_sums *sums)
{
	char path[4200];
	size_t have = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/numa_maps", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	/* Whole lines at a time: parse what is complete, keep the rest. */
	for (;;) {
		ssize_t n = read(fd, buf + have, size - 1 - have);
		char *last;

		if (n < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		have += (size_t)n;
		buf[have] = '\0';
		if (n == 0) {
			numa_maps_parse(buf, sums);
			break;
		}
		last = strrchr(buf, '\n');
		if (last) {
			*last = '\0';
			numa_maps_parse(buf, sums);
			have -= (size_t)(last + 1 - buf);
			memmove(buf, last + 1, have);
		} else if (have == size - 1) {
			have = 0; /* a line longer than the buffer: not a mapping line */
		}
	}
	close(fd);
	return 0;
}
