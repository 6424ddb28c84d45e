"""The runner that makes each firmware test function a pytest item (mprunner.py): a result is the
named test's own, a test the module defines but never runs fails, and so does one defined twice or
one that was running when the interpreter died."""
import textwrap

import mprunner

MODULE = textwrap.dedent('''
    import sys
    import mptest
    def test_a():
        print("said by a")
    def test_b():
        assert 1 == 2, "b is wrong"
    def test_c():
        print("said by c")
    def test_twice():
        pass
    def test_twice():
        pass
    if __name__ == "__main__":
        mptest.run(globals())
    def test_below_the_run_line():
        pass
''')


def write(tmp_path, text):
    path = tmp_path / "mp_test_runner_subject.py"
    path.write_text(text)
    return str(path)


def test_each_result_carries_its_own_output_and_an_unrun_test_is_named(tmp_path):
    path = write(tmp_path, MODULE)
    names = [n for n, _ in mprunner.defined_tests(path)]
    assert names == ["test_a", "test_b", "test_below_the_run_line", "test_c", "test_twice", "test_twice"]
    run = mprunner.MpRun(path, sorted(set(names)), raw_log=False)
    try:
        status, _, output = run.result("test_c")  # read past a and b, kept for them
        assert status == "PASS" and output == ["said by c", "PASS test_c"]
        status, _, output = run.result("test_a")
        assert status == "PASS" and output == ["said by a", "PASS test_a"]
        status, detail, output = run.result("test_b")
        assert status == "FAIL" and "b is wrong" in detail
        assert any("Traceback" in line for line in output), output  # its traceback, not c's
        status, detail, _ = run.result("test_below_the_run_line")
        assert status == "UNRUN" and "defined but not run" in detail
    finally:
        run.finish()


def test_a_selection_runs_only_the_named_tests(tmp_path):
    path = write(tmp_path, MODULE)
    run = mprunner.MpRun(path, ["test_c"], raw_log=False)
    try:
        assert run.result("test_c")[0] == "PASS"
        assert run.rest() is None
        assert run.closing == "1 passed, 0 failed"
    finally:
        run.finish()


def test_a_test_running_when_the_interpreter_dies_fails_and_so_do_those_after_it(tmp_path):
    path = write(tmp_path, MODULE.replace('print("said by a")', 'print("dying"); sys.exit(3)'))
    run = mprunner.MpRun(path, ["test_a", "test_c"], raw_log=False)
    try:
        status, detail, output = run.result("test_a")
        assert status == "DIED" and "while this test ran" in detail and output == ["dying"]
        status, detail, _ = run.result("test_c")
        assert status == "DIED" and "before this test ran, while test_a ran" in detail
        assert "exited (3)" in run.rest()
    finally:
        run.finish()


def test_the_raw_log_run_announces_the_raw_log(tmp_path):
    path = write(tmp_path, MODULE)
    run = mprunner.MpRun(path, ["test_a"], raw_log=True)
    try:
        assert run.result("test_a")[0] == "PASS"
        assert run.header and run.header[0].startswith("journal on the raw log")
    finally:
        run.finish()
