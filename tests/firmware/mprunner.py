"""Each test function of a firmware test module (tests/firmware/mp_test_*.py) as a pytest item of
its own, run on the real MicroPython interpreter (tests/conftest.py hands these files to MpModule).

One interpreter process runs a module's selected tests (mptest.run, told which by MPTEST_ONLY)
and prints one result line per test; each item reads the process's output up to its own result,
so `pytest -k name` starts the interpreter for that test alone, a test's time and its timeout are
its own, and its failure shows its own output. (A process per test instead would pay the
interpreter's start and the module's imports once a test, and lose nothing a test needs.)

A test defined in the module that the interpreter never reports (written below the module's
mptest.run() line, or defined twice so the first is shadowed) fails as "defined but not run", on
the plain run and on the raw-log run alike.
"""
import os
import re
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIRMWARE = os.path.join(ROOT, "firmware")

# The journal's proofs also run with the journal on the raw flash log (table/rawlog.py): the
# virtual board then gets a file-backed NOR chip of this many sectors (small, so the log wraps and
# checkpoints often within a test). Their items are named test_x[raw_log].
RAWLOG_SECTORS = "8"
ON_RAWLOG = ["mp_test_app.py", "mp_test_faults_power.py", "mp_test_award_cuts.py", "mp_test_journal_format.py",
             "mp_test_heap_session.py"]
# The power-cut campaign's model keeps every durable event it harvests (a dict of tuples grown
# while the board churns its heap): on the raw log that fragmented the unix port's 2 MB default
# heap until the largest free block was 7.5 KB with 1.8 MB free (micropython.mem_info). The
# test's memory, not the board's (the Pico's heap is measured by benchmarks/bench_pico.py).
RAWLOG_HEAPS = {"mp_test_faults_power.py": "8M"}

RESULT = re.compile(r"^(PASS|FAIL|SKIP) (test_\w+)(?::? ?(.*))?$")
CLOSING = re.compile(r"^\d+ passed, \d+ failed")


def defined_tests(path):
    """[(name, line)] of the module's top-level test functions, in the order mptest runs them."""
    with open(path) as f:
        text = f.read()
    found = [(m.group(1), text.count("\n", 0, m.start()) + 1)
             for m in re.finditer(r"^def (test_\w+)\(", text, re.M)]
    return sorted(found)


class MpRun:
    """One interpreter process running some tests of one module, read line by line on demand."""

    def __init__(self, path, names, raw_log):
        from conftest import micropython_path
        self.names = names  # the selected tests, in the order the module runs them
        cmd = [micropython_path()]
        heap = RAWLOG_HEAPS.get(os.path.basename(path)) if raw_log else None
        if heap:
            cmd += ["-X", "heapsize=%s" % heap]
        cmd.append(path)
        env = dict(os.environ)
        env["MICROPYPATH"] = FIRMWARE + ":" + HERE + ":.frozen"
        env.pop("TABLE_RAWLOG_SECTORS", None)  # the journal back end is the test's choice, not the shell's
        if raw_log:
            env["TABLE_RAWLOG_SECTORS"] = RAWLOG_SECTORS
        env["MPTEST_ONLY"] = ",".join(names)
        self.raw_log = raw_log
        self.proc = subprocess.Popen(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace")
        self.results = {}  # name -> (status, detail, output lines)
        self.pending = []  # output since the last result line: the running test's
        self.header = []  # lines before the first test's output (the raw log's announcement)
        self.closed = False
        self.closing = None

    def _read_line(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.closed = True
            return None
        return line.rstrip("\n")

    def result(self, name):
        """(status, detail, output) of the named test, reading until it is reported or the end."""
        while name not in self.results and not self.closed:
            line = self._read_line()
            if line is None:
                break
            m = RESULT.match(line)
            if m and m.group(2) in self.names:
                self.results[m.group(2)] = (m.group(1), m.group(3) or "", self.pending + [line])
                self.pending = []
            elif CLOSING.match(line):
                self.closing = line
            elif line.startswith("journal on the raw log") and not self.results and not self.pending:
                self.header.append(line)
            else:
                self.pending.append(line)
        if name in self.results:
            return self.results[name]
        running = next((n for n in self.names if n not in self.results), None)
        if self.closing is not None and self.proc.returncode in (0, 1):
            return ("UNRUN", "defined but not run: the module never ran it (written below its "
                    "mptest.run() line, or shadowed by another of the same name)", [])
        if name == running:
            return ("DIED", "the interpreter exited (%s) while this test ran" % self.proc.returncode,
                    self.pending)
        return ("DIED", "the interpreter exited (%s) before this test ran, while %s ran"
                % (self.proc.returncode, running), [])

    def rest(self):
        """Read to the end: the output after the last result; None if the run ended as it should
        (its closing line, and a failing exit only for a failure reported)."""
        while not self.closed:
            self.result("")  # (no test has an empty name: this reads to the end)
        failed = any(r[0] == "FAIL" for r in self.results.values())
        if self.closing is not None and self.proc.returncode == (1 if failed else 0):
            return None
        return "the interpreter exited (%s) after the last test, closing line %r:\n%s" % (
            self.proc.returncode, self.closing, "\n".join(self.pending[-200:]))

    def finish(self):
        """Kill the process if it still runs (an item timed out, or the run was interrupted)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class MpTestFailure(Exception):
    pass


class MpModule(pytest.File):
    """A firmware test module: an item per test function, and per raw-log run where it has one."""

    def collect(self):
        tests = defined_tests(str(self.path))
        counts = {}
        for name, _ in tests:
            counts[name] = counts.get(name, 0) + 1
        variants = [False] + ([True] if self.path.name in ON_RAWLOG else [])
        for raw_log in variants:
            seen = set()
            for name, line in tests:
                if name in seen:
                    continue
                seen.add(name)
                item_name = name + ("[raw_log]" if raw_log else "")
                yield MpItem.from_parent(self, name=item_name, test=name, line=line, raw_log=raw_log,
                                         defined_twice=counts[name] > 1)


class MpItem(pytest.Item):
    def __init__(self, *, test, line, raw_log, defined_twice, **kw):
        super().__init__(**kw)
        self.test = test
        self.line = line
        self.raw_log = raw_log
        self.defined_twice = defined_twice
        if raw_log:
            self.add_marker("raw_log")

    def _run(self):
        """The shared process of this item's module and variant, started for the selected items."""
        key = (str(self.path), self.raw_log)
        runs = self.session.stash.setdefault(_RUNS, {})
        run = runs.get(key)
        if run is None or (self.test not in run.names):
            if run is not None:
                run.finish()
            # The selected items of this module and variant from this one on, in the module's order
            # (an item run again, as by a rerun plugin, starts a process of its own).
            items = self.session.items
            start = items.index(self) if self in items else 0
            names = [i.test for i in items[start:] if isinstance(i, MpItem)
                     and (str(i.path), i.raw_log) == key]
            run = MpRun(str(self.path), sorted(set(names)) or [self.test], self.raw_log)
            runs[key] = run
        return run

    def runtest(self):
        if self.defined_twice:
            raise MpTestFailure("%s is defined twice in %s: the first definition is shadowed and never runs"
                                % (self.test, self.path.name))
        run = self._run()
        status, detail, output = run.result(self.test)
        if output:
            self.add_report_section("call", "micropython", "\n".join(output))
        if self.raw_log and not run.header:
            raise MpTestFailure("the module did not run on the raw log (no 'journal on the raw log' line)\n"
                                + "\n".join(output))
        if self.test == run.names[-1]:
            # the last test of the run answers for its end too (code after the tests, a failing exit)
            trouble = run.rest()
            if trouble and status in ("PASS", "SKIP"):
                raise MpTestFailure(trouble)
        if status == "PASS":
            return
        if status == "SKIP":
            pytest.skip(detail)
        raise MpTestFailure("%s %s: %s\n%s" % (status, self.test, detail, "\n".join(output[-200:])))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, MpTestFailure):
            return "%s on micropython%s:\n%s" % (self.test, " (journal on the raw log)" if self.raw_log else "",
                                               excinfo.value.args[0])
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, self.line - 1, "%s::%s" % (self.path.name, self.name)


_RUNS = pytest.StashKey()


def finish_all(session):
    for run in session.stash.get(_RUNS, {}).values():
        run.finish()
