"""The MicroPython Pico image the emulated board boots: where it is ($PICO_UF2, or where `make
pico-image` puts it), and its download, kept only when its sha256 is the one tested."""
import hashlib
import os

from tablectl import REPO_ROOT
from tablectl.deploy import MICROPYTHON
from tablectl.errors import TablectlError


# The MicroPython release the boards run (tablectl/deploy.py, which compiles the .mpy for it), as
# its Pico build: the sha256 is that file's, so a new release changes both.
UF2_VERSION = MICROPYTHON
UF2_NAME = "RPI_PICO-20241129-v%s.uf2" % UF2_VERSION
UF2_SHA256 = "a41b7dbadfe4f399a10bd344002b365427ad033de993cf372c29c884b33a4cdf"
HOW_TO_GET_IMAGE = ("no MicroPython Pico image: run `make pico-image` (downloads %s and checks its sha256) "
                    "or set PICO_UF2 to its path" % UF2_NAME)

UF2_URL = "https://micropython.org/resources/firmware/" + UF2_NAME
FETCHED = os.path.join(REPO_ROOT, "build", "pico", UF2_NAME)  # where `make pico-image` puts it


def image_path(required=True):
    """The UF2 from $PICO_UF2 (what .ci/run sets), else the one `make pico-image` fetched; None
    (or an error saying how to get it) when there is none."""
    path = os.environ.get("PICO_UF2") or (FETCHED if os.path.exists(FETCHED) else None)
    if not path or not os.path.exists(path):
        if required:
            raise TablectlError(HOW_TO_GET_IMAGE)
        return None
    return path


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_image(dest=FETCHED, url=UF2_URL):
    """`make pico-image`: download the MicroPython Pico build and keep it only if its sha256 is the
    one this project was tested with."""
    import urllib.request
    if os.path.exists(dest) and sha256_of(dest) == UF2_SHA256:
        print("%s is already here (sha256 matches)" % dest)
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".part"
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
            f.write(r.read())
    except OSError as exc:
        raise TablectlError("could not download %s (%s): copy the file from a machine that can and set "
                            "PICO_UF2 to its path" % (url, exc))
    got = sha256_of(tmp)
    if got != UF2_SHA256:
        os.unlink(tmp)
        raise TablectlError("%s has sha256 %s, not %s: not the build this project was tested with"
                            % (url, got, UF2_SHA256))
    os.replace(tmp, dest)
    print("fetched %s (sha256 ok); the Pico tests find it there, or set PICO_UF2=%s" % (dest, dest))
    return dest
