"""Every option a command accepts is in its --help and its man page, and every
option they document is accepted: the help is made from the same table the
parser is, and this checks the man pages and the parser against it."""
import re

import pytest

from conftest import ROOT, run

MAN = ROOT / "docs" / "man"
FLAG = r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?=[\s,=\[\]|)]|$)"

# A value each argument name accepts, so that the option is parsed and --help after it is reached.
SAMPLE = {
    "MS": "100", "LN": "L2", "PID": "1", "PIDS": "1", "TIDS": "1", "FILE": "/dev/null", "PATH": "/tmp/memscope-none", "LIST": "page-faults",
    "EVENTS": "page-faults", "METRICS": "mem.read_bw", "METRIC": "mem.read_bw", "SEP": ",", "N": "1",
    "COUNT": "1", "COLUMN": "PID", "SCRIPT": "faults.lua", "KIND": "events", "CPUS": "0", "FORMAT": "text",
    "SPEC": "faults.lua", "PLUGIN": "/nonexistent/plugin.so", "DIR": "/tmp", "CGROUP": "/", "CGROUPS": "/", "SECONDS": "1", "FD": "fd:0", "WHAT": "events",
    "EVENT": "page-faults", "KEYS": "sym", "HZ": "100", "ADDR:PORT": "127.0.0.1:0", "MB": "1", "BYTES": "4096",
    "PCT": "50", "MODE": "auto",
}


def commands(memscope):
    res = run([memscope, "completion", "--list", "commands"])
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def help_options(text):
    """{flag: argument name or None} from the option lines of a --help text."""
    found = {}
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("-"):
            continue
        head = re.split(r"\s{2,}", s)[0]
        arg = re.search(r"( |\[=)([A-Z][A-Z0-9_:]*)\]?$", head)
        for flag in re.findall(FLAG, head):
            # An optional argument (--write[=FILE]) goes after '='.
            found[flag] = (("=" if arg.group(1) == "[=" else "") + arg.group(2)) if arg else None
    return found


def roff_text(line):
    line = line.replace("\\-", "-")
    line = re.sub(r"\\f[BIRP]", "", line)
    return line.replace('"', " ")


def man_options(page):
    """Flags in the item heads (.TP) of a man page's OPTIONS section."""
    text = page.read_text()
    m = re.search(r"^\.SH OPTIONS\n(.*?)(?=^\.SH |\Z)", text, re.S | re.M)
    assert m, f"{page.name} has no OPTIONS section"
    lines = m.group(1).splitlines()
    flags = set()
    for i, line in enumerate(lines[:-1]):
        if line.startswith(".TP"):
            flags.update(re.findall(FLAG, roff_text(lines[i + 1])))
    return flags


def command_help(memscope, command):
    res = run([memscope] + ([command] if command else []) + ["--help"])
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: memscope"), res.stdout[:200]
    return res.stdout


def test_every_command_has_a_man_page_and_memscope_1_lists_it(memscope):
    text = (MAN / "memscope.1").read_text()
    m = re.search(r"^\.SH COMMANDS\n(.*?)(?=^\.SH )", text, re.S | re.M)
    listed = set(re.findall(r"^\.B (\S+)$", m.group(1), re.M))
    assert listed == set(commands(memscope))
    for command in commands(memscope):
        assert (MAN / f"memscope-{command}.1").exists(), f"memscope-{command}.1 is missing"


COMMANDS = [None, "stat", "list", "top", "record", "ctl", "doctor", "report", "validate", "completion"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_and_man_page_name_the_same_options(memscope, command):
    helped = set(help_options(command_help(memscope, command))) - {"-h", "--help"}
    page = MAN / (f"memscope-{command}.1" if command else "memscope.1")
    documented = man_options(page) - {"-h", "--help"}
    assert helped - documented == set(), f"in --help, not in {page.name}"
    assert documented - helped == set(), f"in {page.name}, not in --help"


def man_combinations(page):
    """The lines of a man page's COMBINATIONS section (between .nf and .fi), as text."""
    m = re.search(r"^\.SH COMBINATIONS\n.*?^\.nf\n(.*?)^\.fi$", page.read_text(), re.S | re.M)
    return [roff_text(line).strip() for line in m.group(1).splitlines()] if m else []


def test_help_and_man_page_list_the_same_combinations(memscope):
    """Each command's man page lists the Combinations its --help lists, line for line, and a
    command without any has no such section."""
    for command in commands(memscope):
        text = command_help(memscope, command)
        m = re.search(r"^Combinations:\n((?:  .*\n)+)", text, re.M)
        helped = [line.strip() for line in m.group(1).splitlines()] if m else []
        page = MAN / f"memscope-{command}.1"
        assert man_combinations(page) == helped, f"{page.name}'s COMBINATIONS differ from {command} --help"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_in_help_is_accepted(memscope, command):
    prefix = [memscope] + ([command] if command else [])
    for flag, arg in help_options(command_help(memscope, command)).items():
        argv = [flag]
        if arg and arg.startswith("="):
            assert arg[1:] in SAMPLE, f"{flag} {arg}: add a sample value for {arg[1:]} to this test"
            argv = [f"{flag}={SAMPLE[arg[1:]]}"]
        elif arg:
            assert arg in SAMPLE, f"{flag} {arg}: add a sample value for {arg} to this test"
            argv.append(SAMPLE[arg])
        res = run(prefix + argv + ["--help"])
        assert res.returncode == 0, f"{' '.join(argv)}: {res.stderr}"
        assert "unknown option" not in res.stderr


def test_every_option_of_the_tables_is_in_help(memscope):
    res = run([memscope, "completion", "--options"])
    assert res.returncode == 0, res.stderr
    helps = {}
    for line in res.stdout.splitlines():
        command, short, long_, arg = line.split()
        if command not in helps:
            helps[command] = help_options(command_help(memscope, None if command == "memscope" else command))
        for flag in (short, long_):
            if flag != "-":
                assert flag in helps[command], f"{command} {flag}: in the table, not in --help"
                assert (helps[command][flag] or "-").lstrip("=") == arg, f"{command} {flag}"


def combinations(text):
    """[(kind, flag, [other flags])] from the Combinations: section of a --help text."""
    m = re.search(r"^Combinations:\n((?:  .*\n)+)", text, re.M)
    rules = []
    for line in (m.group(1).splitlines() if m else []):
        kind, _, rest = line.strip().partition(": ")
        labels = [label.split("/")[0] for label in re.findall(r"-[-\w/]+", rest)]
        rules.append((kind, labels[0], labels[1:]))
    return rules


def with_sample(flag, helped):
    arg = helped[flag]
    if arg and arg.startswith("="):
        return [flag]
    return [flag, SAMPLE[arg]] if arg else [flag]


@pytest.mark.parametrize("command", ["stat", "top", "record", "report", "validate"])
def test_combinations_in_help_are_refused(memscope, command):
    """Each rule --help lists is what the parser does: both of a "not together" pair,
    or an option without any it needs, is a usage error said in one line."""
    text = command_help(memscope, command)
    helped = help_options(text)
    rules = combinations(text)
    assert rules, f"{command} --help lists no Combinations"
    for kind, flag, others in rules:
        assert kind in ("not together", "required"), kind
        argv = with_sample(flag, helped)
        if kind == "not together":
            argv += with_sample(others[0], helped)
        res = run([memscope, command] + argv + ["--", "true"])
        assert res.returncode == 2, (argv, res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"memscope {command}: "), (argv, res.stderr)
        assert "unknown option" not in res.stderr


def test_stat_combinations_keep_their_words(memscope):
    assert ("not together", "-x", ["-j"]) in combinations(command_help(memscope, "stat"))
    for argv, message in [
        (["-x,", "--json"], "memscope stat: -x and --json are two output forms; choose one\n"),
        (["--self-describing"], "memscope stat: --self-describing is a form of -x SEP or --json; give one of them\n"),
        (["--interval-count", "2"], "memscope stat: --interval-count counts the lines of -I MS; give -I too\n"),
        (["--timeout", "5", "--replay", "/dev/null"],
         "memscope stat: --timeout ends a live run; --replay FILE is read to its end\n"),
        (["--control", "fd:0", "--input", "/dev/null"],
         "memscope stat: --control switches counting on and off in a live run; --input FILE is read whole\n"),
        (["-a", "--for-each-cgroup", "/", "--per-thread"], "memscope stat: --for-each-cgroup counts events in "
         "cgroups; it excludes --per-thread (eBPF counts every task, not a cgroup's)\n"),
    ]:
        res = run([memscope, "stat"] + argv + ["--", "true"])
        assert (res.returncode, res.stderr) == (2, message), argv


def test_report_and_validate_combinations_keep_their_words(memscope):
    heatmap_alone = "--heatmap is a report of its own: give it alone (with --plot and a recording)\n"
    for command, argv, message in [
        ("report", ["--plot", "x.png"], "--plot and --node are options of the heat map: give --heatmap with them\n"),
        ("report", ["--node", "1"], "--plot and --node are options of the heat map: give --heatmap with them\n"),
        ("report", ["--heatmap", "--c2c"], heatmap_alone),
        ("report", ["--heatmap", "-m", "mem.read_bw"], heatmap_alone),
        # --format is checked by its value: text is as good as none.
        ("report", ["--heatmap", "--format", "csv"], heatmap_alone),
        ("report", ["--replay", "x.jsonl", "--samples"],
         "--sort, --c2c and --samples read the samples of a recording; a --replay file has none\n"),
        ("validate", ["--expect", "x.json"],
         "--replay and --expect go together: the counts and what they should show\n"),
        ("validate", ["--replay", "x.jsonl"],
         "--replay and --expect go together: the counts and what they should show\n"),
    ]:
        res = run([memscope, command] + argv)
        assert (res.returncode, res.stderr) == (2, f"memscope {command}: {message}"), argv


def test_list_takes_the_last_of_its_modes(memscope):
    """list's modes are rows that set one value: the last one given is what is listed."""
    last = run([memscope, "list", "--libpfm", "--sources"])
    alone = run([memscope, "list", "--sources"])
    assert last.returncode == alone.returncode == 0, last.stderr
    assert last.stdout == alone.stdout and last.stdout.startswith("SOURCE ")


@pytest.mark.parametrize("argv,message", [
    (["-r", "0"], "-r 0: give a whole number from 1 to 100000"),
    (["--interval-count", "x"], "--interval-count x: give a whole number from 1 to 1000000000"),
    (["--timeout", "-5"], "--timeout -5: give a whole number from 1 to 86400000"),
    (["--log-fd", "1048577"], "--log-fd 1048577: give a whole number from 1 to 1048576"),
])
def test_stat_numbers_out_of_range_name_the_range(memscope, argv, message):
    res = run([memscope, "stat"] + argv + ["--", "true"])
    assert (res.returncode, res.stderr) == (2, f"memscope stat: {message}\n")


def test_unknown_option_is_named_with_the_closest(memscope):
    res = run([memscope, "list", "--topolgy"])
    assert res.returncode == 2
    assert "unknown option '--topolgy'" in res.stderr and "'--topology'" in res.stderr
    res = run([memscope, "ctl", "--pid"])
    assert res.returncode == 2
    assert "--pid needs an argument (PID)" in res.stderr
    res = run([memscope, "--verison"])
    assert res.returncode == 2 and "'--version'" in res.stderr
    res = run([memscope, "lsit"])
    assert res.returncode == 2 and "unknown command 'lsit'" in res.stderr and "'list'" in res.stderr


def test_help_word_and_version(memscope):
    assert run([memscope, "help"]).stdout == run([memscope, "--help"]).stdout
    res = run([memscope, "--version"])
    assert res.returncode == 0 and re.fullmatch(r"memscope \d+\.\d+\.\d+\n", res.stdout)
