"""The collector's folders are the pipeline's stages: a folder includes only
folders before it in LAYERS, so there is no include cycle between folders and
a reader can find where data enters and where it leaves by the names alone."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2] / "collector"
LAYERS = ["util", "host", "events", "catalog", "sampler", "metrics", "recording", "sources", "lua",
          "sinks", "ctl", "pipeline", "cli"]


def includes():
    for path in sorted(ROOT.rglob("*.[ch]")):
        rel = path.relative_to(ROOT).as_posix()
        for inc in re.findall(r'#include "([^"]+)"', path.read_text()):
            yield rel, inc


def test_every_source_file_lives_in_a_stage_folder():
    loose = [p.name for p in ROOT.glob("*.[ch]")]
    assert loose == [], f"files outside the stage folders: {loose}"
    folders = {p.name for p in ROOT.iterdir() if p.is_dir()}
    assert folders == set(LAYERS), f"folders not in LAYERS, or LAYERS not on disk: {folders ^ set(LAYERS)}"


def test_no_folder_includes_a_later_stage():
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = []
    for rel, inc in includes():
        top, inc_top = rel.split("/")[0], inc.split("/")[0]
        if inc_top in rank and rank[inc_top] > rank[top]:
            upward.append(f"{rel} includes {inc}")
    assert upward == []


def test_includes_name_their_folder():
    # "host/sysfs.h", not "sysfs.h": the folder a file comes from is visible where it is used.
    bare = [f"{rel}: {inc}" for rel, inc in includes()
            if "/" not in inc and inc not in ("config.h",)]
    assert bare == []


def test_option_keys_stay_in_cli():
    """Command-line keys are cli/'s: below it, options are typed fields (session_options,
    lua_cli), so no stage decides on a key a command's table gave."""
    keys = re.compile(r"\b(SESSION_OPT_\w+|LUA_CLI_OPT_\w+|OPTION_(?:TAKEN|BAD|NOT_MINE)|session_option|"
                      r"lua_cli_option|measure_option)\b")
    below = [f"{path.relative_to(ROOT).as_posix()}: {m.group(1)}"
             for path in sorted(ROOT.rglob("*.[ch]")) if path.relative_to(ROOT).parts[0] != "cli"
             for m in [keys.search(path.read_text())] if m]
    assert below == []


def test_messages_go_through_the_reporter():
    """A message names its command through util/report.h (ms_warn, ms_report), not a
    hand-written "memscope NAME: " prefix; the exceptions say why."""
    allowed = {
        "util/report.c",            # the reporter itself
        "sinks/recording_sink.c",   # a line the sink goes on to complete ("N samples, ...")
    }
    hand = re.compile(r'fprintf\(stderr,\s*"memscope[ :]')
    found = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.c")
                   if hand.search(path.read_text()) and path.relative_to(ROOT).as_posix() not in allowed)
    assert found == []


def test_headers_use_one_set_of_lifetime_verbs():
    # docs/pipeline.md "Lifetime verbs": new/free, init/fini, open/close; no create/destroy.
    other = [f"{p.relative_to(ROOT).as_posix()}: {name}("
             for p in sorted(ROOT.rglob("*.h"))
             for name in re.findall(r"\b([a-z_][a-z0-9_]*_(?:create|destroy))\s*\(", p.read_text())]
    assert other == [], f"lifetime verbs outside docs/pipeline.md's set: {other}"
