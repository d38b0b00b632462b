/* The full-screen view of memscope top (ncursesw). Each draw erases the
 * virtual screen, writes it again and sends only the differences
 * (wnoutrefresh + doupdate), so a refresh several times a second does not
 * flicker. SIGWINCH is taken through a signalfd in the same wait as the keys,
 * so a resize redraws at once, not at the next frame. */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lua/lua_engine.h"
#include "sinks/top/top_view.h"

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

/* Short column titles for an 80-column terminal; units in the help. */
/* The node columns' titles are the model's names (top_node_col_name), the
 * same as top -b prints; a column is as wide as its title, 8 at least. */
static int node_col_width(int c)
{
	int w = (int)strlen(top_node_col_name((enum top_node_col)c));

	return w < 8 ? 8 : w;
}

static const char *const process_help[] = {
	"PID THR    process id; threads the probes have seen",
	"FAULTS/s   page faults per second of all its threads, user and kernel",
	"ALLOC/s    pages per second allocated for it (ALLOC_N<i>/s: on node i, with several nodes)",
	"REMOTE%    remote share of its memory accesses (core PMU local/remote DRAM events)",
	"CPU%       on-CPU time over wall time, percent of one CPU",
	"OFFCPU%    off-CPU share of the time its threads were switched in or out",
	"MIGR/s     its task migrations per second between CPUs",
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
};

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

static int draw_header(const struct top_model *m, const struct top_display *d)
{
	char line[512], coverage[32];

	snprintf(line, sizeof(line), "memscope top - %s - %s - %d node%s, %d CPU%s - up %.0fs", m->hostname,
		 m->cpu_model, m->nr_nodes, m->nr_nodes == 1 ? "" : "s", m->topo->nr_cpus,
		 m->topo->nr_cpus == 1 ? "" : "s", m->elapsed_s);
	attron(A_BOLD);
	put(0, 0, line);
	attroff(A_BOLD);
	if (m->coverage_valid)
		snprintf(coverage, sizeof(coverage), "%.0f%%", m->coverage_pct);
	else
		snprintf(coverage, sizeof(coverage), "n/a");
	snprintf(line, sizeof(line), "sources: %s  interval: %llu ms  coverage: %s  recording: %s", m->source_names,
		 (unsigned long long)d->interval_ms, coverage, d->recording[0] ? d->recording : "off");
	put(1, 0, line);
	if (d->paused) {
		attron(A_REVERSE | A_BOLD);
		put(1, getmaxx(stdscr) > 8 ? getmaxx(stdscr) - 8 : 0, " PAUSED ");
		attroff(A_REVERSE | A_BOLD);
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

static int draw_nodes(const struct top_model *m, int y)
{
	char line[256], cell[32];
	size_t len;

	len = (size_t)snprintf(line, sizeof(line), "%-5s", "NODE");
	for (int c = 0; c < TOP_NODE_NR_COLS; c++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", node_col_width(c),
					top_node_col_name((enum top_node_col)c));
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i <= m->nr_nodes && y < getmaxy(stdscr) - 1; i++) {
		const struct top_node_row *row = i < m->nr_nodes ? &m->nodes[i] : &m->total;

		len = node_row_label(line, sizeof(line), row);
		for (int c = 0; c < TOP_NODE_NR_COLS; c++) {
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
static int draw_lua_columns(const struct top_model *m, int y)
{
	char line[512], cell[32];
	size_t len;

	if (!m->nr_lua_cols || y >= getmaxy(stdscr) - 2)
		return y;
	len = (size_t)snprintf(line, sizeof(line), "%-5s", "LUA");
	for (int c = 0; c < m->nr_lua_cols && len < sizeof(line); c++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", lua_column_width(m, c),
					lua_engine_metric_name(m->lua, m->lua_metric[c]));
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i <= m->nr_nodes && y < getmaxy(stdscr) - 1; i++) {
		const struct top_node_row *row = i < m->nr_nodes ? &m->nodes[i] : &m->total;

		len = node_row_label(line, sizeof(line), row);
		for (int c = 0; c < m->nr_lua_cols && len < sizeof(line); c++) {
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

static void format_process(const struct top_model *m, const struct top_process_row *r, char *line, size_t size)
{
	char faults[16], pages[16], node[16], remote[16], offcpu[16];
	size_t len;

	top_format_rate(faults, sizeof(faults), r->faults);
	top_format_rate(pages, sizeof(pages), r->pages);
	format_value(remote, sizeof(remote), &r->remote_pct, true);
	format_value(offcpu, sizeof(offcpu), &r->offcpu_pct, true);
	len = (size_t)snprintf(line, size, "%7d %4d %9s %8s", (int)r->pid, r->nr_threads, faults, pages);
	for (int n = 0; n < shown_node_columns(m); n++) {
		top_format_rate(node, sizeof(node), r->pages_node[n]);
		len += (size_t)snprintf(line + len, size - len, " %10s", node);
	}
	snprintf(line + len, size - len, " %7s %6.1f %7s %7.1f %s", remote, r->cpu_pct, offcpu, r->migrations,
		 r->comm);
}

static void process_title(const struct top_model *m, const struct top_display *d, char *line, size_t size)
{
	size_t len = (size_t)snprintf(line, size, "%7s %4s %9s %8s", "PID", "THR", "FAULTS/s", "ALLOC/s");

	for (int n = 0; n < shown_node_columns(m); n++) {
		char title[16];

		snprintf(title, sizeof(title), "ALLOC_N%d/s", m->topo->nodes[n]);
		len += (size_t)snprintf(line + len, size - len, " %10s", title);
	}
	snprintf(line + len, size - len, " %7s %6s %7s %7s %s", "REMOTE%", "CPU%", "OFFCPU%", "MIGR/s", "COMMAND");
}

static int draw_processes(const struct top_model *m, const struct top_display *d, int y, int last_row)
{
	char line[512];
	int shown = 0;

	if (m->bpf_why) {
		put(y++, 0, "no process table: the eBPF probes did not start (? shows why)");
		return y + 1;
	}
	process_title(m, d, line, sizeof(line));
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i < m->nr_procs && y <= last_row; i++) {
		const struct top_process_row *r = &m->procs[i];

		if (!top_display_shows(d, r) || (m->focus_pid && r->pid != m->focus_pid))
			continue;
		format_process(m, r, line, sizeof(line));
		put(y++, 0, line);
		shown++;
	}
	if (!shown && y <= last_row)
		put(y++, 0, m->focus_pid ? "  (the process has exited)" : "  (no process matches the filter)");
	return y + 1;
}

static int draw_threads(const struct top_model *m, int y, int last_row)
{
	char line[256];

	snprintf(line, sizeof(line), "threads of %d%s", (int)m->focus_pid, m->focus_alive ? "" : " (exited)");
	put(y++, 0, line);
	snprintf(line, sizeof(line), "%7s %1s %4s %4s %9s %6s %s", "TID", "S", "CPU", "NODE", "FAULTS/s", "CPU%",
		 "COMMAND");
	put_bar(y++, line, A_REVERSE);
	for (int i = 0; i < m->nr_threads && y <= last_row; i++) {
		const struct top_thread_row *t = &m->threads[i];
		char faults[16];

		top_format_rate(faults, sizeof(faults), t->faults);
		snprintf(line, sizeof(line), "%7d %c %4d %4d %9s %6.1f %s", (int)t->tid, t->state ? t->state : '?',
			 t->cpu, t->node, faults, t->cpu_pct, t->comm);
		put(y++, 0, line);
	}
	return y;
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

static void draw_help(const struct top_model *m)
{
	static const char *const keys[] = {
		"s / S   sort by the next / previous column      p   pause (frames are still taken)",
		"+ / -   longer / shorter interval                f   filter processes by command or pid",
		"l       add a label (into the recording)         q   quit        ?   this help",
	};
	int y = 0;

	attron(A_BOLD);
	put(y++, 0, "memscope top - keys (any key returns)");
	attroff(A_BOLD);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
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
		if (y < getmaxy(stdscr) - 1)
			put(y++, 2, node_help[c]);
	if (y < getmaxy(stdscr) - 2) {
		y++;
		attron(A_BOLD);
		put(y++, 0, "Process columns");
		attroff(A_BOLD);
	}
	for (size_t c = 0; c < sizeof(process_help) / sizeof(process_help[0]); c++)
		if (y < getmaxy(stdscr) - 1)
			put(y++, 2, process_help[c]);
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
	snprintf(line, sizeof(line), "sort: %s%s%s  |  s sort  p pause  +/- interval  l label  f filter  ? help  q quit",
		 top_proc_col_name(d->sort), d->filter[0] ? "  filter: " : "", d->filter);
	put_bar(y, line, A_REVERSE);
}

void top_view_draw(struct top_view *v, struct top_model *m, const struct top_display *d)
{
	int height = getmaxy(stdscr), y, last_row = height - 2;

	top_model_sort(m->procs, m->nr_procs, d->sort);
	werase(stdscr);
	if (v->show_help) {
		draw_help(m);
	} else {
		y = draw_header(m, d);
		if (!m->updates)
			put(y, 0, "measuring the first interval...");
		else if ((y = draw_lua_columns(m, draw_nodes(m, y))) && m->focus_pid) {
			y = draw_processes(m, d, y, last_row);
			draw_threads(m, y, last_row);
		} else if (m->updates) {
			draw_processes(m, d, y, last_row);
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
		case '?': case 'h': v->show_help = true; break;
		default: break;
		}
	}
	if (redraw && !(requests & TOP_REQ_QUIT))
		top_view_draw(v, m, d);
	return requests;
}
