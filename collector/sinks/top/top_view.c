/* The full-screen view of memscope top (ncursesw). Each draw erases the
 * virtual screen, writes it again and sends only the differences
 * (wnoutrefresh + doupdate), so a refresh several times a second does not
 * flicker. SIGWINCH is taken through a signalfd in the same wait as the keys,
 * so a resize redraws at once, not at the next frame. */
#include <curses.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lua/lua_engine.h"
#include "sinks/top/top_layout.h"
#include "sinks/top/top_view.h"
#include "util/array.h"

enum prompt_kind { PROMPT_NONE, PROMPT_LABEL, PROMPT_FILTER };

struct top_view {
	SCREEN *screen;
	int winch_fd;                /* signalfd for SIGWINCH: a resize wakes the loop at once */
	int wait_fd;                 /* epoll set of the terminal and winch_fd, for the sampler */
	sigset_t old_mask;
	bool show_help;
	enum prompt_kind prompt;
	char input[128];             /* what is being typed at the prompt */
	size_t input_len;
	char label[128];             /* the last label typed */
};

/* Narrow terminals: the columns each table shows in this draw. */
#define MAX_PROC_COLS (9 + TOP_MAX_NODES)
#define THREAD_NR_COLS 5

enum proc_cell { PC_THR, PC_FAULTS, PC_ALLOC, PC_ALLOC_NODE, PC_REMOTE, PC_CPU, PC_OFFCPU, PC_MIGR, PC_HOT, PC_COLD };

struct proc_column {
	enum proc_cell cell;
	int node;                    /* PC_ALLOC_NODE: node index */
	char title[16];
	int width;
};

struct layout {
	bool node[TOP_NODE_NR_COLS];
	int node_hidden;
	bool lua[TOP_MAX_LUA_COLS];
	int lua_hidden;
	struct proc_column proc_cols[MAX_PROC_COLS];
	int nr_proc_cols;
	bool proc[MAX_PROC_COLS];
	int proc_hidden;
	bool thread[THREAD_NR_COLS];
	int thread_hidden;
};

/* The priorities: the higher the rank, the sooner a column leaves a narrow
 * terminal (the man page's COLUMNS lists the same order). Node panel: */
static const int node_drop_rank[TOP_NODE_NR_COLS] = {
	[TOP_NODE_READ_BW] = 0, [TOP_NODE_WRITE_BW] = 1, [TOP_NODE_REMOTE_PCT] = 2, [TOP_NODE_FAULTS] = 3,
	[TOP_NODE_PAGES_ALLOC] = 4, [TOP_NODE_NUMA_MISS] = 5, [TOP_NODE_NUMA_FOREIGN] = 6,
	[TOP_NODE_MIGRATIONS] = 7, [TOP_NODE_PAGES_MIGRATED] = 8, [TOP_NODE_DAMON_COLD] = 9,
	[TOP_NODE_DAMON_HOT] = 10, [TOP_NODE_USED] = 11, [TOP_NODE_FREE] = 12, [TOP_NODE_PROMOTED] = 13,
	[TOP_NODE_DEMOTED] = 14,
};

/* Process table (PID stays; COMMAND is cut only when nothing else can go). */
static const struct {
	const char *title;
	int width;
	int drop_rank;
} proc_cells[] = {
	[PC_THR] = { "THR", 4, 5 },         [PC_FAULTS] = { "FAULTS/s", 9, 0 },
	[PC_ALLOC] = { "ALLOC/s", 8, 1 },   [PC_ALLOC_NODE] = { "ALLOC_N<i>/s", 10, 4 },
	[PC_REMOTE] = { "REMOTE%", 7, 2 },  [PC_CPU] = { "CPU%", 6, 3 },
	[PC_OFFCPU] = { "OFFCPU%", 7, 9 },  [PC_MIGR] = { "MIGR/s", 7, 8 },
	[PC_HOT] = { "HOT_B", 7, 6 },       [PC_COLD] = { "COLD_B", 7, 7 },
};
#define PROC_MAX_RANK 9

/* Threads of the focused process (TID stays, COMMAND as above). */
static const struct {
	const char *title;
	int width;
	int drop_rank;
} thread_cells[THREAD_NR_COLS] = {
	{ "S", 1, 4 }, { "CPU", 4, 3 }, { "NODE", 4, 2 }, { "FAULTS/s", 9, 0 }, { "CPU%", 6, 1 },
};
#define COMMAND_MIN_WIDTH 15         /* a whole comm (TASK_COMM_LEN - 1) */

/* Short column titles for an 80-column terminal; units in the help. */
/* The node columns' titles are the model's names (top_node_col_name), the
 * same as top -b prints; a column is as wide as its title, 8 at least. */
static int node_col_width(int c)
{
	int w = (int)strlen(top_node_col_name((enum top_node_col)c));

	return w < 8 ? 8 : w;
}

#define HELP_NAME_WIDTH 11           /* the names in front of each help line below */
static const char *const process_help[] = {
	"PID THR    process id; its threads (the kernel's count)",
	"FAULTS/s   page faults per second of all its threads, user and kernel",
	"ALLOC/s    pages per second allocated for it (ALLOC_N<i>/s: on node i, with several nodes)",
	"REMOTE%    remote share of its memory accesses (core PMU local/remote DRAM events)",
	"CPU%       on-CPU time over wall time, percent of one CPU",
	"OFFCPU%    off-CPU share of the time its threads were switched in or out",
	"MIGR/s     its task migrations per second between CPUs",
	"HOT_B      its resident bytes in regions DAMON saw hot (largest processes; pagemap)",
	"COLD_B     its resident bytes in regions DAMON saw idle for the cold age",
	"COMMAND    its name (comm)",
};

static const char *const node_help[TOP_NODE_NR_COLS] = {
	"READ_B/s   DRAM read bandwidth of the node, bytes per second",
	"WRITE_B/s  DRAM write bandwidth of the node, bytes per second",
	"REMOTE%    share of the node's memory accesses served by another node",
	"FAULTS/s   page faults per second taken on the node's CPUs",
	"ALLOC/s    pages per second allocated on the node (eBPF, kmem:mm_page_alloc)",
	"MIGR/s     task migrations per second onto the node's CPUs",
	"PGMIGR/s   pages migrated per second (system-wide /proc/vmstat)",
	"MISS/s     numa_miss per second: allocations here that wanted another node",
	"FOREIGN/s  numa_foreign per second: allocations meant for here that went elsewhere",
	"USED_B     memory in use on the node, bytes (nodeN/meminfo MemUsed)",
	"FREE_B     free memory of the node, bytes (nodeN/meminfo MemFree)",
	"PROMO/s    pages per second promoted into the node from a slower tier (pgpromote_success)",
	"DEMO/s     pages per second demoted from the node to a slower tier (pgdemote_*)",
	"HOT_B      bytes of the node DAMON saw hot in its last aggregation (--damon-hot)",
	"COLD_B     bytes of the node DAMON saw idle for the cold age (--damon-cold-age)",
};

/* "PGMIGR/s MIGR/s ...": a table's columns in the order they leave. */
static void drop_order(char *buf, size_t size, const char *const *names, const int *ranks, int n, int max_rank)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int rank = max_rank; rank >= 0; rank--)
		for (int i = 0; i < n; i++)
			if (ranks[i] == rank && len < size)
				len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "", names[i]);
}

void top_format_rate(char *buf, size_t size, double value)
{
	static const char suffix[] = " kMGTP";
	int unit = 0;

	while (value >= 999.95 && unit < 5) {
		value /= 1000.0;
		unit++;
	}
	if (unit == 0)
		snprintf(buf, size, value >= 99.95 ? "%.0f" : "%.1f", value);
	else
		snprintf(buf, size, value >= 99.95 ? "%.0f%c" : "%.1f%c", value, suffix[unit]);
}

void top_format_number(char *buf, size_t size, double value)
{
	/* Ratios and small values keep their digits; large ones take SI prefixes. */
	if (value >= 999.5 || value <= -999.5) {
		if (value < 0) {
			buf[0] = '-';
			top_format_rate(buf + 1, size - 1, -value);
		} else {
			top_format_rate(buf, size, value);
		}
	} else {
		snprintf(buf, size, "%.3g", value);
	}
}

static void format_value(char *buf, size_t size, const struct top_value *v, bool percent)
{
	if (!v->valid)
		snprintf(buf, size, "n/a");
	else if (percent)
		snprintf(buf, size, "%.1f", v->value);
	else
		top_format_rate(buf, size, v->value);
}

static int watch_terminal(struct top_view *v)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t winch;

	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	sigprocmask(SIG_BLOCK, &winch, &v->old_mask);
	v->winch_fd = signalfd(-1, &winch, SFD_NONBLOCK | SFD_CLOEXEC);
	v->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (v->winch_fd < 0 || v->wait_fd < 0)
		return -1;
	if (epoll_ctl(v->wait_fd, EPOLL_CTL_ADD, STDIN_FILENO, &ev) < 0 ||
	    epoll_ctl(v->wait_fd, EPOLL_CTL_ADD, v->winch_fd, &ev) < 0)
		return -1;
	return 0;
}

static void unwatch_terminal(struct top_view *v)
{
	if (v->wait_fd >= 0)
		close(v->wait_fd);
	if (v->winch_fd >= 0)
		close(v->winch_fd);
	sigprocmask(SIG_SETMASK, &v->old_mask, NULL);
}

/* The terminal's size now, to ncurses (after a SIGWINCH). */
static void take_resize(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
}

int top_view_read_input(struct top_view *v, char *buf, size_t size, bool *resized)
{
	struct signalfd_siginfo si;
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	ssize_t n = 0;

	*resized = false;
	while (read(v->winch_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		*resized = true;
	/* Read only what is there: never wait on the sampling thread. */
	if (poll(&in, 1, 0) == 1 && (in.revents & POLLIN))
		n = read(STDIN_FILENO, buf, size);
	return n > 0 ? (int)n : 0;
}

struct top_view *top_view_open(char *why, size_t size)
{
	const char *term = getenv("TERM");
	struct top_view *v;

	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
		snprintf(why, size, "standard input or output is not a terminal");
		return NULL;
	}
	if (!term || !term[0] || strcmp(term, "dumb") == 0) {
		snprintf(why, size, "TERM is %s", term && term[0] ? term : "not set");
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(why, size, "out of memory");
		return NULL;
	}
	if (watch_terminal(v) < 0) {
		snprintf(why, size, "cannot wait on the terminal: %s", strerror(errno));
		unwatch_terminal(v);
		free(v);
		return NULL;
	}
	/* The terminal's own size, not LINES/COLUMNS a parent left in the
	 * environment: those would not follow a resize. */
	use_env(FALSE);
	use_tioctl(TRUE);
	/* newterm, unlike initscr, returns NULL instead of exiting on an unknown TERM. */
	v->screen = newterm(NULL, stdout, stdin);
	if (!v->screen) {
		snprintf(why, size, "the terminal type '%s' is unknown to ncurses", term);
		unwatch_terminal(v);
		free(v);
		return NULL;
	}
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_CYAN, -1);
		init_pair(2, COLOR_YELLOW, -1);
	}
	return v;
}

int top_view_input_fd(const struct top_view *v)
{
	return v->wait_fd;
}

const char *top_view_label(const struct top_view *v)
{
	return v->label;
}

void top_view_close(struct top_view *v)
{
	if (!v)
		return;
	endwin();
	delscreen(v->screen);
	unwatch_terminal(v);
	free(v);
}

/* --- drawing ------------------------------------------------------------ */

/* Write text at (y, x) without passing the right edge. */
static void put(int y, int x, const char *text)
{
	int width = getmaxx(stdscr);

	if (y < 0 || y >= getmaxy(stdscr) || x >= width)
		return;
	mvaddnstr(y, x, text, width - x);
}

static void put_bar(int y, const char *text, attr_t attr)
{
	int width = getmaxx(stdscr);

	attron(attr);
	mvhline(y, 0, ' ', width);
	put(y, 0, text);
	attroff(attr);
}

/* The header's parts, joined by sep, each whole: those that do not fit the
 * terminal are left out, the last first (the caller orders them by how much
 * they are wanted). */
static void join_fitting(char *line, size_t size, char (*parts)[256], int n, const char *sep)
{
	int width = getmaxx(stdscr), keep = n;
	size_t len;

	for (;;) {
		len = 0;
		line[0] = '\0';
		for (int i = 0; i < keep && len < size; i++)
			len += (size_t)snprintf(line + len, size - len, "%s%s", i ? sep : "", parts[i]);
		if ((int)len <= width || keep == 1)
			return;
		keep--;
	}
}

/* Which columns of each table fit the terminal's width now. */
static void plan_layout(const struct top_model *m, struct layout *l);

static int draw_header(const struct top_model *m, const struct top_display *d, const struct layout *l)
{
	char line[512], parts[5][256];
	size_t len = 0;

	snprintf(parts[0], sizeof(parts[0]), "memscope top");
	snprintf(parts[1], sizeof(parts[1]), "%s", m->hostname);
	snprintf(parts[2], sizeof(parts[2]), "%d node%s, %d CPU%s", m->nr_nodes, m->nr_nodes == 1 ? "" : "s",
		 m->topo->nr_cpus, m->topo->nr_cpus == 1 ? "" : "s");
	snprintf(parts[3], sizeof(parts[3]), "up %.0fs", m->elapsed_s);
	snprintf(parts[4], sizeof(parts[4]), "%s", m->cpu_model);
	join_fitting(line, sizeof(line), parts, 5, " - ");
	attron(A_BOLD);
	put(0, 0, line);
	attroff(A_BOLD);
	snprintf(parts[0], sizeof(parts[0]), "sources: %s", m->source_names);
	snprintf(parts[1], sizeof(parts[1]), "interval: %llu ms", (unsigned long long)d->interval_ms);
	if (m->coverage_valid)
		snprintf(parts[2], sizeof(parts[2]), "coverage: %.0f%%", m->coverage_pct);
	else
		snprintf(parts[2], sizeof(parts[2]), "coverage: n/a");
	snprintf(parts[3], sizeof(parts[3]), "recording: %s", d->recording[0] ? d->recording : "off");
	snprintf(parts[4], sizeof(parts[4]), "tiers %s", m->tiers);
	join_fitting(line, sizeof(line), parts, m->tiers[0] ? 5 : 4, "  ");
	put(1, 0, line);
	if (d->paused && !d->ended) {
		attron(A_REVERSE | A_BOLD);
		put(1, getmaxx(stdscr) > 8 ? getmaxx(stdscr) - 8 : 0, " PAUSED ");
		attroff(A_REVERSE | A_BOLD);
	}
	/* A narrow terminal: how many columns each table leaves out. */
	if (l->node_hidden + l->lua_hidden + l->proc_hidden + l->thread_hidden) {
		const struct {
			int n;
			const char *table;
		} tables[] = { { l->node_hidden, "node" }, { l->lua_hidden, "Lua" }, { l->proc_hidden, "process" },
			      { l->thread_hidden, "thread" } };

		len = (size_t)snprintf(line, sizeof(line), "columns hidden:");
		for (size_t i = 0; i < ARRAY_SIZE(tables); i++)
			if (tables[i].n)
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s %d %s",
							len > 15 ? "," : "", tables[i].n, tables[i].table);
		snprintf(line + len, sizeof(line) - len, " (? tells which)");
		attron(COLOR_PAIR(2));
		put(2, 0, line);
		attroff(COLOR_PAIR(2));
	}
	return 3;
}

/* A node panel row starts with the node, or "all" for the system... */
static size_t node_row_label(char *line, size_t size, const struct top_node_row *row)
{
	if (row->node >= 0)
		return (size_t)snprintf(line, size, "%-5d", row->node);
	return (size_t)snprintf(line, size, "%-5s", "all");
}

/* ... and the system's row stands out. */
static void put_node_row(int y, const char *line, const struct top_node_row *row)
{
	if (row->node < 0)
		attron(A_BOLD);
	put(y, 0, line);
	if (row->node < 0)
		attroff(A_BOLD);
}

static int draw_nodes(const struct top_model *m, const struct top_display *d, const struct layout *l, int y)
{
	char line[256], cell[32];
	size_t len;

	int nr = d->per_tier ? m->nr_tiers : m->nr_nodes;
	const struct top_node_row *rows = d->per_tier ? m->tier_rows : m->nodes;

	len = (size_t)snprintf(line, sizeof(line), "%-5s", d->per_tier ? "TIER" : "NODE");
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		if (l->node[c])
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", node_col_width(c),
						top_node_col_name((enum top_node_col)c));
	/* -p: the node panel is still the whole machine's, not the process's. */
	if (m->focus_pid)
		snprintf(line + len, sizeof(line) - len, "   (whole machine, not only pid %d)", (int)m->focus_pid);
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i <= nr && y < getmaxy(stdscr) - 1; i++) {
		const struct top_node_row *row = i < nr ? &rows[i] : &m->total;

		len = node_row_label(line, sizeof(line), row);
		for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
			if (!l->node[c])
				continue;
			format_value(cell, sizeof(cell), &row->col[c], c == TOP_NODE_REMOTE_PCT);
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", node_col_width(c), cell);
		}
		put_node_row(y++, line, row);
	}
	return y + 1;
}

static int lua_column_width(const struct top_model *m, int col)
{
	int width = (int)strlen(lua_engine_metric_name(m->lua, m->lua_metric[col]));

	return width > 9 ? width : 9;
}

/* The metrics --lua scripts define, one column each, for the same rows as
 * the node panel; a column is as wide as its name. */
static int draw_lua_columns(const struct top_model *m, const struct layout *l, int y)
{
	char line[512], cell[32];
	size_t len;

	if (!m->nr_lua_cols || y >= getmaxy(stdscr) - 2)
		return y;
	len = (size_t)snprintf(line, sizeof(line), "%-5s", "LUA");
	for (int c = 0; c < m->nr_lua_cols && len < sizeof(line); c++)
		if (l->lua[c])
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", lua_column_width(m, c),
						lua_engine_metric_name(m->lua, m->lua_metric[c]));
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i <= m->nr_nodes && y < getmaxy(stdscr) - 1; i++) {
		const struct top_node_row *row = i < m->nr_nodes ? &m->nodes[i] : &m->total;

		len = node_row_label(line, sizeof(line), row);
		for (int c = 0; c < m->nr_lua_cols && len < sizeof(line); c++) {
			if (!l->lua[c])
				continue;
			if (row->lua[c].valid)
				top_format_number(cell, sizeof(cell), row->lua[c].value);
			else
				snprintf(cell, sizeof(cell), "n/a");
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", lua_column_width(m, c), cell);
		}
		put_node_row(y++, line, row);
	}
	return y + 1;
}

static int shown_node_columns(const struct top_model *m)
{
	/* One column per node only when there is more than one. */
	if (m->nr_nodes < 2)
		return 0;
	return m->nr_nodes < TOP_MAX_NODES ? m->nr_nodes : TOP_MAX_NODES;
}

/* The process table's columns after PID, in screen order (top -b's order). */
static int process_columns(const struct top_model *m, struct proc_column *cols)
{
	static const enum proc_cell before[] = { PC_THR, PC_FAULTS, PC_ALLOC };
	static const enum proc_cell after[] = { PC_REMOTE, PC_CPU, PC_OFFCPU, PC_MIGR, PC_HOT, PC_COLD };
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(before); i++)
		cols[n++] = (struct proc_column){ .cell = before[i], .width = proc_cells[before[i]].width };
	for (int node = 0; node < shown_node_columns(m); node++) {
		cols[n] = (struct proc_column){ .cell = PC_ALLOC_NODE, .node = node, .width = proc_cells[PC_ALLOC_NODE].width };
		snprintf(cols[n++].title, sizeof(cols[0].title), "ALLOC_N%d/s", m->topo->nodes[node]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(after); i++)
		cols[n++] = (struct proc_column){ .cell = after[i], .width = proc_cells[after[i]].width };
	for (int c = 0; c < n; c++)
		if (cols[c].cell != PC_ALLOC_NODE)
			snprintf(cols[c].title, sizeof(cols[c].title), "%s", proc_cells[cols[c].cell].title);
	return n;
}

static void process_cell(char *buf, size_t size, const struct top_process_row *r, const struct proc_column *col)
{
	switch (col->cell) {
	case PC_THR: snprintf(buf, size, "%d", r->nr_threads); break;
	case PC_FAULTS: top_format_rate(buf, size, r->faults); break;
	case PC_ALLOC: top_format_rate(buf, size, r->pages); break;
	case PC_ALLOC_NODE: top_format_rate(buf, size, r->pages_node[col->node]); break;
	case PC_REMOTE: format_value(buf, size, &r->remote_pct, true); break;
	case PC_CPU: snprintf(buf, size, "%.1f", r->cpu_pct); break;
	case PC_OFFCPU: format_value(buf, size, &r->offcpu_pct, true); break;
	case PC_MIGR: snprintf(buf, size, "%.1f", r->migrations); break;
	case PC_HOT: format_value(buf, size, &r->damon_hot, false); break;
	case PC_COLD: format_value(buf, size, &r->damon_cold, false); break;
	}
}

static void format_process(const struct layout *l, const struct top_process_row *r, char *line, size_t size)
{
	char cell[32];
	size_t len = (size_t)snprintf(line, size, "%7d", (int)r->pid);

	for (int c = 0; c < l->nr_proc_cols && len < size; c++) {
		if (!l->proc[c])
			continue;
		process_cell(cell, sizeof(cell), r, &l->proc_cols[c]);
		len += (size_t)snprintf(line + len, size - len, " %*s", l->proc_cols[c].width, cell);
	}
	if (len < size)
		snprintf(line + len, size - len, " %s", r->comm);
}

static void process_title(const struct layout *l, char *line, size_t size)
{
	size_t len = (size_t)snprintf(line, size, "%7s", "PID");

	for (int c = 0; c < l->nr_proc_cols && len < size; c++)
		if (l->proc[c])
			len += (size_t)snprintf(line + len, size - len, " %*s", l->proc_cols[c].width,
						l->proc_cols[c].title);
	if (len < size)
		snprintf(line + len, size - len, " %s", "COMMAND");
}

static int draw_processes(const struct top_model *m, const struct top_display *d, const struct layout *l, int y,
			  int last_row)
{
	char line[512];
	int shown = 0;

	if (m->bpf_why) {
		put(y++, 0, "no process table: the eBPF probes did not start (? shows why)");
		return y + 1;
	}
	process_title(l, line, sizeof(line));
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i < m->nr_procs && y <= last_row; i++) {
		const struct top_process_row *r = &m->procs[i];

		if (!top_display_shows(d, r) || (m->focus_pid && r->pid != m->focus_pid))
			continue;
		format_process(l, r, line, sizeof(line));
		put(y++, 0, line);
		shown++;
	}
	if (!shown && y <= last_row)
		put(y++, 0, m->focus_pid ? "  (the process has exited)" : "  (no process matches the filter)");
	return y + 1;
}

static int draw_threads(const struct top_model *m, const struct layout *l, int y, int last_row)
{
	char line[256], cells[THREAD_NR_COLS][32];
	size_t len;

	snprintf(line, sizeof(line), "threads of %d%s", (int)m->focus_pid, m->focus_alive ? "" : " (exited)");
	put(y++, 0, line);
	len = (size_t)snprintf(line, sizeof(line), "%7s", "TID");
	for (int c = 0; c < THREAD_NR_COLS; c++)
		if (l->thread[c])
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", thread_cells[c].width,
						thread_cells[c].title);
	snprintf(line + len, sizeof(line) - len, " %s", "COMMAND");
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i < m->nr_threads && y <= last_row; i++) {
		const struct top_thread_row *t = &m->threads[i];

		snprintf(cells[0], sizeof(cells[0]), "%c", t->state ? t->state : '?');
		snprintf(cells[1], sizeof(cells[1]), "%d", t->cpu);
		snprintf(cells[2], sizeof(cells[2]), "%d", t->node);
		top_format_rate(cells[3], sizeof(cells[3]), t->faults);
		snprintf(cells[4], sizeof(cells[4]), "%.1f", t->cpu_pct);
		len = (size_t)snprintf(line, sizeof(line), "%7d", (int)t->tid);
		for (int c = 0; c < THREAD_NR_COLS; c++)
			if (l->thread[c])
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", thread_cells[c].width,
							cells[c]);
		snprintf(line + len, sizeof(line) - len, " %s", t->comm);
		put(y++, 0, line);
	}
	return y;
}

static void plan_layout(const struct top_model *m, struct layout *l)
{
	struct top_layout_col cols[MAX_PROC_COLS + TOP_MAX_LUA_COLS + TOP_NODE_NR_COLS];
	int width = getmaxx(stdscr);

	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		cols[c] = (struct top_layout_col){ node_col_width(c), node_drop_rank[c] };
	l->node_hidden = top_layout_fit(cols, TOP_NODE_NR_COLS, 5, 0, width, l->node);
	/* Lua columns: the last defined leave first. */
	for (int c = 0; c < m->nr_lua_cols; c++)
		cols[c] = (struct top_layout_col){ lua_column_width(m, c), c };
	l->lua_hidden = top_layout_fit(cols, m->nr_lua_cols, 5, 0, width, l->lua);
	l->nr_proc_cols = m->bpf_why ? 0 : process_columns(m, l->proc_cols);
	for (int c = 0; c < l->nr_proc_cols; c++)
		cols[c] = (struct top_layout_col){ l->proc_cols[c].width, proc_cells[l->proc_cols[c].cell].drop_rank };
	l->proc_hidden = top_layout_fit(cols, l->nr_proc_cols, 7, COMMAND_MIN_WIDTH, width, l->proc);
	for (int c = 0; c < THREAD_NR_COLS; c++)
		cols[c] = (struct top_layout_col){ thread_cells[c].width, thread_cells[c].drop_rank };
	l->thread_hidden = top_layout_fit(cols, THREAD_NR_COLS, 7, COMMAND_MIN_WIDTH, width, l->thread);
	if (!m->focus_pid)
		l->thread_hidden = 0;
}

/* Word-wrapped text from (y, indent); returns the next free row. */
static int put_wrapped(int y, int indent, const char *text)
{
	int width = getmaxx(stdscr) - indent;
	size_t len = strlen(text);

	if (width < 10)
		width = 10;
	while (len && y < getmaxy(stdscr) - 1) {
		size_t take = len <= (size_t)width ? len : (size_t)width;

		if (take < len) {
			size_t cut = take;

			while (cut > 0 && text[cut] != ' ')
				cut--;
			if (cut > 0)
				take = cut;
		}
		mvaddnstr(y++, indent, text, (int)take);
		text += take;
		len -= take;
		while (len && *text == ' ') {
			text++;
			len--;
		}
	}
	return y;
}

/* "NAME       what it is": the names, then the text wrapped beside them. */
static int put_column_help(int y, const char *line)
{
	if (y >= getmaxy(stdscr) - 1)
		return y;
	mvaddnstr(y, 2, line, HELP_NAME_WIDTH);
	return put_wrapped(y, 2 + HELP_NAME_WIDTH, line + HELP_NAME_WIDTH);
}

/* What leaves a narrow terminal, and in which order (the ranks above). */
static int draw_narrow_help(const struct top_model *m, const struct layout *l, int y)
{
	const char *names[MAX_PROC_COLS + TOP_NODE_NR_COLS];
	int ranks[MAX_PROC_COLS + TOP_NODE_NR_COLS];
	char order[512], hidden[512];
	size_t len = 0;

	if (y >= getmaxy(stdscr) - 2)
		return y;
	y++;
	attron(A_BOLD);
	put(y++, 0, "Narrow terminals hide whole columns, leaving in this order");
	attroff(A_BOLD);
	for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
		names[c] = top_node_col_name((enum top_node_col)c);
		ranks[c] = node_drop_rank[c];
	}
	drop_order(order, sizeof(order), names, ranks, TOP_NODE_NR_COLS, TOP_NODE_NR_COLS - 1);
	put(y, 2, "node:");
	y = put_wrapped(y, 11, order);
	for (int c = 0; c <= PC_COLD; c++) {
		names[c] = proc_cells[c].title;
		ranks[c] = proc_cells[c].drop_rank;
	}
	drop_order(order, sizeof(order), names, ranks, PC_COLD + 1, PROC_MAX_RANK);
	snprintf(order + strlen(order), sizeof(order) - strlen(order), "; then COMMAND is cut (PID stays)");
	if (y < getmaxy(stdscr) - 1) {
		put(y, 2, "process:");
		y = put_wrapped(y, 11, order);
	}
	for (int c = 0; c < THREAD_NR_COLS; c++) {
		names[c] = thread_cells[c].title;
		ranks[c] = thread_cells[c].drop_rank;
	}
	drop_order(order, sizeof(order), names, ranks, THREAD_NR_COLS, THREAD_NR_COLS - 1);
	snprintf(order + strlen(order), sizeof(order) - strlen(order), "; then COMMAND is cut (TID stays)");
	if (y < getmaxy(stdscr) - 1) {
		put(y, 2, "threads:");
		y = put_wrapped(y, 11, order);
	}
	if (m->nr_lua_cols && y < getmaxy(stdscr) - 1)
		put(y++, 2, "Lua:     the last defined first");
	hidden[0] = '\0';
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		if (!l->node[c])
			len += (size_t)snprintf(hidden + len, sizeof(hidden) - len, " node:%s",
						top_node_col_name((enum top_node_col)c));
	for (int c = 0; c < m->nr_lua_cols && len < sizeof(hidden); c++)
		if (!l->lua[c])
			len += (size_t)snprintf(hidden + len, sizeof(hidden) - len, " Lua:%s",
						lua_engine_metric_name(m->lua, m->lua_metric[c]));
	for (int c = 0; c < l->nr_proc_cols && len < sizeof(hidden); c++)
		if (!l->proc[c])
			len += (size_t)snprintf(hidden + len, sizeof(hidden) - len, " process:%s",
						l->proc_cols[c].title);
	for (int c = 0; m->focus_pid && c < THREAD_NR_COLS && len < sizeof(hidden); c++)
		if (!l->thread[c])
			len += (size_t)snprintf(hidden + len, sizeof(hidden) - len, " thread:%s", thread_cells[c].title);
	if (y < getmaxy(stdscr) - 1) {
		put(y, 2, "hidden:");
		y = put_wrapped(y, 11, len ? hidden + 1 : "none at this width");
	}
	return y;
}

static void draw_help(const struct top_model *m, const struct layout *l)
{
	static const char *const keys[] = {
		"s / S   sort by the next / previous column      p   pause (frames are still taken)",
		"+ / -   longer / shorter interval                f   filter processes by command or pid",
		"l       add a label (into the recording)         q   quit        ?   this help",
		"t       node rows / memory tier rows",
	};
	int y = 0;

	attron(A_BOLD);
	put(y++, 0, "memscope top - keys (any key returns)");
	attroff(A_BOLD);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		put(y++, 2, keys[i]);
	y++;
	attron(A_BOLD);
	put(y++, 0, "Not measured on this host (shown as n/a)");
	attroff(A_BOLD);
	for (int c = 0; c < TOP_NODE_NR_COLS && y < getmaxy(stdscr) - 1; c++) {
		char head[64];

		if (!m->node_col_why[c])
			continue;
		snprintf(head, sizeof(head), "%s:", top_node_col_name((enum top_node_col)c));
		put(y, 2, head);
		y = put_wrapped(y, 12, m->node_col_why[c]);
	}
	if (m->proc_remote_why && y < getmaxy(stdscr) - 1) {
		put(y, 2, "REMOTE% of processes:");
		if (m->proc_remote_why == m->node_col_why[TOP_NODE_REMOTE_PCT])
			put(y++, 24, "as for the nodes");
		else
			y = put_wrapped(y + 1, 12, m->proc_remote_why);
	}
	for (int c = 0; c < m->nr_lua_cols && y < getmaxy(stdscr) - 1; c++) {
		const char *why = top_lua_column_why(m, c);
		char head[96];

		if (!why)
			continue;
		snprintf(head, sizeof(head), "%s:", lua_engine_metric_name(m->lua, m->lua_metric[c]));
		put(y++, 2, head);
		y = put_wrapped(y, 12, why);
	}
	if (m->notes && y < getmaxy(stdscr) - 1) {
		put(y, 2, "notes:");
		y = put_wrapped(y, 12, m->notes);
	}
	y++;
	attron(A_BOLD);
	put(y++, 0, "Node columns");
	attroff(A_BOLD);
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		y = put_column_help(y, node_help[c]);
	if (y < getmaxy(stdscr) - 2) {
		y++;
		attron(A_BOLD);
		put(y++, 0, "Process columns");
		attroff(A_BOLD);
	}
	for (size_t c = 0; c < ARRAY_SIZE(process_help); c++)
		y = put_column_help(y, process_help[c]);
	if (m->nr_lua_cols && y < getmaxy(stdscr) - 2) {
		y++;
		attron(A_BOLD);
		put(y++, 0, "Lua columns (metrics the --lua scripts define, as they compute them)");
		attroff(A_BOLD);
	}
	for (int c = 0; c < m->nr_lua_cols && y < getmaxy(stdscr) - 1; c++) {
		char line[512];
		int index = m->lua_metric[c];

		snprintf(line, sizeof(line), "%s  [%s]  %s", lua_engine_metric_name(m->lua, index),
			 lua_engine_metric_unit(m->lua, index)[0] ? lua_engine_metric_unit(m->lua, index) : "no unit",
			 lua_engine_metric_description(m->lua, index));
		put(y++, 2, line);
	}
	if (m->lua_left_out && y < getmaxy(stdscr) - 1) {
		char line[128];

		snprintf(line, sizeof(line), "(%d more not shown: at most %d Lua columns)", m->lua_left_out,
			 TOP_MAX_LUA_COLS);
		put(y++, 2, line);
	}
	draw_narrow_help(m, l, y);
}

/* The end of a replay: every process of the run with its totals, as batch
 * output's totals block has them, until q. */
static void draw_run_totals(const struct top_model *m, int y, int last_row)
{
	struct top_run_process *p;
	int n = top_model_run_totals(m, &p), shown = 0;
	char line[256], ended[16];
	double listed = 0;

	if (n < 0) {
		put(y, 0, "out of memory for the run's totals");
		return;
	}
	for (int i = 0; i < n; i++)
		listed += p[i].faults;
	attron(A_BOLD);
	snprintf(line, sizeof(line), "end of the replay: totals over %.3f s, %d process%s (%d exited)", m->elapsed_s, n,
		 n == 1 ? "" : "es", m->nr_ended);
	put(y++, 0, line);
	attroff(A_BOLD);
	if (m->run_faults_seen) {
		snprintf(line, sizeof(line), "faults: %.0f in all, %.0f attributed to no process", m->run_faults,
			 m->run_faults - listed);
		put(y++, 0, line);
	}
	y++;
	put_bar(y++, "    PID      FAULTS       PAGES     CPU_S   FIRST_S   ENDED_S COMMAND", A_REVERSE);
	/* Room for the line saying how many rows did not fit. */
	for (int i = 0; i < n && (y < last_row || (y == last_row && i == n - 1)); i++, shown++) {
		if (isnan(p[i].ended_s))
			snprintf(ended, sizeof(ended), "-");
		else
			snprintf(ended, sizeof(ended), "%.3f", p[i].ended_s);
		snprintf(line, sizeof(line), "%7d %11.0f %11.0f %9.3f %9.3f %9s %s", (int)p[i].pid, p[i].faults,
			 p[i].pages, p[i].oncpu_s, p[i].first_s, ended, p[i].comm);
		put(y++, 0, line);
	}
	if (shown < n) {
		snprintf(line, sizeof(line), "... %d more (top -b --input lists them all)", n - shown);
		put(y, 0, line);
	}
	free(p);
}

static void draw_status(const struct top_view *v, const struct top_display *d)
{
	int y = getmaxy(stdscr) - 1;
	char line[512];

	if (v->prompt != PROMPT_NONE) {
		snprintf(line, sizeof(line), "%s: %s_", v->prompt == PROMPT_LABEL ? "label" : "filter", v->input);
		put_bar(y, line, A_BOLD);
		return;
	}
	if (d->notice[0]) {
		put_bar(y, d->notice, A_BOLD);
		return;
	}
	if (d->ended) {
		snprintf(line, sizeof(line), "end of the replay: the run's totals (ENDED_S -: running at the end)  |  "
			 "? help  q quit");
		if ((int)strlen(line) > getmaxx(stdscr))
			snprintf(line, sizeof(line), "end of the replay  |  ? help  q quit");
		put_bar(y, line, A_REVERSE);
		return;
	}
	snprintf(line, sizeof(line), "sort: %s%s%s  |  s sort  p pause  +/- interval  l label  f filter  ? help  q quit",
		 top_proc_col_name(d->sort), d->filter[0] ? "  filter: " : "", d->filter);
	/* A narrow terminal keeps the way to the keys' help whole. */
	if ((int)strlen(line) > getmaxx(stdscr))
		snprintf(line, sizeof(line), "sort: %s%s%s  |  ? help  q quit", top_proc_col_name(d->sort),
			 d->filter[0] ? "  filter: " : "", d->filter);
	put_bar(y, line, A_REVERSE);
}

void top_view_draw(struct top_view *v, struct top_model *m, const struct top_display *d)
{
	int height = getmaxy(stdscr), y, last_row = height - 2;
	struct layout l;

	top_model_sort(m->procs, m->nr_procs, d->sort);
	plan_layout(m, &l);
	werase(stdscr);
	if (v->show_help) {
		draw_help(m, &l);
	} else if (d->ended) {
		struct layout whole = { .node_hidden = 0 };   /* the tables whose columns hide are not shown */

		draw_run_totals(m, draw_header(m, d, &whole), last_row);
	} else {
		y = draw_header(m, d, &l);
		if (!m->updates)
			put(y, 0, "measuring the first interval...");
		else if ((y = draw_lua_columns(m, &l, draw_nodes(m, d, &l, y))) && m->focus_pid) {
			y = draw_processes(m, d, &l, y, last_row);
			draw_threads(m, &l, y, last_row);
		} else if (m->updates) {
			draw_processes(m, d, &l, y, last_row);
		}
	}
	draw_status(v, d);
	wnoutrefresh(stdscr);
	doupdate();
}

/* --- keys ----------------------------------------------------------------- */

static int prompt_key(struct top_view *v, struct top_display *d, int key)
{
	int requests = TOP_REQ_NONE;

	if (key == 27) {                            /* Esc: cancel */
		v->prompt = PROMPT_NONE;
	} else if (key == '\n' || key == '\r') {
		if (v->prompt == PROMPT_FILTER) {
			snprintf(d->filter, sizeof(d->filter), "%s", v->input);
		} else if (v->input_len) {
			snprintf(v->label, sizeof(v->label), "%s", v->input);
			requests |= TOP_REQ_LABEL;
		}
		v->prompt = PROMPT_NONE;
	} else if (key == 127 || key == 8) {
		if (v->input_len)
			v->input[--v->input_len] = '\0';
	} else if (key >= 32 && key < 127 && v->input_len + 1 < sizeof(v->input)) {
		v->input[v->input_len++] = (char)key;
		v->input[v->input_len] = '\0';
	}
	return requests;
}

static void start_prompt(struct top_view *v, enum prompt_kind kind, const char *initial)
{
	v->prompt = kind;
	snprintf(v->input, sizeof(v->input), "%s", initial);
	v->input_len = strlen(v->input);
}

/* The keys in a burst of terminal bytes, one at a time: a byte is a key,
 * except escape sequences (arrows, function keys: ESC [ ... or ESC O x),
 * which mean nothing here and are skipped whole; a lone ESC cancels a
 * prompt. */
static int next_key(const char *bytes, int len, int *at)
{
	unsigned char c = (unsigned char)bytes[(*at)++];

	if (c != 27 || *at >= len)
		return c;
	if (bytes[*at] == '[') {
		for ((*at)++; *at < len; (*at)++)
			if ((unsigned char)bytes[*at] >= 0x40 && (unsigned char)bytes[*at] <= 0x7e) {
				(*at)++;
				break;
			}
		return -1;
	}
	if (bytes[*at] == 'O') {
		*at += *at + 1 < len ? 2 : 1;
		return -1;
	}
	return 27;
}

int top_view_keys(struct top_view *v, struct top_model *m, struct top_display *d, const char *bytes, int len,
		  bool resized, int *interval_steps)
{
	int requests = TOP_REQ_NONE, at = 0;
	bool redraw = resized;

	if (resized)
		take_resize();
	*interval_steps = 0;
	while (at < len) {
		int key = next_key(bytes, len, &at);

		if (key < 0)
			continue;
		redraw = true;
		if (v->prompt != PROMPT_NONE) {
			requests |= prompt_key(v, d, key);
			continue;
		}
		if (v->show_help) {
			v->show_help = false;
			continue;
		}
		d->notice[0] = '\0';
		switch (key) {
		case 'q': case 'Q': requests |= TOP_REQ_QUIT; break;
		case 's': d->sort = (enum top_proc_col)((d->sort + 1) % TOP_PROC_NR_COLS); break;
		case 'S': d->sort = (enum top_proc_col)((d->sort + TOP_PROC_NR_COLS - 1) % TOP_PROC_NR_COLS); break;
		case 'p': case ' ': d->paused = !d->paused; break;
		case '+': case '=': requests |= TOP_REQ_INTERVAL; ++*interval_steps; break;
		case '-': case '_': requests |= TOP_REQ_INTERVAL; --*interval_steps; break;
		case 'l': start_prompt(v, PROMPT_LABEL, ""); break;
		case 'f': start_prompt(v, PROMPT_FILTER, d->filter); break;
		case 't':
			if (m->nr_tiers)
				d->per_tier = !d->per_tier;
			else
				snprintf(d->notice, sizeof(d->notice), "no memory tiers: the kernel lists none "
					 "(devices/virtual/memory_tiering)");
			break;
		case '?': case 'h': v->show_help = true; break;
		default: break;
		}
	}
	if (redraw && !(requests & TOP_REQ_QUIT))
		top_view_draw(v, m, d);
	return requests;
}
