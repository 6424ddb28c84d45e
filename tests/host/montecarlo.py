"""The check the fixed-seed Monte Carlo tests make against an exact value: the sample's mean within
three standard errors of it, from a sample large enough that the bound means something.

Three standard errors alone let any sample pass that is small or noisy enough: its bound grows
until it covers the difference. So each check also says how close it claims to tell the value
(`within`, in the sample's units) and how many rounds that takes at least (`rounds_at_least`), and
fails when the sample cannot: a run made small, or one whose spread grew, fails instead of passing."""


def mean_and_sd(xs):
    n = len(xs)
    mean = sum(xs) / n
    return n, mean, (sum((x - mean) ** 2 for x in xs) / (n - 1)) ** 0.5


def agrees(n, mean, sd, exact, *, within, rounds_at_least):
    """n rounds of mean `mean` and standard deviation `sd` agree with `exact`: the sample is at least
    rounds_at_least rounds, three standard errors are at most `within`, and the mean is inside them."""
    bound = 3 * sd / n ** 0.5
    assert n >= rounds_at_least, ("too few rounds for the check", n, rounds_at_least)
    assert bound <= within, ("three standard errors are wider than the check claims", bound, within)
    assert abs(mean - float(exact)) < bound, ("outside three standard errors", mean, float(exact), bound)


def sample_agrees(xs, exact, *, within, rounds_at_least):
    n, mean, sd = mean_and_sd(xs)
    agrees(n, mean, sd, exact, within=within, rounds_at_least=rounds_at_least)
