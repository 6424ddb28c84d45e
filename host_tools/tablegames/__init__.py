"""Game math: cards and hand evaluation (poker), the rules of each game and its settlement (games),
pay tables as data (paytables/*.json, the one source), exact PAR sheets (par) and the progressive
schedule (progressive). Pure CPython; numpy and the C cores are imported only by what needs them."""
