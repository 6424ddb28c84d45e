"""C extensions of tablectl (the metadata is in pyproject.toml).

`pip install -e host_tools` builds every entry of EXTENSIONS in place. One entry per
extension: add yours as a new entry, leave the others alone.
"""
from setuptools import Extension, setup

EXTENSIONS = [
    # issue 7, PAR sheets by complete enumeration (tablectl/par/)
    Extension(
        "tablectl.par._kernel",
        ["tablectl/par/_kernel.c"],
        depends=["tablectl/par/_cdraw.c"],  # included by _kernel.c
        extra_compile_args=["-O3", "-fopenmp"],
        extra_link_args=["-fopenmp"],
    ),
    # issue 6, hand evaluation: lookup tables, batch evaluation, exhaustive enumeration
    Extension(
        "tablectl.poker._fastpoker",
        ["tablectl/poker/_fastpoker.c"],
        extra_compile_args=["-O3", "-std=gnu99", "-Wall"],
        extra_link_args=["-lpthread"],
    ),
]

setup(ext_modules=EXTENSIONS)
