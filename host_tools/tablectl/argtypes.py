"""Every number a person types is range-checked as it is read: an argparse type that refuses a
value out of range in one line (`tablectl: bench coin: argument --count: 1 to 10000, not -1`),
before anything is opened or sent."""
import argparse


def ranged(low, high, kind=int, unit=""):
    """An argparse type: a number of `kind` from low to high (None: no bound)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a %s" % (text, "whole number" if kind is int else "number"))
        if value != value or (low is not None and value < low) or (high is not None and value > high):
            if high is None:
                bound = "at least %s" % low
            elif low is None:
                bound = "at most %s" % high
            else:
                bound = "%s to %s" % (low, high)
            raise argparse.ArgumentTypeError("%s%s, not %s" % (bound, unit, text))
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its own messages
    return parse
