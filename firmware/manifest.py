# The board's file set for a frozen MicroPython build (ports/rp2 or ports/esp32:
# `make BOARD=RPI_PICO FROZEN_MANIFEST=/path/to/firmware/manifest.py`). It names the same files as
# package.json, which `mpremote mip install firmware/package.json`, `tablectl flash` and the virtual
# boards read; tests/firmware/test_deploy_set.py checks that the two agree.
include("$(PORT_DIR)/boards/manifest.py")
module("main.py")
package("table")
package("drivers")
package("boards")
