/* How `memscope top` presents its model: the full-screen ncurses view with its
 * keys (top_view.c) and the batch output for scripts (top_batch.c). Both read
 * the same model and the same display state (sort column, filter). */
#ifndef MEMSCOPE_TOP_VIEW_H
#define MEMSCOPE_TOP_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sinks/top/top_model.h"

/* What the user chose; shared by both presentations. */
struct top_display {
	enum top_proc_col sort;
	char filter[64];             /* rows whose command contains it (or whose pid is it); "" = all */
	bool paused;                 /* the screen keeps the last values; frames are still taken */
	bool per_tier;               /* the node panel has a row per memory tier (--per-tier, key t) */
	uint64_t interval_ms;
	char recording[128];         /* "off", or where frames are being recorded */
	char notice[256];            /* one line for the status bar ("label added") */
	bool ended;                  /* a replay reached its end: the screen shows the run's totals */
};

/* Does a process row pass the filter? */
bool top_display_shows(const struct top_display *d, const struct top_process_row *row);

/* Batch output: one block per update (format in docs/man/memscope-top.1).
 * Both presentations sort the model's process rows in place. */
void top_batch_print(FILE *out, struct top_model *m, const struct top_display *d);
/* A replay's run totals (the block described in top_batch.c); -1 when out of memory.
 * Printed in batch output only: the full screen shows them itself (display.ended). */
int top_batch_print_totals(FILE *out, const struct top_model *m);

/* Keys ask the command for these. */
enum top_request {
	TOP_REQ_NONE = 0,
	TOP_REQ_QUIT = 1,
	TOP_REQ_INTERVAL = 2,        /* '+' / '-': *interval_steps longer (> 0) or shorter (< 0) */
	TOP_REQ_LABEL = 4,           /* a label was typed: top_view_label() */
};

struct top_view;

/* Start the full screen on the terminal; NULL (and a reason) when it cannot
 * (TERM unknown or dumb): the caller falls back to batch output. */
struct top_view *top_view_open(char *why, size_t size);
/* The terminal's input (keys, and resizes through a signalfd) as one fd to
 * wait on: the sampler watches it. */
int top_view_input_fd(const struct top_view *v);
/* When that fd is readable, on the sampling thread: the bytes typed (into
 * buf; their number) and whether the terminal was resized. Never waits and
 * never touches the screen. */
int top_view_read_input(struct top_view *v, char *buf, size_t size, bool *resized);
/* On the top sink's thread: act on what top_view_read_input read. Returns
 * TOP_REQ_* bits; keys read together add up (two '-' are two steps).
 * Redraws when a key changed what is shown (sort, help, a resize). */
int top_view_keys(struct top_view *v, struct top_model *m, struct top_display *d, const char *bytes, int len,
		  bool resized, int *interval_steps);
const char *top_view_label(const struct top_view *v);
void top_view_draw(struct top_view *v, struct top_model *m, const struct top_display *d);
void top_view_close(struct top_view *v);

/* "12.3k", "4.56M": a rate in at most 7 characters. */
void top_format_rate(char *buf, size_t size, double value);
/* A value of any size: "0.953", "12.5", "4.2M" (Lua columns). */
void top_format_number(char *buf, size_t size, double value);

#endif
