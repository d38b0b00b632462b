/* Printing sample reports: the sort-key table (memscope report --sort), the
 * cache-line view (--c2c) and the sample list (--samples), as text for
 * people, CSV or JSON for programs. */
#ifndef MEMSCOPE_SAMPLE_OUTPUT_H
#define MEMSCOPE_SAMPLE_OUTPUT_H

#include <stdio.h>

#include "catalog/sample_decode.h"
#include "metrics/sample_report.h"

enum sample_format { SAMPLE_TEXT, SAMPLE_CSV, SAMPLE_JSON };

struct sample_output {
	FILE *out;
	enum sample_format format;
	int top;                   /* rows (lines) shown in text; 0: all */
	const char *title;         /* what was recorded: "'hotarray 16'" */
	const char *file;          /* the recording */
	const char *events;        /* "page-faults" */
	const struct sample_decoders *decoders;   /* to describe data sources; may be NULL */
};

void sample_output_report(const struct sample_output *o, const struct sample_report *r);
void sample_output_c2c(const struct sample_output *o, const struct c2c_report *c);

/* --samples: one line (or object) per sample, as it is read. */
void sample_output_list_begin(const struct sample_output *o);
void sample_output_list_sample(const struct sample_output *o, const struct attributed_sample *s, bool *first);
void sample_output_list_end(const struct sample_output *o);

#endif
