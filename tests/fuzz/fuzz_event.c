/* The one event parser (-e lists) on the fixture machines: perf names,
 * sysfs aliases, format fields, raw config words, tracepoints, libpfm4
 * names, eBPF series. The first byte picks the machine. */
#include "events/event.h"
#include "fuzz_common.h"

static const char *const machines[] = {
	"skylake-sp-2s", "kunpeng920-2s", "epyc-zen4-2s", "westmere-ep-2s", "neoverse-n1-cmn", "thunderx2-2s",
	"sapphire-rapids-2s", "opteron6300-4s",
};
#define NR_MACHINES (sizeof(machines) / sizeof(machines[0]))
static struct host hosts[NR_MACHINES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < NR_MACHINES; i++)
		fuzz_fixture_host(&hosts[i], machines[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct event *events = NULL;
	struct ms_error err = { "" };
	char *text;
	int nr = 0;

	if (size < 1)
		return 0;
	text = strndup((const char *)data + 1, size - 1);
	if (!text)
		return 0;
	if (event_list_parse(&hosts[data[0] % NR_MACHINES], text, &events, &nr, &err) == 0)
		event_list_free(events, nr);
	else if (!err.text[0])
		abort();          /* a refusal always says why */
	free(text);
	return 0;
}
