"""7-segment font and text encoder, shared by the MAX7219 and TM1637 drivers. Pure: no machine.

Segment bits in the common order (bit 0 = a ... bit 6 = g, bit 7 = decimal point):

     aaa
    f   b
     ggg
    e   c
     ddd  .

The letters cover what the meter shows: LOCKED, PROG OFF, FAULT nn, PAY, JAM n, JACKPOT,
SERVICE, plus the rest of the alphabet in its least ambiguous 7-segment form. A character with no
glyph shows blank rather than something that could read as a digit.
"""
from micropython import const

_DP = const(0x80)

DIGITS = b"\x3f\x06\x5b\x4f\x66\x6d\x7d\x07\x7f\x6f"
# A-Z: upper and lower case share a glyph; where the capital cannot be drawn the small letter is
# used (b, c, d, h, n, o, r, t, u). K and M/W are conventional approximations.
LETTERS = (
    b"\x77\x7c\x39\x5e\x79\x71\x3d\x76\x30\x1e"  # A b C d E F G H I J
    b"\x75\x38\x37\x54\x3f\x73\x67\x50\x6d\x78"  # K L M n O P q r S t
    b"\x3e\x3e\x7e\x76\x6e\x5b"  # U V W X Y Z
)
PUNCT = {" ": 0x00, "-": 0x40, "_": 0x08, "=": 0x48, "'": 0x02, '"': 0x22, "?": 0x53,
         "[": 0x39, "]": 0x0F, "o": 0x5C, "c": 0x58, "u": 0x1C, "h": 0x74, "i": 0x10}


def glyph(ch):
    """Segment bits for one character (no decimal point)."""
    if ch in PUNCT:  # lower-case forms that differ from the capitals come first
        return PUNCT[ch]
    o = ord(ch)
    if 48 <= o <= 57:
        return DIGITS[o - 48]
    if 97 <= o <= 122:
        o -= 32
    if 65 <= o <= 90:
        return LETTERS[o - 65]
    return 0


def encode(text, buf):
    """Fill buf (one byte per digit, leftmost first) from text; a '.' lights the decimal point of
    the character before it (or stands alone on a blank digit). Text past the digits is dropped;
    unused digits are blank. Returns buf."""
    n = len(buf)
    i = 0
    for ch in text:
        if ch == ".":
            if i > 0 and not buf[i - 1] & _DP:
                buf[i - 1] |= _DP
                continue
            if i >= n:
                break
            buf[i] = _DP
            i += 1
            continue
        if i >= n:
            break
        buf[i] = glyph(ch)
        i += 1
    while i < n:
        buf[i] = 0
        i += 1
    return buf

