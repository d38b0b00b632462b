/* Verdicts of `memscope validate`, kept per user so that `memscope list
 * --explain METRIC` can say whether the metric was checked on this machine.
 * The file is JSON: {"format": "memscope-validation", "version": 1,
 * "machine": "...", "date": "...", "verdicts": [{metric, scope, verdict,
 * expected, measured, ratio, tolerance, workload, why}]}. */
#ifndef MEMSCOPE_VALIDATION_STORE_H
#define MEMSCOPE_VALIDATION_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

enum verdict_kind { VERDICT_AGREES, VERDICT_DISAGREES, VERDICT_UNCHECKED };

struct verdict {
	char metric[64];
	int node;                   /* -1: the whole system */
	enum verdict_kind kind;
	double expected, measured, ratio, tolerance;
	bool absolute;              /* tolerance is a difference (ratios), not a share */
	char workload[160];
	char why[400];              /* unchecked: why not */
};

/* $MEMSCOPE_VALIDATION, else $XDG_STATE_HOME/memscope/validation.json, else
 * ~/.local/state/memscope/validation.json. */
int validation_default_path(char *buf, size_t size, struct ms_error *err);
/* What names this machine in the file: the CPU model and the sysfs root. */
void validation_machine(char *buf, size_t size);
/* Write the verdicts (the directories made 0700, the file 0600), through
 * the directory's descriptor, walked from / as trusted_dir_open() does: as
 * root, a path through a directory another user can change (a HOME that sudo
 * kept) is refused with the fix. */
int validation_write(const char *path, const struct verdict *v, int nr, struct ms_error *err);
/* Print what the default file says about metric (nothing when it has
 * nothing): "validated on this machine (DATE, ratio R, ...)". As root, a
 * file another user could have written is not believed: "not used" and why. */
void validation_explain(const char *metric, FILE *out);
/* What memscope validate measured for metric in a scope (node -1: the whole
 * system) on this machine, where its verdict was "agrees": 1 with *measured
 * and the date, 0 with why when the file has no such verdict, -1 with why
 * when the file cannot be read. */
int validation_measured(const char *metric, int node, double *measured, char *date, size_t date_size, char *why,
			size_t why_size);
/* "agrees within 5% (ratio 1.012)" and the like. */
void verdict_text(const struct verdict *v, char *buf, size_t size);

#endif
