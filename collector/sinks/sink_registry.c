#include "sinks/sink_registry.h"

/* One row per kind; its sinks are added in this order, after the command's own. */
const struct sink_kind *const sink_registry[] = {
	&influx_sink_kind,
	NULL,
};

_Static_assert(sizeof(sink_registry) / sizeof(sink_registry[0]) <= SINK_REGISTRY_MAX + 1,
	       "SINK_REGISTRY_MAX is too small for the registry");
