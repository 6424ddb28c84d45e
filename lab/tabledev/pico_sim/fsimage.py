"""The board's filesystem built on the host: the firmware `tablectl flash` would deploy (its files
from tablectl/deploy.py, compiled to .mpy there), as a littlefs image of the Pico's flash region, and
files read and written in such an image."""
import hashlib
import json
import os

from tablectl import FIRMWARE_DIR, HARDWARE_DIR
from tablectl.errors import TablectlError
from tabledev.pico_sim.image import UF2_VERSION


PINMAP = os.path.join(HARDWARE_DIR, "pinmap_pico.json")


# --- the filesystem image, built on the host -----------------------------------------------------
def deploy_files(source=FIRMWARE_DIR, pinmap=PINMAP, mpy=True, work_dir=None):
    """The file set `tablectl flash --source` copies to a Pico (main.py, the packages, the pin map
    as pinmap.json), and its manifest (name -> sha256). mpy: the packages compiled to .mpy."""
    from tablectl.commands.flash import build_manifest, firmware_files
    from tablectl.deploy import compile_tree
    if mpy:
        source = compile_tree("pico", source, work_dir, micropython=UF2_VERSION)
    files = firmware_files(source, pinmap, "pico")
    return files, build_manifest(files)


def build_fs_image(layout, files, manifest, reserve_sectors=None):
    """A littlefs image of the board's filesystem region holding the deployed firmware: what
    `tablectl flash` leaves on a Pico, built here because copying through the emulated USB takes
    minutes. Same parameters as MicroPython's rp2 port (4 KiB blocks, 256-byte programs)."""
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=layout.fs_blocksize * layout.fs_blockcount)
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, disk_version=0x00020000)
    made = set()
    for name, path in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in made:
                lfs.mkdir(d)
                made.add(d)
        with open(path, "rb") as src, lfs.open(name, "wb") as dst:
            dst.write(src.read())
    with lfs.open("manifest.json", "wb") as dst:
        dst.write(json.dumps(manifest, sort_keys=True, indent=0).encode())
    if reserve_sectors:
        _provision_reserve(lfs, ctx, layout, reserve_sectors)
    lfs.unmount()
    return bytes(ctx.buffer)


def _rawflash_module():
    """The board's drivers/rawflash.py (its tag format), loaded from the firmware's file set."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("board_rawflash", os.path.join(FIRMWARE_DIR, "drivers", "rawflash.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _provision_reserve(lfs, ctx, layout, count):
    """What the board's first boot does for a pin map with raw_log_sectors (drivers/rawflash.py
    provision), done on the host image: the emulated core takes minutes of wall time to write
    768 KiB through littlefs. The same files (one 4 KiB block each, the tag in its last slot),
    found by the same tag search, and the same map.json written last."""
    rf = _rawflash_module()
    root = rf.ROOT.lstrip("/")
    for d in (root[:root.rfind("/")], root):
        try:
            lfs.mkdir(d)
        except Exception:  # noqa: littlefs-python raises its own error for an existing folder
            pass
    body = bytearray(b"\xff" * rf.SECTOR_BYTES)
    for i in range(count):
        body[rf.SECTOR_BYTES - rf.SLOT_BYTES:] = rf._tag(i, count)
        with lfs.open("%s/r%03d" % (root, i), "wb") as f:
            f.write(bytes(body))
    buf = bytes(ctx.buffer)
    bs = layout.fs_blocksize
    blocks = [-1] * count
    for blk in range(layout.fs_blockcount):
        tail = buf[blk * bs + bs - rf.SLOT_BYTES:(blk + 1) * bs]
        if tail[:8] == rf.TAG:
            i = tail[8] | (tail[9] << 8)
            if i < count and tail == rf._tag(i, count):
                blocks[i] = blk
    if -1 in blocks:
        raise TablectlError("the raw log reserve's blocks were not all found in the host-built image")
    with lfs.open(root + "/map.json", "w") as f:
        f.write(json.dumps({"blocks": blocks}))


def write_fs_files(layout, image, changes):
    """The littlefs image with files written (name -> bytes) and manifest.json's sha256 of each
    brought up to date: what `tablectl flash` of those files leaves on a board (tests change a
    kept board's pin map with it)."""
    import hashlib
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=len(image))
    ctx.buffer[:] = image
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, mount=True)
    with lfs.open("manifest.json", "rb") as f:
        manifest = json.loads(f.read())
    for name, data in changes.items():
        with lfs.open(name, "wb") as f:
            f.write(data)
        manifest[name] = hashlib.sha256(data).hexdigest()
    with lfs.open("manifest.json", "wb") as f:
        f.write(json.dumps(manifest, sort_keys=True, indent=0).encode())
    lfs.unmount()
    return bytes(ctx.buffer)


def read_fs_files(layout, image):
    """{name: bytes} of every file in a littlefs image (tests read the board's flash with it)."""
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=len(image))
    ctx.buffer[:] = image
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, mount=True)
    out = {}
    for root, _dirs, names in lfs.walk("/"):
        for n in names:
            path = (root.rstrip("/") + "/" + n).lstrip("/")
            with lfs.open(path, "rb") as f:
                out[path] = f.read()
    lfs.unmount()
    return out
