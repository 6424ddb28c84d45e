# Sourced by .ci/run and .ci/scheduled: what both runs take from the machine's shared copies.
# The emulated-Pico tests (tests/pico/, in `make test-slow`) run when PICO_UF2 names the MicroPython
# image: CI takes the copy in ../shared/pico/ when it is there (without it they skip with one line
# saying how to get it).
UF2=RPI_PICO-20241129-v1.24.1.uf2
if [ -z "${PICO_UF2:-}" ] && [ -f "../shared/pico/$UF2" ]; then
  export PICO_UF2="$(cd ../shared/pico && pwd)/$UF2"
fi
# micropython-lib is taken from a path, never copied in (tests/firmware/test_micropython_lib.py).
if [ -z "${MICROPYTHON_LIB:-}" ] && [ -d ../shared/micropython-lib ]; then
  export MICROPYTHON_LIB="$(cd ../shared/micropython-lib && pwd)"
fi
