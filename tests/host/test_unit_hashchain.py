"""The hash chain both books keep (tablectl/hashchain.py): what it computes is what every existing
ledger and pool was written with, so these values are pinned to the byte."""
import hashlib
import hmac
import json
import os

from tablectl import hashchain

KEY = bytes(range(32))


def test_a_row_mac_is_the_stored_format_of_both_books():
    # The value the ledger wrote before the chain was one module (commit f852160's ledger.row_mac).
    assert hashchain.row_mac(KEY, hashchain.GENESIS, 1, "b1", 7, "coin", 1700000000.123456, '{"k":"coin"}', None) \
        == "8e971fdcd6ed5298f856ec5ef18e116c4152d9ac80a516a842775107f06b042f"


def test_a_row_mac_changes_with_each_thing_it_covers():
    base = (KEY, hashchain.GENESIS, 1, "b1", 7, "coin", 1700000000.5, "{}", None)
    macs = {hashchain.row_mac(*base)}
    for i, other in [(0, bytes(32)), (1, "1" * 64), (2, 2), (3, "b2"), (4, 8), (5, "award"), (6, 1700000000.25),
                     (7, "[]"), (8, "ab")]:
        changed = list(base)
        changed[i] = other
        macs.add(hashchain.row_mac(*changed))
    assert len(macs) == 10


def test_the_legacy_chain_is_the_unkeyed_sha256_of_old_ledgers():
    assert hashchain.legacy_row_hash(hashchain.GENESIS, 1, "b1", 7, "coin", 1700000000.5, "{}") \
        == "b7253d1c6b3c4f9790915e0a1e707f8af5797725f6309cd76d172e18624922a3"


def test_an_anchor_slot_is_256_bytes_of_signed_json_and_reads_back(tmp_path):
    path = str(tmp_path / "anchor")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        hashchain.write_anchor(fd, KEY, (4, "aa" * 32))
        hashchain.write_anchor(fd, KEY, (5, "bb" * 32))
    finally:
        os.close(fd)
    data = open(path, "rb").read()
    assert len(data) == 2 * hashchain.ANCHOR_SLOT and data[255:256] == b"\n"
    assert json.loads(data[:256]) == {"row": 4, "mac": "aa" * 32,
                                      "sig": hmac.new(KEY, b"anchor:4:" + b"aa" * 32, hashlib.sha256).hexdigest()}
    assert hashchain.anchor_slots(KEY, data) == [(4, "aa" * 32, True), (5, "bb" * 32, True)]


def test_a_torn_slot_is_passed_over_and_an_edited_one_is_named():
    good = hashchain.anchor_record(KEY, (6, "cc" * 32))
    edited = good.replace(b'"row": 6', b'"row": 9')
    torn = good[:100] + b"\0" * 156
    assert hashchain.anchor_slots(KEY, torn + good) == [(6, "cc" * 32, True)]
    assert hashchain.anchor_slots(KEY, good + edited) == [(6, "cc" * 32, True), (9, "cc" * 32, False)]
    assert hashchain.anchor_slots(bytes(32), good) == [(6, "cc" * 32, False)]  # another key


def test_a_board_mac_covers_the_prefix_and_the_exact_bytes():
    raw = '{"k":"coin","q":1}'
    mac = hmac.new(KEY, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()
    assert hashchain.signed_by_board([bytes(32), KEY], raw, mac)
    assert not hashchain.signed_by_board([bytes(32)], raw, mac)
    assert not hashchain.signed_by_board([KEY], raw + " ", mac)
    assert not hashchain.signed_by_board([KEY], raw, None)
