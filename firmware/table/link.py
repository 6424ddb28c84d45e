"""The board's end of the link to the host: frames in (the trust rule, hello, acknowledgements,
commands handed to table/commands.py), the outbox out (a window of unacknowledged events, resent
with a doubling back-off), replies (cached, so a repeated command gets its first reply and does
nothing twice), and the rate limit on journaling refusals.

It holds no money: every change it causes goes through the app's journal (`app.record`).
"""
import json

from table import commands
from table import protocol as proto
from table import vocab

try:
    from micropython import const
except ImportError:  # CPython (the host's tests run this module too)
    def const(value):
        return value

# Unacknowledged events on the wire at once; the host acknowledges in batches.
_SEND_WINDOW = const(64)
# Events sent per main-loop turn, so a long outbox never holds up the next turn: its coin-in, and
# the dealer's keys, which are seen only if a turn starts while one is held. A frame costs
# milliseconds of a Pico's time (read back, rebuilt, signed, COBS; the figure: docs/BENCHMARKS.md,
# `bench_pico.py boot`), so a resend of 16 frames a turn made turns longer than a short key press;
# 4 keep a turn short and still send over 100 frames a second (docs/FIRMWARE.md, "Event frames a
# main-loop turn"; mp_test_link.py fails with 16).
_SEND_PER_TURN = const(4)
_MAX_RESEND_BACKOFF = const(8)
_REPLY_CACHE = const(16)
# Read-only replies are large (a status reply held as a dict costs kilobytes), so only the last
# _READ_REPLY_CACHE are kept, as the encoded payload: a host repeating one because the reply was
# lost gets the first reply, as with any command, at a fraction of the heap. A host repeats only
# its newest commands, so two are enough; each kept payload is at most a frame's payload of heap.
_READ_REPLY_CACHE = const(2)
# Refused frames (bad MAC, replays, wrong state, unknown versions...): the first few in each
# window are journaled one by one, the rest counted and journaled as one event when the window
# ends. A flood of any frame therefore costs at most _REFUSALS_PER_WINDOW + 1 journal records a
# minute: it cannot wear the flash out or fill the outbox.
_REFUSALS_PER_WINDOW = const(4)
_REFUSAL_WINDOW_MS = const(60000)


class HostLink:
    def __init__(self, app, now_ms):
        self.app = app
        self.reader = proto.FrameReader()
        self.replies = {}  # command id -> (command, reply message), for idempotent repeats
        self.reply_order = []
        self.read_replies = []  # (id, command, encoded reply payload) of the last read-only commands
        self.session = None
        self.host_counter = -1  # the last counter taken from the host in this session
        self.sent_counter = 0   # the last counter this board put on a frame in this session
        self.last_host_ms = now_ms
        self.send_seq = 1
        self.last_ack_progress_ms = now_ms  # the resend wait runs from here (see write())
        self.resend_backoff = 1
        self.last_heartbeat_ms = 0
        self.frames_refused = 0
        self.frames_stale = 0  # the host's own frames sealed before this boot (see _stale)
        self.refusal_window_ms = now_ms
        self.refusals_in_window = 0
        self.refusals_held = {}  # error code -> refusals counted, not yet journaled

    def restart_delivery(self):
        """Delivery goes again from the first event the host has not acknowledged."""
        journal = self.app.journal
        self.send_seq = journal.acked_seq + 1 if journal is not None else 1
        self.resend_backoff = 1

    # ------------------------------------------------------------------ in
    def read(self, now_ms):
        data = self.app.board.link_read()
        if not data:
            return
        for frame in self.reader.feed(data):
            try:
                self.handle_frame(now_ms, frame)
            except Exception as exc:  # noqa: a frame we cannot handle must not reset the board
                # (the host would resend it and reset it again); log it and go on, within the
                # refusal limit: the same breaking frame sent again and again must not fill the flash.
                self.frames_refused += 1
                self.note_refusal(now_ms, "frame_error", {"t": str(frame.message.get("t")), "error": repr(exc)[:120]},
                                  "frame_error")

    def handle_frame(self, now_ms, frame):
        app = self.app
        msg = frame.message
        kind = msg.get("t")
        if frame.version != proto.VERSION and kind != proto.HELLO:
            # Only hello may come in another version's frame (that is how versions are agreed);
            # anything else in one could mean something else: not acted on. A command is told.
            if kind == proto.COMMAND:
                self.refuse(now_ms, msg.get("id"), msg.get("c"), proto.E_VERSION,
                            "frame version %d; this board speaks %d" % (frame.version, proto.VERSION))
            else:
                self.frames_refused += 1
            return
        if kind == proto.HELLO:
            self.hello(now_ms, msg)
            return
        if kind in (proto.EVENT, proto.REPLY):
            self.frames_refused += 1  # the board's own kinds: nothing a host sends
            return
        if (app.key is not None or app.key_lost) and not (kind == proto.COMMAND and msg.get("c") == vocab.PROVISION):
            # The trust rule, incoming: signed, this session, a counter above the last one taken.
            # Anything else changes nothing, releases nothing and does not count as the host.
            # A keyed board whose key is lost (keystore.py) takes nothing but a provision.
            if app.key is None:
                code, detail = proto.E_NO_KEY, "key lost: provision a key"
            else:
                code, detail = proto.check_sealed(frame, app.key, self.session, self.host_counter)
            if code is not None:
                if self._stale(code, msg):
                    # Not acted on, as any refusal; but not an attack either, so neither journaled
                    # nor counted as refused. A command is answered (unremembered) all the same.
                    self.frames_stale += 1
                    if kind == proto.COMMAND:
                        self.send(proto.reply_error(msg.get("id") if isinstance(msg.get("id"), int) else -1,
                                                    code, detail))
                    return
                if kind == proto.COMMAND:
                    self.refuse(now_ms, msg.get("id"), msg.get("c"), code, detail)
                else:
                    self.frames_refused += 1
                    self.note_refusal(now_ms, code, {"frame": str(kind)[:8], "err": code, "msg": detail[:60]})
                return
            self.host_counter = detail
        elif kind not in (proto.ACK, proto.HEARTBEAT, proto.COMMAND):
            self.frames_refused += 1
            return
        self.last_host_ms = now_ms
        app.host_heard(now_ms)
        if kind == proto.ACK:
            seq = msg.get("q")
            journal = app.journal
            if isinstance(seq, int) and journal is not None:
                if journal.ack(seq):
                    self.last_ack_progress_ms = now_ms
                    self.resend_backoff = 1
                if self.send_seq <= journal.acked_seq or msg.get("gap"):
                    # gap: the host lost a frame past seq; go again from there at once
                    self.send_seq = journal.acked_seq + 1
        elif kind == proto.COMMAND:
            commands.handle(app, now_ms, frame)

    def _stale(self, code, msg):
        """A frame the host sealed (its MAC is right: check_sealed tests that first) in a session
        of an earlier boot, arriving before the host has said anything in this one: the host's
        heartbeats and acks in flight when the board restarted, sent until its hello learns the
        new session. Once the host speaks in this session, an old session's frame is a replay."""
        if code != proto.E_REPLAY or self.host_counter >= 0:
            return False
        session = msg.get(proto.SESSION)
        if not isinstance(session, str):
            return False
        boots = session.split(".")[0]
        return boots.isdigit() and int(boots) < self.app.state["boots"]

    def hello(self, now_ms, msg):
        """Unauthenticated by design (it is how a host finds the session), so it changes nothing
        but where delivery restarts: a (re)connected host gets everything not acknowledged."""
        app = self.app
        version = proto.choose_version(msg.get("v") or ())
        self.send(proto.hello(app.board.board_id, vocab.FIRMWARE_VERSION, app.state["boots"], "board",
                              self.session, self.host_counter,
                              app.journal.acked_seq if app.journal is not None else None))
        if version is None:
            self.note_refusal(now_ms, proto.E_VERSION, {"offered": str(msg.get("v"))[:40],
                                                        "err": proto.E_VERSION}, "version_mismatch")
        if app.journal is not None:
            self.restart_delivery()

    # ------------------------------------------------------------------ out
    def seal(self, message):
        """The trust rule, outgoing: a provisioned board signs every frame it sends."""
        key = self.app.key
        if key is None:
            return proto.encode_frame(message)
        self.sent_counter += 1
        return proto.sealed_frame(message, key, self.session, self.sent_counter)

    def send(self, message):
        try:
            frame = self.seal(message)
        except proto.FrameError:
            # A reply too long for one frame (e.g. checksums of every file): say so instead.
            frame = self.seal(proto.reply_error(message.get("id", -1), proto.E_BAD_ARGS,
                                                "reply too long for one frame: ask for less"))
        self.app.board.link_write(frame)

    def write(self, now_ms):
        """The outbox: events not yet acknowledged, in order, within the window; a heartbeat.
        (First, the refusal window is closed when it has run out.)"""
        if self.refusals_held and now_ms - self.refusal_window_ms >= _REFUSAL_WINDOW_MS:
            self.flush_refusals(now_ms)
            self.refusal_window_ms = now_ms
        app = self.app
        journal = app.journal
        if journal is None:
            return
        cfg = app.cfg
        if journal.unacked_count() and now_ms - self.last_ack_progress_ms >= cfg["resend_ms"] * self.resend_backoff \
                and self.send_seq > journal.acked_seq + 1:
            self.send_seq = journal.acked_seq + 1  # nothing acknowledged lately: go again
            # Each fruitless resend waits twice as long (up to 8x): a slow or queued link is not
            # flooded with copies of the window it is still carrying.
            self.resend_backoff = min(self.resend_backoff * 2, _MAX_RESEND_BACKOFF)
        sent = 0
        while self.send_seq < journal.next_seq and sent < _SEND_PER_TURN:
            index = journal.index_at_or_after(self.send_seq)
            if index >= len(journal.unacked) or index >= _SEND_WINDOW:
                if index >= len(journal.unacked):
                    self.send_seq = journal.next_seq
                break
            app.board.link_write(proto.frame_from_payload(journal.read_payload(index), app.key))
            if index == 0:
                # The oldest outstanding event went out (first time, resend, hello or gap): the wait
                # for its acknowledgement starts now, not at the last ack before a quiet spell.
                self.last_ack_progress_ms = now_ms
            self.send_seq = journal.unacked.seq(index) + 1
            sent += 1
        if now_ms - self.last_heartbeat_ms >= cfg["heartbeat_ms"]:
            self.last_heartbeat_ms = now_ms
            self.send(proto.heartbeat(journal.next_seq - 1))

    # ------------------------------------------------------------------ replies
    def cached_reply(self, cid, name):
        """The first reply to command `cid`, if it was `name` and is still remembered; else None."""
        cached = self.replies.get(cid)
        if cached is not None and cached[0] == name:
            return cached[1]
        for read_id, read_name, payload in self.read_replies:
            if read_id == cid and read_name == name:
                return json.loads(payload)
        return None

    def remember(self, cid, name, reply):
        if name in vocab.READ_COMMANDS:
            try:
                # Kept as the payload bytes: a repeat is signed afresh (new counter), and a payload
                # costs a fraction of the heap of the dict.
                payload = proto.encode_payload(reply)
                if len(payload) + 2 + proto.MAC_BYTES + 40 > proto.MAX_BODY_BYTES:
                    return  # too long to send; send() answers with an error instead
            except (TypeError, ValueError):
                return
            self.read_replies.append((cid, name, payload))
            if len(self.read_replies) > _READ_REPLY_CACHE:
                self.read_replies.pop(0)
            return
        self.replies[cid] = (name, reply)
        self.reply_order.append(cid)
        if len(self.reply_order) > _REPLY_CACHE:
            self.replies.pop(self.reply_order.pop(0), None)

    def refuse(self, now_ms, cid, name, code, text):
        self.frames_refused += 1
        # Refusals worth a journal record (the host's ledger keeps them); others are only answered.
        if code in (proto.E_BAD_MAC, proto.E_REPLAY, proto.E_STATE, proto.E_NEEDS_SERVICE_SWITCH,
                    proto.E_NO_KEY, proto.E_PAID, proto.E_NOT_ELIGIBLE):
            self.note_refusal(now_ms, code, {"id": cid if isinstance(cid, int) else None,
                                             "c": str(name)[:16], "err": code, "msg": text[:80]})
        reply = proto.reply_error(cid if isinstance(cid, int) else -1, code, text)
        # A refusal of an unauthenticated or replayed frame is never remembered: the reply cache
        # holds only what an authentic host asked for.
        if isinstance(cid, int) and code not in (proto.E_BAD_MAC, proto.E_REPLAY, proto.E_VERSION):
            self.remember(cid, name, reply)
        self.send(reply)

    # ------------------------------------------------------------------ refusals, rate-limited
    def note_refusal(self, now_ms, code, fields, kind="cmd_refused"):
        """Journal a refusal, within the rate limit (see _REFUSALS_PER_WINDOW)."""
        if now_ms - self.refusal_window_ms >= _REFUSAL_WINDOW_MS:
            self.flush_refusals(now_ms)
            self.refusal_window_ms = now_ms
        if self.refusals_in_window < _REFUSALS_PER_WINDOW:
            self.refusals_in_window += 1
            self.app.record(now_ms, kind, fields)
        else:
            self.refusals_held[code] = self.refusals_held.get(code, 0) + 1

    def flush_refusals(self, now_ms):
        self.refusals_in_window = 0
        if self.refusals_held:
            held, self.refusals_held = self.refusals_held, {}
            self.app.record(now_ms, "cmd_refused", {"count": held, "msg": "refusals beyond %d a minute, counted"
                                                    % _REFUSALS_PER_WINDOW})
