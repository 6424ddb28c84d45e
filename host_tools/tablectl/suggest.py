""""Did you mean": the nearest known word to a mistyped one, as git and pip say it."""
import difflib


def did_you_mean(word, known):
    """"; did you mean `status`?" or "" when nothing is close enough to be a likely typo."""
    close = difflib.get_close_matches(str(word), list(known), n=1, cutoff=0.6)
    return "; did you mean %s?" % close[0] if close else ""
